package main

import (
	"context"
	"fmt"

	"github.com/amt-dev/amt/experiments"
)

// cmdTune tunes an experiment's agents on its tuning seeds, then runs them
// with the chosen options on its evaluation seeds.
func cmdTune(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "tune", "-config FILE")
	c := newConfigFlags(fs, "experiment configuration (YAML) with a tune section, e.g. experiments/configs/compare-tuned.yaml", assetsHelp)
	if err := c.parse(args); err != nil {
		return err
	}
	exp, err := c.prepare(ctx, nil)
	if err != nil {
		return err
	}
	p := experiments.NewProgress(env.stderr)
	err = exp.Tune(ctx, env.stderr, p.Report)
	p.Done()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s: tuning and evaluation results in %s\n", exp.Config.Name, exp.Config.Output)
	return nil
}
