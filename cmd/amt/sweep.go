package main

import (
	"context"
	"fmt"
	"time"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
)

// cmdSweep computes (or loads from the cache) an experiment's exhaustive
// verdict table and exports it; with -shard it computes one shard of it,
// with -merge it assembles the shards' table.
func cmdSweep(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "sweep", "-config FILE [-shard K/N | -merge] [-csv OUT.csv] [-features OUT.f32] [-sut-features OUT.f32]")
	c := newConfigFlags(fs, "experiment configuration (YAML)", assetsHelp)
	c.declareMaxPixels()
	csvOut := fs.String("csv", "", "also export the table as CSV here (classification: image,mr,param,pred_original,pred_transformed,violation,label; detection: image_id,mr,param,map_original,map_transformed,violation with the COCO image id)")
	featOut := fs.String("features", "", "export every image's context features (the feature model's, phash or none) as raw float32 [images, dim] here")
	sutOut := fs.String("sut-features", "", "export every image's grey-box block (features.kind sut: what the SUT answered on the source image) as raw float32 [images, dim] here")
	c.declareWorkers("concurrent workers (default: the config's workers, else all cores)")
	c.declareShard("compute only shard K of N (0 ≤ K < N: the images i with i mod N = K) into the cache, for one task of a cluster array job; no result files",
		"assemble the table from the shards' files in the cache, computing nothing; fails naming the missing shards")
	if err := c.parse(args); err != nil {
		return err
	}
	if c.sharded() && (c.merge || *csvOut != "" || *featOut != "" || *sutOut != "") {
		return usagef("sweep: -shard computes one shard into the cache and exports nothing: it takes no -merge, -csv, -features or -sut-features (merge, then export)")
	}
	exp, err := c.prepare(ctx, stderrLog(env, "sweep"))
	if err != nil {
		return err
	}
	cfg := exp.Config
	exp.SutFeatures = *sutOut != ""
	start := time.Now()
	if c.sharded() {
		p := experiments.NewProgress(env.stderr)
		st, err := exp.SweepShard(ctx, c.shard, p.Report)
		p.Done()
		if err != nil {
			return err
		}
		c.shardDone(env.stdout, cfg.Name, st, "image", "computed", start)
		return nil
	}
	var t *experiments.Table
	if c.merge {
		t, err = exp.MergeSweep(ctx)
	} else {
		exp.NoteSkipped(env.stderr)
		if err := exp.WarnConvention(ctx, env.stderr); err != nil {
			return err
		}
		p := experiments.NewProgress(env.stderr)
		t, err = exp.Sweep(ctx, p.Report)
		p.Done()
	}
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
		if err := record.WriteFileAtomic(*featOut, record.EncodeFeatures(t.Features)); err != nil {
			return err
		}
	}
	if *sutOut != "" {
		g, _, err := t.SutFeatures()
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		if err := record.WriteFileAtomic(*sutOut, record.EncodeFeatures(g)); err != nil {
			return err
		}
	}
	viol := countViolations(rows)
	fmt.Fprintf(env.stdout, "%s: %s × %s, %s (%.2f%%), features %d-d; table in %s/sweep.csv (%s)\n",
		cfg.Name, plural.Count(t.Images, "image"), plural.Count(len(cfg.Scenario.Variants()), "follow-up"), plural.Count(viol, "violation"), 100*float64(viol)/float64(max(len(rows), 1)), t.Dim, cfg.Output,
		time.Since(start).Round(time.Second))
	if at := exp.AfterTable(); at != nil {
		rows, err := at.Verdicts(cfg.Scenario.Variants())
		if err != nil {
			return err
		}
		viol := countViolations(rows)
		fmt.Fprintf(env.stdout, "%s: SUT after the change: %s (%.2f%%); table in %s/%s\n",
			cfg.Name, plural.Count(viol, "violation"), 100*float64(viol)/float64(max(len(rows), 1)), cfg.Output, record.VerdictsAfterFile)
	}
	return nil
}

// countViolations returns the number of rows that are violations.
func countViolations(rows []record.Verdict) int {
	n := 0
	for _, r := range rows {
		if r.Violation {
			n++
		}
	}
	return n
}
