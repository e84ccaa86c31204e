package main

import (
	"context"
	"fmt"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/plots"
)

// cmdSuite runs an agent benchmark (experiments/configs/suite.yaml): every
// system under test's exhaustive table (cached sweeps), every agent ×
// seed on every environment (cached runs), then the comparison report.
// With -dir it only redraws the report of a suite's results folder.
func cmdSuite(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "suite", "-config FILE [-workers N] | -dir DIR")
	c := newConfigFlags(fs, "suite configuration (YAML), e.g. experiments/configs/suite.yaml", assetsHelp)
	dir := fs.String("dir", "", "redraw the report of this suite results folder (its suite.json) and run nothing")
	c.declareWorkers("agent runs at a time (default: the configuration's workers, 0 = the cores)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (c.config == "") == (*dir == "") || fs.NArg() > 0 {
		return showUsagef(fs, "suite: want -config FILE or -dir DIR, and no arguments")
	}
	out := *dir
	if c.config != "" {
		cfg, err := experiments.LoadSuite(c.config, c.assets)
		if err != nil {
			return err
		}
		if err := c.applyWorkers(&cfg.Workers); err != nil {
			return err
		}
		p := experiments.NewProgress(env.stderr)
		_, err = experiments.RunSuite(ctx, cfg, env.stderr, p.Report)
		p.Done()
		if err != nil {
			return err
		}
		out = cfg.Output
	}
	_, claims, err := plots.RenderSuite(out)
	if err != nil {
		return err
	}
	if claims.Agent != "" {
		fmt.Fprintf(env.stdout, "%s: mean normalised score %.3f, top group %v, worse than random on %d environments, loss-free on %.1f%%, beats the best variant on %d of %d fault environments\n",
			claims.Agent, claims.MeanNorm, claims.TopGroup, claims.WorseThanRef, 100*claims.LossFree, claims.FaultBeatsBest, claims.FaultEnvs)
	}
	fmt.Fprintf(env.stdout, "suite report in %s\n", out)
	return nil
}
