package experiments

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/amt-dev/amt/experiments/record"
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
	// loadOrNewAgent).
	StateDir string
	// Trace, when set, receives every iteration of every seed.
	Trace func(seed uint64, s Step)
}

// RunSeeds runs one agent over every seed and writes into dir:
// seed-<n>.jsonl (the run's progress log, written when the run completes),
// then summary.json and timing.json after the last seed. newAgent makes a
// fresh agent for a seed. Files are written atomically, so a cancelled
// call leaves only completed seed logs and no summary.
func RunSeeds(ctx context.Context, env Env, sc scenario.Scenario, newAgent func(seed uint64) (Agent, error), dir string, o SeedsOptions) (record.Summary, error) {
	sum := record.Summary{Agent: o.Agent, Scenario: sc.Name, Mode: o.Mode, Runs: []record.Run{}}
	tf := record.Timing{Agent: o.Agent}
	if len(o.Seeds) == 0 {
		return sum, fmt.Errorf("run %s: no seeds", o.Agent)
	}
	for _, seed := range o.Seeds {
		agent, err := newAgent(seed)
		if err != nil {
			return sum, fmt.Errorf("run %s, seed %d: %w", o.Agent, seed, err)
		}
		lo := loopOptions{AgentName: o.Agent, Seed: seed, Passes: o.Passes, Iterations: o.Iter, LogInterval: o.Interval}
		if o.Trace != nil {
			lo.Trace = func(s Step) { o.Trace(seed, s) }
		}
		res, err := runLoop(ctx, env, sc, agent, lo)
		if err != nil {
			return sum, fmt.Errorf("run %s, seed %d: %w", o.Agent, seed, err)
		}
		if err := record.WriteLog(filepath.Join(dir, record.LogFile(seed)), res.Log); err != nil {
			return sum, err
		}
		if o.StateDir != "" {
			if err := saveAgent(agent, statePath(o.StateDir, seed)); err != nil {
				return sum, fmt.Errorf("run %s, seed %d: %w", o.Agent, seed, err)
			}
		}
		if o.Timing {
			res.Run.MeanIterationMS = res.Time.MeanIterationMS
		}
		sum.Runs = append(sum.Runs, res.Run)
		tf.Runs = append(tf.Runs, res.Time)
		tf.MeanDecisionUS += res.Time.MeanDecisionUS / float64(len(o.Seeds))
		tf.MeanIterMS += res.Time.MeanIterationMS / float64(len(o.Seeds))
	}
	if o.Timing {
		sum.MeanDecisionUS = tf.MeanDecisionUS
	}
	if err := record.WriteTiming(filepath.Join(dir, record.TimingFile), tf); err != nil {
		return sum, err
	}
	return sum, record.WriteSummary(filepath.Join(dir, record.SummaryFile), sum)
}

// statePath is the state file of a seed's agent in dir.
func statePath(dir string, seed uint64) string {
	return filepath.Join(dir, fmt.Sprintf("seed-%d.state", seed))
}
