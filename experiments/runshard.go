package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/amt-dev/amt/experiments/record"
)

// Agent runs sharded by seed. Shard K of N runs every agent over the seeds
// at positions j ≡ K (mod N) of the configuration's seed list, writes each
// run's progress log into the results folder as an unsharded run does, and
// records each finished seed's summary rows and times as one line of the
// "runs" cache table (sweepcache.go; its key is runKey): a checkpoint line
// per seed while it runs, its shard file when it is done. MergeRuns
// assembles summary.json and timing.json from the shard files, in seed
// order, so they are byte for byte an unsharded run's (with timing off).

// runKey is the key of the experiment's runs table: everything its agent
// runs depend on. The run metadata (run.json) names the case study, the
// mode, the content hashes of the SUT, the feature model and the data, the
// scenario, the agents with their options, the seeds, passes and
// iterations; the rest are the settings it lacks.
func (e *Experiment) runKey() any {
	cfg := e.Config
	return struct {
		Version            int
		Meta               record.Meta
		LogInterval        int
		Timing             bool
		State, Output      string
		Verdicts, Features any
	}{1, e.meta(), cfg.LogInterval, cfg.Timing, cfg.State, cfg.Output, e.verdictKey, e.featureKey}
}

// seedLine is one row of the runs table: every agent's run over one seed.
type seedLine struct {
	// Index is the seed's position in the configuration's seed list.
	Index  int        `json:"index"`
	Seed   uint64     `json:"seed"`
	Agents []agentRun `json:"agents"`
}

// agentRun is one agent's run over one seed: its row of summary.json and
// of timing.json.
type agentRun struct {
	Agent  string           `json:"agent"`
	Run    record.Run       `json:"run"`
	Timing record.RunTiming `json:"timing"`
}

// runsTable opens the experiment's runs table and loads what mode reads
// (sh is the reading shard in readShard mode): the rows by seed position,
// nil where missing.
func (e *Experiment) runsTable(ctx context.Context, mode readMode, sh Shard) (*cacheTable, []*seedLine, loaded, error) {
	cfg := e.Config
	c, err := openCache(cfg.Cache, "runs", e.runKey(), cacheMeta{Kind: "runs", Seeds: len(cfg.Seeds)})
	if err != nil {
		return nil, nil, loaded{}, err
	}
	lines := make([]*seedLine, len(cfg.Seeds))
	ld, err := c.load(ctx, mode, sh, func(b []byte) (int, error) {
		var l seedLine
		if err := strictJSON(b, &l); err != nil {
			return 0, err
		}
		if l.Index < 0 || l.Index >= len(cfg.Seeds) || l.Seed != cfg.Seeds[l.Index] {
			return 0, fmt.Errorf("seed %d at position %d is not one of the %d seeds", l.Seed, l.Index, len(cfg.Seeds))
		}
		if len(l.Agents) != len(cfg.Agents) {
			return 0, fmt.Errorf("seed %d: %d agents, want %d", l.Seed, len(l.Agents), len(cfg.Agents))
		}
		for k, a := range l.Agents {
			if a.Agent != cfg.Agents[k].ID || a.Run.Seed != l.Seed {
				return 0, fmt.Errorf("seed %d: agent %d is %s with seed %d, want %s", l.Seed, k, a.Agent, a.Run.Seed, cfg.Agents[k].ID)
			}
		}
		if lines[l.Index] == nil {
			lines[l.Index] = &l
		}
		return l.Index, nil
	})
	return c, lines, ld, err
}

