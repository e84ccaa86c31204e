package experiments

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
)

// Run runs every agent of the experiment over every seed (online or
// replay, as configured) and writes Output/<agent id>/{summary.json,
// seed-<n>.jsonl, timing.json} and Output/config.yaml (a copy of the
// configuration). In replay mode it first computes or loads the sweep.
// Messages go to log; progress (may be nil) gets the sweep's progress and
// each agent's (stage "<agent id>": iterations over all seeds).
//
// The results folder changes only when every agent is done: the run
// files (run.json, config.yaml, the sweep's tables), the agents' folders,
// their states and galleries are written then, one after the other, so
// that an interrupted run leaves the previous results as they were,
// still plottable, and every state as it was.
func (e *Experiment) Run(ctx context.Context, log io.Writer, progress ProgressFunc) error {
	cfg := e.Config
	if cfg.Tuning() {
		return cfg.errAt("tune", "this experiment tunes its agents first: run amt tune -config %s", cfg.File)
	}
	if e.upToDate() {
		fmt.Fprintf(log, "%s: the results in %s are up to date (same configuration, inputs, seeds and amt build): nothing to run; delete %s to run again\n",
			cfg.Name, cfg.Output, filepath.Join(cfg.Output, record.MetaFile))
		return nil
	}
	env, publish, err := e.runEnv(ctx, progress)
	if err != nil {
		return err
	}
	// finish publishes the run files into the results folder, the last
	// step before the agents' results go in.
	finish := func() error {
		if err := e.removeStaleFiles(); err != nil {
			return err
		}
		if err := publish(); err != nil {
			return err
		}
		return e.removeStaleAgents(log)
	}
	if a := e.after; a != nil {
		var after Env
		if cfg.Mode == "replay" {
			after, err = e.afterTable.replayEnv(cfg.Scenario, cfg.Features.sut())
		} else {
			after, err = a.study.newEnv(a.src.Len(), a.newExt, a.Config.Features.sut(), a.relations, cfg.Scenario)
		}
		if err != nil {
			return err
		}
		return e.runRegression(ctx, env, after, log, progress, finish)
	}
	var commits staged
	defer commits.cleanup()
	type gallery struct {
		agent string
		log   *violationLog
	}
	var galleries []gallery
	for i, a := range cfg.Agents {
		fmt.Fprintf(log, "%s: agent %s (%s), %s, %s mode\n", cfg.Name, a.ID, a.Name, plural.Count(len(cfg.Seeds), "seed"), cfg.Mode)
		newAgent, o := e.seedsSetup(a, env, log)
		if progress != nil {
			total, done := e.iterations(env)*len(cfg.Seeds), 0
			stage := Stage{Name: "agent " + a.ID, Unit: "iteration"}
			progress(stage, 0, total)
			o.Trace = func(uint64, Step) { done++; progress(stage, done, total) }
		}
		vlog := e.galleryLog(i, &o)
		o.stage = &commits
		sum, err := RunSeeds(ctx, env, cfg.Scenario, newAgent, filepath.Join(cfg.Output, a.ID), o)
		if err != nil {
			return err
		}
		galleries = append(galleries, gallery{a.ID, vlog})
		e.logSummary(log, a, sum)
	}
	if err := finish(); err != nil {
		return err
	}
	if err := commits.commit(); err != nil {
		return err
	}
	for _, g := range galleries {
		if err := e.drawRunGallery(ctx, g.agent, g.log); err != nil {
			return err
		}
	}
	return e.writeRunStamp()
}

