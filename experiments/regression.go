package experiments

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/scenario"
)

// RegressionConfig is the regression section of a configuration: the SUT
// changes mid-stream (the paper's continuous-integration motivation: a
// new version of the model under test on the same inputs). Each run makes
// Passes passes (the configuration's) over the images on the SUT, then
// Regression.Passes more on SUT; the image order is the seed's, so the
// passes after the change are the seed's next passes.
type RegressionConfig struct {
	// SUT is the system under test after the change; without a model
	// there is no regression.
	SUT SUTConfig
	// Passes are the passes after the change.
	Passes int
	// Window is the number of iterations after the change whose
	// violations are counted on their own.
	Window int
}

// Regressing reports whether the configuration is a regression
// experiment.
func (c *Config) Regressing() bool { return c.Regression.SUT.Model != "" }

// regressionSection checks the regression section against the keys read
// before it.
func regressionSection(c *Config) string {
	switch {
	case c.Iterations != 0:
		return "a regression experiment runs whole passes before and after the change: leave iterations out"
	case c.State != "":
		return "a regression experiment carries each agent's state across the change itself: leave state out"
	case c.Tuning():
		return "tune an experiment without a regression section, then use the chosen options here"
	}
	return ""
}

// otherSUT reads a second SUT (regression.sut, corruption.reference): a
// mapping with the keys of sut, read by the schema's sut entries (so every
// sut key, its checks and its defaults apply) into the SUTConfig of dst.
func otherSUT(dst func(*Config) *SUTConfig) value {
	return value{want: "a mapping with the keys of sut",
		read: func(p *parser, n *yaml.Node, key string, d any) error {
			c := d.(*Config)
			saved := c.SUT
			c.SUT = SUTConfig{}
			err := p.mapping(n, key, "sut", c)
			*dst(c), c.SUT = c.SUT, saved
			return err
		},
		fields: func(d any) []any { return leafPointers(dst(d.(*Config))) },
	}
}

// leafPointers returns pointers to the fields of the struct v points to,
// descending into struct fields (for the schema's coverage test).
func leafPointers(v any) []any {
	var out []any
	var walk func(rv reflect.Value)
	walk = func(rv reflect.Value) {
		for i := 0; i < rv.NumField(); i++ {
			if f := rv.Field(i); rv.Type().Field(i).IsExported() {
				if f.Kind() == reflect.Struct {
					walk(f)
				} else {
					out = append(out, f.Addr().Interface())
				}
			}
		}
	}
	walk(reflect.ValueOf(v).Elem())
	return out
}

// AfterTable returns the table of a regression experiment's SUT after the
// change once Sweep has computed it, and nil otherwise.
func (e *Experiment) AfterTable() *Table { return e.afterTable }

// phasedEnv is the environment of a regression run: the SUT before the
// change until the run switches it to the one after.
type phasedEnv struct {
	envs  [2]Env
	phase int
}

func (e *phasedEnv) Len() int              { return e.envs[0].Len() }
func (e *phasedEnv) Layout() bandit.Layout { return e.envs[0].Layout() }
func (e *phasedEnv) Load(ctx context.Context, image int) error {
	return e.envs[e.phase].Load(ctx, image)
}
func (e *phasedEnv) Context(ctx context.Context, image int) ([]float32, error) {
	return e.envs[e.phase].Context(ctx, image)
}
func (e *phasedEnv) Evaluate(ctx context.Context, image int, v scenario.Variant) (Outcome, error) {
	return e.envs[e.phase].Evaluate(ctx, image, v)
}

// phasedAgent is the agent of a regression run: the agent before the
// change until the run replaces it (with itself, reloaded from its state
// file, or with a new one). A failed replacement is reported by the next
// choice.
type phasedAgent struct {
	cur Agent
	err error
}

func (a *phasedAgent) Choose(ctx []float32, rng *rand.Rand) (Choice, error) {
	if a.err != nil {
		return Choice{}, a.err
	}
	return a.cur.Choose(ctx, rng)
}

func (a *phasedAgent) Update(ctx []float32, c Choice, violated bool) error {
	return a.cur.Update(ctx, c, violated)
}

// regressionID is the results folder name of agent id carried or fresh
// (state) across the change of a regression experiment.
func regressionID(id, state string) string { return id + "-" + state }

