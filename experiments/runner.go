package experiments

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/scenario"
)

// SeedsOptions configures RunSeeds.
type SeedsOptions struct {
	Agent    string // the agent's name (or id) in result files
	Mode     string // "online" or "replay", recorded in the summary
	Seeds    []uint64
	Passes   int
	Iter     int // iterations per run; 0 = passes × cases
	Interval int // log interval; 0 = 100
	// Timing puts the measured times into summary.json (mean_decision_us
	// and each run's mean_iteration_ms). They differ between otherwise
	// identical runs, so it is off for byte-reproducible results; the times
	// are always written to timing.json beside the summary.
	Timing bool
	// StateDir, when set, is where each run's agent state is saved after
	// the run, as seed-<n>.state (newAgent may load it; see
	// loadOrNewAgent). RunSeeds saves the states only when every seed has
	// run, with the results.
	StateDir string
	// Trace, when set, receives every iteration of every seed.
	Trace func(seed uint64, s Step)
	// Deadline, when not zero, ends each run after the iteration during
	// which it passed (loopOptions.Deadline).
	Deadline time.Time
	// Identity is the run's, written into every result file.
	Identity record.Identity
	// LogDecisions writes every decision of seed n, with its context,
	// propensity and cost, to decisions-seed-<n>.jsonl (record.Decision:
	// the log format of amt ope).
	LogDecisions bool
	// ParamErrors counts the follow-ups of each parameterised variant
	// whose top-1 class differs from a known label into each run's
	// ParamErrors (a corruption report's).
	ParamErrors bool

	// deferState (RunSeeds) saves each seed's state beside its file, as
	// seed-<n>.state.pending, for the caller to commit with the results;
	// the caller holds the seeds' locks.
	deferState bool
	// stage, when set, makes RunSeeds leave the agent's folder and states
	// written but not in place: it adds their commit to stage, which Run
	// makes for all its agents at the end.
	stage *staged
}

// staged holds the last steps of several RunSeeds calls — putting each
// agent's folder and the seeds' states in place, then releasing their
// locks — so that amt run changes the results folder only once every
// agent is done: an interrupted run leaves the previous results whole and
// every state as it was.
type staged struct {
	commits []func() error
	release []func()
}

