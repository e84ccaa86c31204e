package main

import (
	"context"
	"fmt"
	"time"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/internal/plural"
)

// cmdRun runs an experiment configuration; with -shard one shard of its
// seeds, with -merge it assembles the shards' summaries.
func cmdRun(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "run", "-config FILE [-shard K/N | -merge] [-log-decisions]")
	c := newConfigFlags(fs, "experiment configuration (YAML), e.g. experiments/configs/rq1-classification.yaml", assetsHelp)
	c.declareMaxPixels()
	logDecisions := fs.Bool("log-decisions", false, "also write every decision (image, follow-up, its probability, cost, context) to <agent>/decisions-seed-<n>.jsonl, the log format of amt ope")
	shardFlag := fs.String("shard", "", "run only shard K of N of the seeds (0 ≤ K < N: the seeds at positions j mod N = K of the config's list), every agent, for one task of a cluster array job; replay mode needs the merged sweep")
	merge := fs.Bool("merge", false, "assemble the agents' summaries from the shards' results, running nothing; fails naming the missing shards")
	if err := c.parse(args); err != nil {
		return err
	}
	var shard experiments.Shard
	if *shardFlag != "" {
		var err error
		if shard, err = experiments.ParseShard(*shardFlag); err != nil {
			return usagef("run: -shard: %w", err)
		}
		if *merge {
			return usagef("run: -shard and -merge exclude each other")
		}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	cfg.Logf = stderrLog(env, "run")
	exp, err := experiments.Prepare(ctx, cfg)
	if err != nil {
		return err
	}
	exp.LogDecisions = *logDecisions
	switch {
	case *shardFlag != "":
		start := time.Now()
		p := experiments.NewProgress(env.stderr)
		st, err := exp.RunShard(ctx, shard, env.stderr, p.Report)
		p.Done()
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "%s: run shard %s: %s (%d cached, %d run) in %s; when every shard is done: amt run -config %s -merge\n",
			cfg.Name, shard, plural.Count(st.Items, "seed"), st.Cached, st.Computed, time.Since(start).Round(time.Millisecond), c.config)
		return nil
	case *merge:
		err = exp.MergeRuns(ctx, env.stderr)
	default:
		exp.NoteSkipped(env.stderr)
		if cfg.Mode == "online" {
			if err := exp.WarnConvention(ctx, env.stderr); err != nil {
				return err
			}
		}
		p := experiments.NewProgress(env.stderr)
		err = exp.Run(ctx, env.stderr, p.Report)
		p.Done()
	}
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
	case cfg.Data.Format != "coco" && cfg.Data.Format != "folder":
		return fmt.Errorf("-max-pixels: %s images have one size, read from the file; the budget applies to coco and folder data sets", cfg.Data.Format)
	}
	cfg.Data.MaxPixels = n
	return nil
}
