package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/internal/plural"
)

// cmdConfig prints the configuration reference, or checks configuration
// files.
func cmdConfig(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "config", "-ref | FILE.yaml ...")
	ref := fs.Bool("ref", false, "print the configuration reference (Markdown): every key with its value, default and meaning, every agent's options")
	assets := fs.String("assets", "", assetsHelp)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ref {
		if fs.NArg() > 0 {
			return usagef("config: -ref takes no files, got %q", fs.Args())
		}
		_, err := fmt.Fprint(env.stdout, experiments.ConfigReference())
		return err
	}
	if fs.NArg() == 0 {
		return showUsagef(fs, "config: give -ref, or configuration files to check")
	}
	var errs []error
	for _, f := range fs.Args() {
		if experiments.IsSuite(f) {
			s, err := experiments.LoadSuite(f, *assets)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			fmt.Fprintf(env.stdout, "%s: ok: suite %s, %d systems under test × %d scenarios × %d objectives, %s, %s\n",
				f, s.Name, len(s.SUTs), len(s.Scenarios), len(s.Objectives), plural.Count(len(s.Agents), "agent"), plural.Count(len(s.Seeds), "seed"))
			continue
		}
		c, err := experiments.LoadConfig(f, *assets)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids := make([]string, len(c.Agents))
		for i, a := range c.Agents {
			ids[i] = a.ID
		}
		fmt.Fprintf(env.stdout, "%s: ok: %s, %s %s, scenario %s, agents %s, %s\n",
			f, c.Name, c.CaseStudy, c.Mode, c.Scenario.Name, strings.Join(ids, ", "), plural.Count(len(c.Seeds), "seed"))
	}
	return errors.Join(errs...)
}
