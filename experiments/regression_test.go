package experiments

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/scenario"
)

const regressionDoc = `regression:
  sut:
    model: models/m2.onnx
    input_size: 32
  window: 4
`

func TestRegressionConfig(t *testing.T) {
	assets := fakeAssets(t)
	os.WriteFile(filepath.Join(assets, "models/m2.onnx"), []byte("x"), 0o644)
	c, err := parseConfig([]byte(baseConfig+regressionDoc), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Regression
	if !c.Regressing() || r.SUT.Model != filepath.Join(assets, "models/m2.onnx") || r.SUT.InputWidth != 32 || r.SUT.Mean != c.SUT.Mean ||
		r.Passes != 1 || r.Window != 4 || c.SUT.Model != filepath.Join(assets, "models/m.onnx") || c.SUT.InputWidth != 224 {
		t.Fatalf("regression %+v, sut %+v", r, c.SUT)
	}
	if c2, _ := parseConfig([]byte(baseConfig), "exp/test.yaml", assets); c2.Regressing() {
		t.Error("no regression section, but Regressing()")
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"sut key typo", "    model: models/m2.onnx", "    modl: models/m2.onnx", `exp/test.yaml:24:5: regression.sut.modl: unknown key; did you mean "model"?`},
		{"missing model file", "models/m2.onnx", "models/m3.onnx", `exp/test.yaml:24:12: regression.sut.model: file "models/m3.onnx" not found`},
		{"bad layout", "    input_size: 32\n", "    input_size: 32\n    layout: nwhc\n", `regression.sut.layout: "nwhc" is not one of auto, nchw, nhwc`},
		{"bad std", "    input_size: 32\n", "    input_size: 32\n    std: [1, -1, 1]\n", `regression.sut.std: "-1" is not a positive number`},
		{"no sut", "  sut:\n    model: models/m2.onnx\n    input_size: 32\n", "", `regression.sut: missing required key`},
		{"iterations", "log_interval: 5\n", "log_interval: 5\niterations: 4\n", `regression: a regression experiment runs whole passes before and after the change: leave iterations out`},
		{"state", "log_interval: 5\n", "log_interval: 5\nstate: st\n", `regression: a regression experiment carries each agent's state across the change itself`},
		{"window", "window: 4", "window: 0", `regression.window: "0" is not an integer in [1,`},
	} {
		doc := strings.Replace(baseConfig+regressionDoc, tc.old, tc.new, 1)
		if doc == baseConfig+regressionDoc {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := parseConfig([]byte(doc), "exp/test.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.name, err, tc.want)
		}
	}
}

// alwaysEnv is a SUT after the change that fails every follow-up.
type alwaysEnv struct{ Env }

func (alwaysEnv) Evaluate(context.Context, int, scenario.Variant) (Outcome, error) {
	return Outcome{Violated: true}, nil
}

// A regression run switches the SUT exactly after the first pass; carried
// and fresh agents agree before the change; carrying the state through its
// file is the same as never stopping; the files are the same for the same
// configuration.
func TestRegressionRuns(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(24)
	tab, err := sweepFake(t, src, sc, t.TempDir(), fakeClassifier{}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := tab.Verdicts(sc.Variants())
	before, err := NewReplayEnv(rows, tab.Features, bandit.Layout{Dim: tab.Dim}, sc)
	if err != nil {
		t.Fatal(err)
	}
	after := alwaysEnv{before}
	run := func(out string) *record.Regression {
		t.Helper()
		cfg := &Config{Name: "reg", Mode: "replay", Scenario: sc, Passes: 1, Seeds: []uint64{1, 2, 3}, LogInterval: 5, Output: out,
			Agents:     []AgentSpec{{ID: "random", Name: "random"}, {ID: "eg", Name: "epsilon-greedy", Options: bandit.Options{"hidden": "0"}}},
			Regression: RegressionConfig{SUT: SUTConfig{Model: "after.onnx"}, Passes: 1, Window: 5}}
		e := &Experiment{Config: cfg, modelHash: "b", after: &Experiment{Config: &Config{SUT: SUTConfig{Model: "after.onnx"}}, modelHash: "a"}}
		if err := e.runRegression(context.Background(), before, after, io.Discard, nil, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		r, err := record.ReadRegression(filepath.Join(out, record.RegressionFile))
		if err != nil {
			t.Fatal(err)
		}
		return &r
	}
	out := t.TempDir()
	r := run(out)
	if r.Switch != 24 || r.Window != 5 || r.SUTAfter.SHA256 != "a" || len(r.Agents) != 4 {
		t.Fatalf("regression %+v", r)
	}
	var ids []string
	for _, a := range r.Agents {
		ids = append(ids, a.ID)
		for _, run := range a.Runs {
			if run.Before.Count != 24 || run.After.Count != 24 || run.After.Violations != 24 || run.AfterWindow != (record.Counts{Count: 5, Violations: 5}) {
				t.Errorf("%s, seed %d: %+v; want 24 iterations before, 24 after, all failing", a.ID, run.Seed, run)
			}
			if run.Before.Violations == run.Before.Count {
				t.Errorf("%s, seed %d: every follow-up failed before the change", a.ID, run.Seed)
			}
		}
	}
	if got := strings.Join(ids, " "); got != "random-carried random-fresh eg-carried eg-fresh" {
		t.Errorf("agents %s", got)
	}
	// Before the change, carried and fresh runs are the same run.
	for _, a := range []string{"random", "eg"} {
		c, _ := record.ReadLog(filepath.Join(out, a+"-carried", "seed-2.jsonl"))
		f, _ := record.ReadLog(filepath.Join(out, a+"-fresh", "seed-2.jsonl"))
		if len(c) != 10 || len(f) != 10 || c[9].Iteration != 48 {
			t.Fatalf("%s: logs of %d and %d lines", a, len(c), len(f))
		}
		for i := range c {
			if c[i].Iteration <= 24 && (c[i].Violations != f[i].Violations || !equalCounts(c[i].Arms, f[i].Arms)) {
				t.Errorf("%s, iteration %d: carried %+v, fresh %+v", a, c[i].Iteration, c[i], f[i])
			}
		}
	}
	// Carrying the state through its file is the same as never stopping:
	// the same agent run for two passes over the same environments.
	spec := AgentSpec{ID: "eg", Name: "epsilon-greedy", Options: bandit.Options{"hidden": "0"}}
	a, err := NewAgent(spec, sc, before.Layout(), 2)
	if err != nil {
		t.Fatal(err)
	}
	penv := &phasedEnv{envs: [2]Env{before, after}}
	res, err := runLoop(context.Background(), penv, sc, a, loopOptions{AgentName: "eg-carried", Seed: 2, Passes: 2, LogInterval: 5,
		Trace: func(s Step) {
			if s.Iteration == 24 {
				penv.phase = 1
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := record.ReadLog(filepath.Join(out, "eg-carried", "seed-2.jsonl"))
	for i := range c {
		if c[i].Violations != res.Log[i].Violations || !equalCounts(c[i].Arms, res.Log[i].Arms) {
			t.Errorf("iteration %d: carried through the state file %+v, never stopped %+v", c[i].Iteration, c[i].Arms, res.Log[i].Arms)
		}
	}
	// Same configuration, same files.
	out2 := t.TempDir()
	run(out2)
	for _, f := range []string{record.RegressionFile, "eg-carried/summary.json", "eg-fresh/seed-3.jsonl", "random-carried/seed-1.jsonl"} {
		b1, _ := os.ReadFile(filepath.Join(out, f))
		b2, _ := os.ReadFile(filepath.Join(out2, f))
		if len(b1) == 0 || !bytes.Equal(b1, b2) {
			t.Errorf("%s differs between identical runs", f)
		}
	}
}

func equalCounts(a, b map[string]record.Counts) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The invariants of the change, agent by agent: the carried agent's state
// at the change is the state an agent saves after the first pass alone; the
// fresh agent continues as a new agent of the seed would; random, which
// has no state to carry, makes the same choices either way.
func TestRegressionStateInvariants(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	tab, err := sweepFake(t, newFakeSource(24), sc, t.TempDir(), fakeClassifier{}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := tab.Verdicts(sc.Variants())
	before, err := NewReplayEnv(rows, tab.Features, bandit.Layout{Dim: tab.Dim}, sc)
	if err != nil {
		t.Fatal(err)
	}
	after := alwaysEnv{before}
	seeds := []uint64{1, 2}
	cfg := &Config{Name: "reg", Mode: "replay", Scenario: sc, Passes: 1, Seeds: seeds, LogInterval: 1,
		Regression: RegressionConfig{Passes: 1, Window: 5}}
	eg := AgentSpec{ID: "eg", Name: "epsilon-greedy", Options: bandit.Options{"hidden": "0"}}
	rnd := AgentSpec{ID: "random", Name: "random"}
	runs := func(spec AgentSpec, state string) (dir, stateDir string) {
		t.Helper()
		out, stateDir := t.TempDir(), t.TempDir()
		c := *cfg
		c.Output = out
		e := &Experiment{Config: &c}
		if _, err := e.regressionRuns(context.Background(), before, after, spec, state, stateDir, nil, nil); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(out, regressionID(spec.ID, state)), stateDir
	}
	logs := func(dir string, seed uint64) []record.LogLine {
		t.Helper()
		l, err := record.ReadLog(filepath.Join(dir, record.LogFile(seed)))
		if err != nil || len(l) != 48 {
			t.Fatalf("log of seed %d: %d lines, %v", seed, len(l), err)
		}
		return l
	}

	// Carried: the state file written at the change is byte for byte the
	// state of the same agent saved after a run of the first pass only.
	cDir, cState := runs(eg, record.Carried)
	phase1 := t.TempDir()
	if _, err := RunSeeds(context.Background(), before, sc, func(seed uint64) (Agent, error) { return NewAgent(eg, sc, before.Layout(), seed) },
		t.TempDir(), SeedsOptions{Agent: "eg", Seeds: seeds, Passes: 1, StateDir: phase1}); err != nil {
		t.Fatal(err)
	}
	for _, seed := range seeds {
		got, err1 := os.ReadFile(statePath(filepath.Join(cState, "eg-carried"), seed))
		want, err2 := os.ReadFile(statePath(phase1, seed))
		if err1 != nil || err2 != nil || len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("seed %d: state at the change (%d bytes, %v) differs from the state after pass 1 (%d bytes, %v)", seed, len(got), err1, len(want), err2)
		}
	}

	// Fresh: after the change the run continues (same image order, same
	// choice stream) with a new agent of the seed.
	fDir, _ := runs(eg, record.Fresh)
	for _, seed := range seeds {
		a, err := NewAgent(eg, sc, before.Layout(), seed)
		if err != nil {
			t.Fatal(err)
		}
		pa := &phasedAgent{cur: a}
		penv := &phasedEnv{envs: [2]Env{before, after}}
		res, err := runLoop(context.Background(), penv, sc, pa, loopOptions{AgentName: "eg-fresh", Seed: seed, Passes: 2, LogInterval: 1,
			Trace: func(s Step) {
				if s.Iteration == 24 {
					penv.phase = 1
					if pa.cur, err = NewAgent(eg, sc, before.Layout(), seed); err != nil {
						t.Fatal(err)
					}
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		f, c := logs(fDir, seed), logs(cDir, seed)
		differ := false
		for i := range f {
			if !equalCounts(f[i].Arms, res.Log[i].Arms) || !equalCounts(f[i].Params, res.Log[i].Params) {
				t.Fatalf("seed %d, iteration %d: fresh run %+v, a new agent at the change %+v", seed, f[i].Iteration, f[i].Arms, res.Log[i].Arms)
			}
			differ = differ || !equalCounts(f[i].Arms, c[i].Arms) || !equalCounts(f[i].Params, c[i].Params)
			if i < 24 && !equalCounts(f[i].Params, c[i].Params) {
				t.Errorf("seed %d, iteration %d: carried and fresh differ before the change", seed, f[i].Iteration)
			}
		}
		if !differ {
			t.Errorf("seed %d: the fresh agent chose as the carried one after the change: the state made no difference", seed)
		}
	}

	// Random ignores state: carried and fresh choose alike throughout.
	rc, _ := runs(rnd, record.Carried)
	rf, _ := runs(rnd, record.Fresh)
	for _, seed := range seeds {
		c, f := logs(rc, seed), logs(rf, seed)
		for i := range c {
			if !equalCounts(c[i].Params, f[i].Params) || !equalCounts(c[i].Arms, f[i].Arms) || c[i].Violations != f[i].Violations {
				t.Fatalf("random, seed %d, iteration %d: carried %+v, fresh %+v", seed, c[i].Iteration, c[i].Arms, f[i].Arms)
			}
		}
	}
}