// regressionRuns runs one agent of a regression experiment over every seed,
// carrying its state across the change (record.Carried) or starting a new
// one there (record.Fresh), and writes the usual results into its folder
// (regressionID); it returns each seed's counts before and after the
// change.
func (e *Experiment) regressionRuns(ctx context.Context, before, after Env, spec AgentSpec, state, stateDir string, progress ProgressFunc, commits *staged) ([]record.RegressionRun, error) {
	cfg := e.Config
	id := regressionID(spec.ID, state)
	sc := cfg.Scenario
	n := before.Len()
	switchAt := cfg.Passes * n
	env := &phasedEnv{envs: [2]Env{before, after}}
	var agent *phasedAgent
	var runs []record.RegressionRun
	newAgent := func(seed uint64) (Agent, error) {
		env.phase = 0
		a, err := NewAgent(spec, sc, env.Layout(), seed)
		agent = &phasedAgent{cur: a}
		runs = append(runs, record.RegressionRun{Seed: seed})
		return agent, err
	}
	total := (cfg.Passes + cfg.Regression.Passes) * n
	done, stage := 0, Stage{Name: "agent " + id + " (" + cfg.Mode + ")", Unit: "iteration"}
	trace := func(seed uint64, s Step) {
		r := &runs[len(runs)-1]
		c := record.Counts{Count: 1}
		if s.Violated {
			c.Violations = 1
		}
		switch {
		case s.Iteration <= switchAt:
			r.Before = r.Before.Add(c)
		default:
			r.After = r.After.Add(c)
			if s.Iteration <= switchAt+cfg.Regression.Window {
				r.AfterWindow = r.AfterWindow.Add(c)
			}
		}
		if s.Iteration == switchAt {
			env.phase = 1
			switch state {
			case record.Carried:
				path := statePath(filepath.Join(stateDir, id), seed)
				if err := saveAgent(agent.cur, path); err != nil {
					agent.err = fmt.Errorf("saving the state at the change: %w", err)
					break
				}
				a, loaded, err := loadOrNewAgent(path, spec, sc, env.Layout(), seed)
				if err == nil && !loaded {
					err = fmt.Errorf("state file %s not found", path)
				}
				agent.cur, agent.err = a, err
			case record.Fresh:
				agent.cur, agent.err = NewAgent(spec, sc, env.Layout(), seed)
			}
		}
		if progress != nil {
			done++
			progress(stage, done, total*len(cfg.Seeds))
		}
	}
	if progress != nil {
		progress(stage, 0, total*len(cfg.Seeds))
	}
	_, err := RunSeeds(ctx, env, sc, newAgent, filepath.Join(cfg.Output, id), SeedsOptions{
		Agent: id, Mode: cfg.Mode, Seeds: cfg.Seeds, Passes: cfg.Passes + cfg.Regression.Passes,
		Interval: cfg.LogInterval, Timing: cfg.Timing, Trace: trace, Identity: e.id, stage: commits,
	})
	return runs, err
}

// runRegression runs a regression experiment: every agent carried and
// fresh across the change, in that order (their folders staged); then
// finish (which writes the run files: see Run), the agents' folders and
// Output/regression.json.
func (e *Experiment) runRegression(ctx context.Context, before, after Env, log io.Writer, progress ProgressFunc, finish func() error) error {
	cfg := e.Config
	if before.Len() != after.Len() || before.Layout() != after.Layout() {
		return fmt.Errorf("regression: the SUTs before and after the change see %d and %d images with %d- and %d-d contexts; want the same images",
			before.Len(), after.Len(), before.Layout().Dim, after.Layout().Dim)
	}
	var commits staged
	defer commits.cleanup()
	stateDir, err := os.MkdirTemp("", "amt-regression-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stateDir)
	reg := record.Regression{Switch: cfg.Passes * before.Len(), Window: min(cfg.Regression.Window, cfg.Regression.Passes*before.Len()),
		SUTBefore: record.File{Path: cfg.SUT.Model, SHA256: e.modelHash},
		SUTAfter:  record.File{Path: e.after.Config.SUT.Model, SHA256: e.after.modelHash}}
	for _, a := range cfg.Agents {
		for _, state := range []string{record.Carried, record.Fresh} {
			id := regressionID(a.ID, state)
			fmt.Fprintf(log, "%s: agent %s (%s), %s across the change, %s, %s mode\n", cfg.Name, id, a.Name, state, plural.Count(len(cfg.Seeds), "seed"), cfg.Mode)
			runs, err := e.regressionRuns(ctx, before, after, a, state, stateDir, progress, &commits)
			if err != nil {
				return err
			}
			reg.Agents = append(reg.Agents, record.RegressionAgent{ID: id, Agent: a.ID, State: state, Runs: runs})
			var b, af record.Counts
			for _, r := range runs {
				b, af = b.Add(r.Before), af.Add(r.After)
			}
			fmt.Fprintf(log, "%s: agent %s: %.2f%% violations before the change, %.2f%% after\n", cfg.Name, id, 100*b.Rate(), 100*af.Rate())
		}
	}
	if err := finish(); err != nil {
		return err
	}
	if err := commits.commit(); err != nil {
		return err
	}
	return record.WriteRegression(filepath.Join(cfg.Output, record.RegressionFile), reg)
}
