package main

import (
	"context"
	"fmt"

	"github.com/amt-dev/amt/experiments"
)

// cmdRun runs an experiment configuration.
func cmdRun(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "run", "-config FILE [-log-decisions]")
	config := fs.String("config", "", "experiment configuration (YAML), e.g. experiments/rq1-classification.yaml")
	assets := fs.String("assets", "", "assets folder for relative paths (default: $AMT_ASSETS or the shared assets)")
	maxPixels := fs.Int("max-pixels", 0, "the image budget in pixels, overriding the config's data.max_pixels (0: the config's)")
	logDecisions := fs.Bool("log-decisions", false, "also write every decision (image, follow-up, its probability, cost, context) to <agent>/decisions-seed-<n>.jsonl, the log format of amt ope")
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
	if err := setMaxPixels(cfg, *maxPixels); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	exp, err := experiments.Prepare(ctx, cfg)
	if err != nil {
		return err
	}
	exp.LogDecisions = *logDecisions
	p := experiments.NewProgress(env.stderr)
	err = exp.Run(ctx, env.stderr, p.Report)
	p.Done()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s: results in %s\n", cfg.Name, cfg.Output)
	return nil
}

// setMaxPixels applies a -max-pixels flag (0: not given) to cfg.
func setMaxPixels(cfg *experiments.Config, n int) error {
	switch {
	case n == 0:
		return nil
	case n < 0:
		return fmt.Errorf("-max-pixels %d: want at least 1", n)
	case cfg.Data.Format == "cifar10":
		return fmt.Errorf("-max-pixels: CIFAR-10 images are 32×32; the budget applies to coco and folder data sets")
	}
	cfg.Data.MaxPixels = n
	return nil
}