// commit puts every staged folder and state in place, in order, then
// releases them; it stops at the first failure.
func (s *staged) commit() error {
	defer s.cleanup()
	for _, c := range s.commits {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// cleanup releases what was staged and not committed (the temporary
// folders, the pending states, the locks).
func (s *staged) cleanup() {
	for i := len(s.release) - 1; i >= 0; i-- {
		s.release[i]()
	}
	s.commits, s.release = nil, nil
}

// pendingSuffix names a state saved by a run that has not finished yet.
const pendingSuffix = ".pending"

// RunSeeds runs one agent over every seed and writes the agent's folder
// dir: seed-<n>.jsonl (each run's progress log), summary.json and
// timing.json, all carrying o.Identity. newAgent makes a fresh agent for a
// seed. The folder is written whole (record.AgentFolder): it replaces the
// old one when the last seed is done, so it never mixes two runs' files,
// and a cancelled call leaves the old folder as it was.
func RunSeeds(ctx context.Context, env Env, sc scenario.Scenario, newAgent func(seed uint64) (Agent, error), dir string, o SeedsOptions) (record.Summary, error) {
	sum := record.Summary{Agent: o.Agent, Scenario: sc.Name, Mode: o.Mode, Runs: []record.Run{}}
	if len(o.Seeds) == 0 {
		return sum, fmt.Errorf("run %s: no seeds", o.Agent)
	}
	// With state, the seeds' states are locked first (a run that cannot
	// have them all fails before it runs anything) and committed only with
	// the results: an interrupted run leaves every state as it was, as it
	// leaves the results, so that running the same command again trains
	// each seed once, from the same state. What the run holds (the locks,
	// the pending states, the folder being written) is released after the
	// commit, here or, handed over, by the caller's o.stage.
	var own staged
	defer own.cleanup()
	if o.StateDir != "" {
		o.deferState = true
		for _, seed := range o.Seeds {
			unlock, err := lockState(statePath(o.StateDir, seed))
			if err != nil {
				return sum, fmt.Errorf("run %s, seed %d: %w", o.Agent, seed, err)
			}
			pending := statePath(o.StateDir, seed) + pendingSuffix
			own.release = append(own.release, unlock, func() { os.Remove(pending) }) // after a commit, there is none
		}
	}
	folder, err := record.CreateAgentFolder(dir, o.Identity)
	if err != nil {
		return sum, err
	}
	own.release = append(own.release, folder.Cleanup)
	var runs []record.Run
	var times []record.RunTiming
	for k, seed := range o.Seeds {
		run, tm, err := runSeed(ctx, env, sc, newAgent, folder, o, seed)
		if err != nil && ctx.Err() != nil {
			return sum, fmt.Errorf("agent %s interrupted in seed %d, after %d of %s (its folder %s is written when every seed is done and was left as it was; run the same command again): %w",
				o.Agent, seed, k, plural.Count(len(o.Seeds), "seed"), dir, context.Cause(ctx))
		}
		if err != nil {
			return sum, err
		}
		runs, times = append(runs, run), append(times, tm)
	}
	sum, err = finishSeeds(folder, sc, o, runs, times)
	if err != nil {
		return sum, err
	}
	own.commits = append(own.commits, func() error {
		if err := folder.Commit(); err != nil {
			return err
		}
		if o.StateDir == "" {
			return nil
		}
		for _, seed := range o.Seeds {
			p := statePath(o.StateDir, seed)
			if err := os.Rename(p+pendingSuffix, p); err != nil {
				return fmt.Errorf("run %s, seed %d: saving its state: %w", o.Agent, seed, err)
			}
		}
		return nil
	})
	if o.stage != nil {
		o.stage.commits = append(o.stage.commits, own.commits...)
		o.stage.release = append(o.stage.release, own.release...)
		own = staged{}
		return sum, nil
	}
	return sum, own.commit()
}

// A seedWriter keeps a run's progress log and decision log: an
// AgentFolder being written, or a shard's logs (runshard.go).
type seedWriter interface {
	WriteLog(seed uint64, lines []record.LogLine) error
	WriteDecisions(seed uint64, ds []record.Decision) error
}

// runSeed runs one agent over one seed, writes the run's progress log (and
// with o.LogDecisions its decision log) to w, its state with o.StateDir,
// and returns the run's summary row and measured times.
//
// With o.StateDir the seed's state file is locked (lockState) from before
// newAgent loads it until it is saved again, unless the caller holds the
// lock and commits the state itself (o.deferState: RunSeeds).
func runSeed(ctx context.Context, env Env, sc scenario.Scenario, newAgent func(seed uint64) (Agent, error), w seedWriter, o SeedsOptions, seed uint64) (record.Run, record.RunTiming, error) {
	if o.StateDir != "" && !o.deferState {
		unlock, err := lockState(statePath(o.StateDir, seed))
		if err != nil {
			return record.Run{}, record.RunTiming{}, fmt.Errorf("run %s, seed %d: %w", o.Agent, seed, err)
		}
		defer unlock()
	}
	agent, err := newAgent(seed)
	if err != nil {
		return record.Run{}, record.RunTiming{}, fmt.Errorf("run %s, seed %d: %w", o.Agent, seed, err)
	}
	lo := loopOptions{AgentName: o.Agent, Seed: seed, Passes: o.Passes, Iterations: o.Iter, LogInterval: o.Interval, Contexts: o.LogDecisions, Deadline: o.Deadline, ParamErrors: o.ParamErrors}
	var decisions []record.Decision
	if o.Trace != nil || o.LogDecisions {
		variantIndex := map[string]int{}
		for i, v := range sc.Variants() {
			variantIndex[v.Key()] = i
		}
		lo.Trace = func(s Step) {
			if o.Trace != nil {
				o.Trace(seed, s)
			}
			if o.LogDecisions {
				decisions = append(decisions, record.Decision{Seed: seed, Iteration: s.Iteration, Image: s.Image, Variant: s.Variant,
					Arm: variantIndex[s.Variant], Prob: s.Choice.Prob, Cost: s.Cost, Violated: s.Violated, Context: s.Context})
			}
		}
	}
	res, err := runLoop(ctx, env, sc, agent, lo)
	if err != nil {
		return record.Run{}, record.RunTiming{}, fmt.Errorf("run %s, seed %d: %w", o.Agent, seed, err)
	}
	if err := w.WriteLog(seed, res.Log); err != nil {
		return record.Run{}, record.RunTiming{}, err
	}
	if o.LogDecisions {
		if err := w.WriteDecisions(seed, decisions); err != nil {
			return record.Run{}, record.RunTiming{}, err
		}
	}
	if o.StateDir != "" {
		p := statePath(o.StateDir, seed)
		if o.deferState {
			p += pendingSuffix
		}
		if err := saveAgent(agent, p); err != nil {
			return record.Run{}, record.RunTiming{}, fmt.Errorf("run %s, seed %d: %w", o.Agent, seed, err)
		}
	}
	if o.Timing {
		res.Run.MeanIterationMS = res.Time.MeanIterationMS
	}
	return res.Run, res.Time, nil
}

// finishSeeds stages the agent folder with timing.json and summary.json
// made from one agent's runs over the seeds o.Seeds, in their order.
func finishSeeds(folder *record.AgentFolder, sc scenario.Scenario, o SeedsOptions, runs []record.Run, times []record.RunTiming) (record.Summary, error) {
	sum := record.Summary{Agent: o.Agent, Scenario: sc.Name, Mode: o.Mode, Runs: []record.Run{}}
	tf := record.Timing{Agent: o.Agent}
	for k := range runs {
		sum.Runs = append(sum.Runs, runs[k])
		tf.Runs = append(tf.Runs, times[k])
		tf.MeanDecisionUS += times[k].MeanDecisionUS / float64(len(o.Seeds))
		tf.MeanIterMS += times[k].MeanIterationMS / float64(len(o.Seeds))
	}
	if o.Timing {
		sum.MeanDecisionUS = tf.MeanDecisionUS
	}
	return sum, folder.Stage(sum, tf)
}

// statePath is the state file of a seed's agent in dir.
func statePath(dir string, seed uint64) string {
	return filepath.Join(dir, fmt.Sprintf("seed-%d.state", seed))
}
