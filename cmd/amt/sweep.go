package main

import (
	"context"
	"fmt"
	"time"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/experiments/record"
)

// cmdSweep computes (or loads from the cache) an experiment's exhaustive
// verdict table and exports it.
func cmdSweep(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "sweep", "-config FILE [-csv OUT.csv] [-features OUT.f32]")
	config := fs.String("config", "", "experiment configuration (YAML)")
	assets := fs.String("assets", "", "assets folder for relative paths (default: $AMT_ASSETS or the shared assets)")
	csvOut := fs.String("csv", "", "also export the table as CSV here (classification: image,mr,param,pred_original,pred_transformed,violation,label; detection: image_id,mr,param,map_original,map_transformed,violation with the COCO image id)")
	featOut := fs.String("features", "", "export every image's context features as raw float32 [images, dim] here")
	workers := fs.Int("workers", -1, "concurrent workers (default: the config's workers, else all cores)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *config == "" || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("sweep: want -config FILE and no arguments")
	}
	cfg, err := experiments.LoadConfig(*config, *assets)
	if err != nil {
		return err
	}
	if *workers >= 0 {
		cfg.Workers = *workers
	}
	exp, err := experiments.Prepare(ctx, cfg)
	if err != nil {
		return err
	}
	p := experiments.NewProgress(env.stderr, "sweep "+cfg.Name)
	start := time.Now()
	t, err := exp.Sweep(ctx, p.Report)
	p.Done()
	if err != nil {
		return err
	}
	rows, err := t.Verdicts(cfg.Scenario.Variants())
	if err != nil {
		return err
	}
	if *csvOut != "" {
		if err := t.WriteCSV(*csvOut, cfg.Scenario.Variants()); err != nil {
			return err
		}
	}
	if *featOut != "" {
		if err := record.WriteFileAtomic(*featOut, experiments.EncodeFeatures(t.Features)); err != nil {
			return err
		}
	}
	viol := 0
	for _, r := range rows {
		if r.Violation {
			viol++
		}
	}
	fmt.Fprintf(env.stdout, "%s: %d images × %d follow-ups, %d violations (%.2f%%), features %d-d; table in %s/sweep.csv (%s)\n",
		cfg.Name, t.Images, len(cfg.Scenario.Variants()), viol, 100*float64(viol)/float64(max(len(rows), 1)), t.Dim, cfg.Output,
		time.Since(start).Round(time.Second))
	return nil
}