// runEnv returns the Env of the experiment's agent runs and the function
// that writes the run files into the results folder: in replay mode the
// sweep's table and its publish step (sweepTables), in online mode the
// case study's SUT and run.json and config.yaml, keeping a sweep.csv that
// an earlier amt sweep of the same experiment wrote (keepVerdicts).
func (e *Experiment) runEnv(ctx context.Context, progress ProgressFunc) (Env, func() error, error) {
	if e.Config.Mode == "online" {
		env, err := e.onlineEnv()
		return env, func() error {
			sum, err := e.keepVerdicts()
			if err != nil {
				return err
			}
			return e.writeRunFiles(sum)
		}, err
	}
	t, publish, err := e.sweepTables(ctx, progress, false)
	if err != nil {
		return nil, nil, err
	}
	env, err := t.replayEnv(e.Config.Scenario, e.Config.Features.sut())
	return env, publish, err
}

// shardEnv returns the Env of one shard of the agents' runs (RunShard):
// in replay mode the sweep's table assembled from the cache alone, as
// MergeSweep does, without writing result files; in online mode the case
// study's SUT.
func (e *Experiment) shardEnv(ctx context.Context) (Env, error) {
	cfg := e.Config
	if cfg.Mode == "online" {
		return e.onlineEnv()
	}
	setup := e.sweepSetup(nil)
	setup.mergeOnly, setup.readOnly = true, true
	t, err := sweep(ctx, setup)
	if err != nil {
		return nil, fmt.Errorf("replay mode: the agents' shards read the whole sweep from the cache (merge it first): %w", err)
	}
	return t.replayEnv(cfg.Scenario, cfg.Features.sut())
}

// onlineEnv returns the Env of online runs: the case study's SUT.
func (e *Experiment) onlineEnv() (Env, error) {
	cfg := e.Config
	return e.study.newEnv(e.src.Len(), e.newExt, cfg.Features.sut(), e.relations, cfg.Scenario)
}

// iterations returns the iterations of one run in env.
func (e *Experiment) iterations(env Env) int {
	if e.Config.Iterations > 0 {
		return e.Config.Iterations
	}
	return e.Config.Passes * env.Len()
}

// seedsSetup returns how agent a runs over the seeds in env: the maker of
// its agent for a seed (loading its saved state when the configuration
// keeps state) and RunSeeds's options, without a trace.
func (e *Experiment) seedsSetup(a AgentSpec, env Env, log io.Writer) (func(seed uint64) (Agent, error), SeedsOptions) {
	cfg := e.Config
	sc := cfg.Scenario
	stateDir := ""
	if cfg.State != "" {
		stateDir = filepath.Join(cfg.State, a.ID)
	}
	newAgent := func(seed uint64) (Agent, error) {
		var ag Agent
		var err error
		if stateDir == "" {
			ag, err = NewAgent(a, sc, env.Layout(), seed)
		} else {
			var loaded bool
			ag, loaded, err = loadOrNewAgent(statePath(stateDir, seed), a, sc, env.Layout(), seed)
			if loaded {
				fmt.Fprintf(log, "%s: agent %s, seed %d: continuing from %s\n", cfg.Name, a.ID, seed, statePath(stateDir, seed))
			}
		}
		if err != nil {
			return nil, err
		}
		// A corruption report's audit sample (0 elsewhere: the agent itself).
		return withAudit(ag, sc, cfg.Corruption.Audit, seed), nil
	}
	return newAgent, SeedsOptions{
		Agent: a.ID, Mode: cfg.Mode, Seeds: cfg.Seeds, Passes: cfg.Passes, Iter: cfg.Iterations,
		Interval: cfg.LogInterval, Timing: cfg.Timing, StateDir: stateDir, Identity: e.id, LogDecisions: e.LogDecisions,
		ParamErrors: cfg.CorruptionReport(),
	}
}

// logSummary writes an agent's final line: its violations over all seeds.
func (e *Experiment) logSummary(log io.Writer, a AgentSpec, sum record.Summary) {
	var it, viol int
	for _, r := range sum.Runs {
		it += r.Iterations
		viol += r.Violations
	}
	fmt.Fprintf(log, "%s: agent %s: %s in %s (%.2f%%)\n", e.Config.Name, a.ID, plural.Count(viol, "violation"), plural.Count(it, "iteration"), 100*float64(viol)/float64(max(it, 1)))
}