// RunShard runs shard sh of the experiment's agent runs: every agent over
// the seeds the shard owns (see Shard) that no earlier run of the shard
// finished. Each run writes its progress log (and state) as Run does; the
// summaries wait in the cache for MergeRuns. Shards of a split may run at
// the same time on machines sharing the cache and results folders. In
// replay mode the sweep must be complete (merged, or its shard files all
// present): shards never compute the sweep. Messages go to log; progress
// (may be nil) gets the stage "<name> shard K/N" over the shard's
// iterations.
func (e *Experiment) RunShard(ctx context.Context, sh Shard, log io.Writer, progress ProgressFunc) (ShardStats, error) {
	cfg := e.Config
	st := ShardStats{Shard: sh, Items: sh.items(len(cfg.Seeds))}
	if !sh.sharded() {
		return st, errors.New("run: RunShard needs a shard")
	}
	c, lines, ld, err := e.runsTable(ctx, readShard, sh)
	if err != nil {
		return st, err
	}
	var todo []int
	for j := range cfg.Seeds {
		if sh.owns(j) && lines[j] == nil {
			todo = append(todo, j)
		}
	}
	st.Cached, st.Computed = st.Items-len(todo), len(todo)
	if len(todo) > 0 {
		env, err := e.env(ctx, nil, true)
		if err != nil {
			return st, err
		}
		var seeds []string
		for _, j := range todo {
			seeds = append(seeds, fmt.Sprint(cfg.Seeds[j]))
		}
		fmt.Fprintf(log, "%s: shard %s: seeds %s, agents %s, %s mode\n", cfg.Name, sh, strings.Join(seeds, ", "), agentIDs(cfg.Agents), cfg.Mode)
		var trace func(uint64, Step)
		if progress != nil {
			total, done, stage := e.iterations(env)*len(todo)*len(cfg.Agents), 0, cfg.Name+" shard "+sh.String()
			trace = func(uint64, Step) { done++; progress(stage, done, total) }
		}
		cp := c.checkpoint(sh, time.Now().UnixNano(), 0)
		defer cp.close()
		for _, j := range todo {
			l := &seedLine{Index: j, Seed: cfg.Seeds[j]}
			for _, a := range cfg.Agents {
				newAgent, o := e.seedsSetup(a, env, log)
				o.Trace = trace
				run, tm, err := runSeed(ctx, env, cfg.Scenario, newAgent, filepath.Join(cfg.Output, a.ID), o, l.Seed)
				if err != nil {
					return st, err
				}
				l.Agents = append(l.Agents, agentRun{Agent: a.ID, Run: run, Timing: tm})
			}
			if err := cp.append(l); err != nil {
				return st, err
			}
			lines[j] = l
		}
	}
	if upto, ok := ld.upto[sh.Index]; ld.table || ok && upto >= len(cfg.Seeds) {
		return st, nil // consolidated, or the shard file holds every seed
	}
	return st, c.writeShard(sh, len(cfg.Seeds), func(j int) any { return lines[j] })
}

// MergeRuns assembles the agents' summary.json and timing.json from the
// shard files of RunShard, in seed order, and writes run.json and
// config.yaml as Run does; it runs nothing. When shards are missing it
// fails with a *MissingShardsError that names them. Each agent's final
// line goes to log.
func (e *Experiment) MergeRuns(ctx context.Context, log io.Writer) error {
	cfg := e.Config
	c, lines, ld, err := e.runsTable(ctx, readMerge, Shard{})
	if err != nil {
		return err
	}
	var todo []int
	for j, l := range lines {
		if l == nil {
			todo = append(todo, j)
		}
	}
	if len(todo) > 0 {
		return missingShardsError(c, ld.split, todo, len(lines))
	}
	if err := e.writeRunFiles(); err != nil {
		return err
	}
	for k, a := range cfg.Agents {
		runs := make([]record.Run, len(lines))
		times := make([]record.RunTiming, len(lines))
		for j, l := range lines {
			runs[j], times[j] = l.Agents[k].Run, l.Agents[k].Timing
		}
		_, o := e.seedsSetup(a, nil, log)
		sum, err := finishSeeds(filepath.Join(cfg.Output, a.ID), cfg.Scenario, o, runs, times)
		if err != nil {
			return err
		}
		e.logSummary(log, a, sum)
	}
	return c.consolidate(len(lines), func(j int) any { return lines[j] })
}

// agentIDs lists the agents' ids.
func agentIDs(agents []AgentSpec) string {
	ids := make([]string, len(agents))
	for k, a := range agents {
		ids[k] = a.ID
	}
	return strings.Join(ids, ", ")
}
