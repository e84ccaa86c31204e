package main

import (
	"context"
	"fmt"

	"github.com/amt-dev/amt/experiments"
)

// cmdRun runs an experiment configuration.
func cmdRun(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "run", "-config FILE")
	config := fs.String("config", "", "experiment configuration (YAML), e.g. experiments/rq1-classification.yaml")
	assets := fs.String("assets", "", "assets folder for relative paths (default: $AMT_ASSETS or the shared assets)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *config == "" || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("run: want -config FILE and no arguments")
	}
	cfg, err := experiments.LoadConfig(*config, *assets)
	if err != nil {
		return err
	}
	exp, err := experiments.Prepare(ctx, cfg)
	if err != nil {
		return err
	}
	p := experiments.NewProgress(env.stderr, "sweep "+cfg.Name)
	err = exp.Run(ctx, env.stderr, p.Report)
	p.Done()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s: results in %s\n", cfg.Name, cfg.Output)
	return nil
}
