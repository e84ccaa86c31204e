package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/limits"
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
	}{2, e.meta(), cfg.LogInterval, cfg.Timing, cfg.State, cfg.Output, e.verdictKey, e.featureKey}
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
	// Log is the sha256 of the progress log the run wrote into the
	// agent's results folder.
	Log string `json:"log_sha256"`
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
	if err := e.shardable(); err != nil {
		return st, err
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
		env, err := e.shardEnv(ctx)
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
			total, done := e.iterations(env)*len(todo)*len(cfg.Agents), 0
			stage := Stage{Name: cfg.Name + " shard " + sh.String(), Unit: "iteration"}
			progress(stage, 0, total)
			trace = func(uint64, Step) { done++; progress(stage, done, total) }
		}
		cp := c.checkpoint(sh, time.Now().UnixNano(), 0)
		defer cp.close()
		for _, j := range todo {
			l := &seedLine{Index: j, Seed: cfg.Seeds[j]}
			for i, a := range cfg.Agents {
				newAgent, o := e.seedsSetup(a, env, log)
				o.Trace = trace
				var vlog *violationLog // the shard of the first seed draws Run's gallery
				if j == 0 {
					vlog = e.galleryLog(i, &o)
				}
				w := &shardLogs{dir: filepath.Join(cfg.Output, a.ID)}
				run, tm, err := runSeed(ctx, env, cfg.Scenario, newAgent, w, o, l.Seed)
				if err != nil {
					return st, err
				}
				if err := e.drawRunGallery(ctx, a.ID, vlog); err != nil {
					return st, err
				}
				l.Agents = append(l.Agents, agentRun{Agent: a.ID, Run: run, Timing: tm, Log: w.sum})
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
	if err := e.shardable(); err != nil {
		return err
	}
	if err := e.removeStaleFiles(); err != nil {
		return err
	}
	if err := e.startFolder(log, true); err != nil {
		return err
	}
	for k, a := range cfg.Agents {
		if err := e.mergeAgent(k, a, lines, log); err != nil {
			return err
		}
	}
	if err := c.consolidate(len(lines), func(j int) any { return lines[j] }); err != nil {
		return err
	}
	return e.writeRunStamp()
}

// mergeAgent writes agent a's folder (the k-th agent) from the runs of
// the shards: the progress logs they wrote into it, each checked against
// the sha256 its run recorded, and summary.json and timing.json.
func (e *Experiment) mergeAgent(k int, a AgentSpec, lines []*seedLine, log io.Writer) error {
	cfg := e.Config
	dir := filepath.Join(cfg.Output, a.ID)
	_, o := e.seedsSetup(a, nil, log)
	folder, err := record.CreateAgentFolder(dir, o.Identity)
	if err != nil {
		return err
	}
	defer folder.Cleanup()
	runs := make([]record.Run, len(lines))
	times := make([]record.RunTiming, len(lines))
	for j, l := range lines {
		r := l.Agents[k]
		p := filepath.Join(dir, record.LogFile(l.Seed))
		b, err := limits.ReadFile(p, limits.LogBytes)
		if err == nil && record.SHA256(b) != r.Log {
			err = errors.New("it is not the log its shard wrote (its sha256 differs)")
		}
		if err != nil {
			return fmt.Errorf("run: merging %s: %s: %w; run the shard of seed %d again (delete its files in the %q cache table first)", a.ID, p, err, l.Seed, "runs")
		}
		if err := folder.AddLog(l.Seed, b); err != nil {
			return err
		}
		runs[j], times[j] = r.Run, r.Timing
	}
	sum, err := finishSeeds(folder, cfg.Scenario, o, runs, times)
	if err != nil {
		return err
	}
	if err := folder.Commit(); err != nil {
		return err
	}
	e.logSummary(log, a, sum)
	return nil
}

// shardable returns an error for an experiment whose agent runs cannot be
// sharded by seed: a tuning or regression experiment, or decision logs.
func (e *Experiment) shardable() error {
	switch cfg := e.Config; {
	case cfg.Tuning():
		return cfg.errAt("tune", "an experiment that tunes its agents does not run in shards: run amt tune -config %s", cfg.File)
	case cfg.Regressing():
		return cfg.errAt("regression", "a regression experiment does not run in shards: run amt run -config %s", cfg.File)
	case e.LogDecisions:
		return errors.New("run: -log-decisions does not go with -shard or -merge")
	}
	return nil
}

// shardLogs writes a shard's progress logs straight into the agent's
// results folder, where MergeRuns finds them, and keeps the sha256 of the
// last one for the runs table.
type shardLogs struct {
	dir, sum string
}

func (w *shardLogs) WriteLog(seed uint64, lines []record.LogLine) error {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	sum, err := record.WriteLog(filepath.Join(w.dir, record.LogFile(seed)), lines)
	w.sum = sum
	return err
}

func (w *shardLogs) WriteDecisions(uint64, []record.Decision) error {
	return errors.New("run: -log-decisions does not go with -shard")
}

// agentIDs lists the agents' ids.
func agentIDs(agents []AgentSpec) string {
	ids := make([]string, len(agents))
	for k, a := range agents {
		ids[k] = a.ID
	}
	return strings.Join(ids, ", ")
}
