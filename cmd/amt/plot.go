package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/plots"
)

// cmdPlot redraws an experiment's figures, tables and report.md from the
// result files in its folder.
func cmdPlot(ctx context.Context, env *cliEnv, args []string) error {
	flags := newFlagSet(env, "plot", "(-config FILE | -dir results/<experiment>) [-primary AGENT]")
	c := newConfigFlags(flags, "experiment `config` (YAML); its results folder is the config's output (default results/<name>)",
		"assets `folder` for the config's relative paths (default: $AMT_ASSETS or the shared assets)")
	dir := flags.String("dir", "", "results `folder` of one experiment (overrides the config's output)")
	primary := flags.String("primary", "", "`agent` drawn against the exhaustive baseline (default: cover, else the first agent that is not random)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return usagef("plot: unexpected arguments %q", flags.Args())
	}
	if c.config == "" && *dir == "" {
		return showUsagef(flags, "plot: give -config FILE or -dir results/<experiment>")
	}
	out := *dir
	if c.config != "" {
		cfg, err := c.load()
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		if out == "" {
			out = cfg.Output
		}
	}
	e, err := plots.Load(out)
	if errors.Is(err, fs.ErrNotExist) && c.config != "" {
		return fmt.Errorf("plot: %w (run \"amt run -config %s\" first)", err, c.config)
	}
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if c.config != "" && e.Config != nil {
		if now, err := limits.ReadFile(c.config, limits.JSONBytes); err == nil && !bytes.Equal(now, e.Config) {
			fmt.Fprintf(env.stderr, "plot: note: %s has changed since the results were made; the report describes their snapshot %s (run amt run -config %s for results of the new one)\n",
				c.config, filepath.Join(out, record.ConfigFile), c.config)
		}
	}
	res, err := plots.Render(ctx, e, plots.Options{Primary: *primary})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err = fmt.Fprintf(env.stdout, "%s: wrote %s/%s, %d figure files, %d table files\n", e.Name, out, res.Report, len(res.Figures), len(res.Tables))
	return err
}
