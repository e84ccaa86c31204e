package main

import (
	"context"
	"fmt"
	"time"

	"github.com/amt-dev/amt/experiments"
)

// cmdRun runs an experiment configuration; with -shard one shard of its
// seeds, with -merge it assembles the shards' summaries.
func cmdRun(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "run", "-config FILE [-shard K/N | -merge] [-log-decisions]")
	c := newConfigFlags(fs, "experiment configuration (YAML), e.g. experiments/configs/rq1-classification.yaml", assetsHelp)
	c.declareMaxPixels()
	logDecisions := fs.Bool("log-decisions", false, "also write every decision (image, follow-up, its probability, cost, context) to <agent>/decisions-seed-<n>.jsonl, the log format of amt ope")
	c.declareShard("run only shard K of N of the seeds (0 ≤ K < N: the seeds at positions j mod N = K of the config's list), every agent, for one task of a cluster array job; replay mode needs the merged sweep",
		"assemble the agents' summaries from the shards' results, running nothing; fails naming the missing shards")
	if err := c.parse(args); err != nil {
		return err
	}
	if c.sharded() && c.merge {
		return usagef("run: -shard and -merge exclude each other")
	}
	exp, err := c.prepare(ctx, stderrLog(env, "run"))
	if err != nil {
		return err
	}
	cfg := exp.Config
	exp.LogDecisions = *logDecisions
	switch {
	case c.sharded():
		start := time.Now()
		p := experiments.NewProgress(env.stderr)
		st, err := exp.RunShard(ctx, c.shard, env.stderr, p.Report)
		p.Done()
		if err != nil {
			return err
		}
		c.shardDone(env.stdout, cfg.Name, st, "seed", "run", start)
		return nil
	case c.merge:
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
