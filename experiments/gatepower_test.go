package experiments

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/gate"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
)

// syntheticEnv is a replay environment over n images of the hierarchical
// scenario whose follow-up of variant v violates with probability
// rate(v), drawn from a PCG stream of seed (the same seed gives the same
// table), with 4-d random contexts.
func syntheticEnv(t *testing.T, n int, seed uint64, rate func(v scenario.Variant) float64) Env {
	t.Helper()
	sc := mr.Hierarchical()
	rng := rand.New(rand.NewPCG(seed, 1))
	var rows []record.Verdict
	for i := 0; i < n; i++ {
		for _, v := range sc.Variants() {
			rows = append(rows, record.Verdict{Image: i, MR: v.Action, Param: v.Value, Violation: rng.Float64() < rate(v),
				Label: -1, MapOriginal: math.NaN(), MapTransformed: math.NaN()})
		}
	}
	feats := make([]float32, 4*n)
	for i := range feats {
		feats[i] = float32(rand.New(rand.NewPCG(7, uint64(i))).NormFloat64())
	}
	env, err := NewReplayEnv(rows, feats, bandit.Layout{Dim: 4}, sc)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func flat(p float64) func(scenario.Variant) float64 {
	return func(scenario.Variant) float64 { return p }
}

// The study replays each cycle as the CI does: outcomes do not depend on
// the workers; a model checked against itself with the same seed by a
// design that ignores the verdicts never fails (both checks draw the same
// follow-ups of the same images); a large regression of one relation is
// found, on that relation, by the fixed designs.
func TestPowerStudy(t *testing.T) {
	base := syntheticEnv(t, 300, 1, flat(0.2))
	regressed := syntheticEnv(t, 300, 1, func(v scenario.Variant) float64 {
		if v.Action == "fliplr" {
			return 0.9
		}
		return 0.2
	})
	st := PowerStudy{
		Scenario: mr.Hierarchical(), Envs: map[string]Env{"a": base, "b": regressed},
		Agent: AgentSpec{ID: "ucb1", Name: "ucb1"}, Audit: 0.5,
		Regression: gate.Regression{MarginPP: 2, Alpha: 0.05},
		Pairs: []PowerPair{
			{Name: "same", Old: "a", New: "a"},
			{Name: "reseed", Old: "a", New: "a", Reseed: true},
			{Name: "flip", Old: "a", New: "b", Regressed: "fliplr"},
		},
		Budgets: []int{20, 280}, Methods: PowerMethods(), Cycles: []uint64{1, 2, 3},
	}
	one := st
	one.Workers = 1
	got, err := one.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Workers = 3
	again, err := st.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, again) {
		t.Fatal("the outcomes depend on the number of workers")
	}
	if want := len(st.Pairs) * len(st.Methods) * len(st.Budgets) * len(st.Cycles); len(got) != want {
		t.Fatalf("%d outcomes, want %d", len(got), want)
	}
	for _, o := range got {
		fixed := o.Method == MethodRandom || o.Method == MethodRoundRobin
		switch {
		case o.Pair == "same" && o.Method == MethodRandom && len(o.Failed) > 0:
			t.Errorf("%+v: identical samples failed", o)
		case o.Pair == "flip" && fixed && o.Budget == 280 && !slices.Equal(o.Failed, []string{"fliplr"}):
			t.Errorf("%+v: want a failure on fliplr alone", o)
		}
	}
}

func TestPowerStudyErrors(t *testing.T) {
	env := syntheticEnv(t, 10, 1, flat(0.5))
	ok := PowerStudy{Scenario: mr.Hierarchical(), Envs: map[string]Env{"a": env}, Agent: AgentSpec{ID: "random", Name: "random"},
		Pairs: []PowerPair{{Name: "p", Old: "a", New: "a"}}, Budgets: []int{5}, Methods: []string{MethodRandom}, Cycles: []uint64{1},
		Regression: gate.Regression{MarginPP: 0, Alpha: 0.05}}
	for _, tc := range []struct {
		name string
		edit func(*PowerStudy)
	}{
		{"no budgets", func(s *PowerStudy) { s.Budgets = nil }},
		{"descending budgets", func(s *PowerStudy) { s.Budgets = []int{5, 3} }},
		{"unknown model", func(s *PowerStudy) { s.Pairs = []PowerPair{{Name: "p", Old: "a", New: "zz"}} }},
		{"unknown method", func(s *PowerStudy) { s.Methods = []string{"oracle"} }},
		{"budget beyond the images", func(s *PowerStudy) { s.Budgets = []int{11} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := ok
			tc.edit(&st)
			if _, err := st.Run(context.Background(), nil); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := ok.Run(context.Background(), nil); err != nil {
		t.Fatalf("the valid study: %v", err)
	}
}

// The study's cycle is amt check's: two checks run through
// Experiment.Check, the second continuing from the state file the first
// saved and judged against its results folder, fail exactly the MRs the
// study's replay of the same cycle fails (the golden CIFAR tables of
// SqueezeNet → ResNet-20, a learning agent steering half the budget).
func TestPowerStudyIsTheCICycle(t *testing.T) {
	sq := goldenVerdicts(t, "squeezenet_first100.csv")
	rn := goldenVerdicts(t, "resnet20_first100.csv")
	for _, tc := range []struct {
		audit  float64
		method string
	}{{0.5, MethodAdaptiveAudit}} {
		dir := t.TempDir()
		extra := fmt.Sprintf("state: %s\ncheck: {budget: 2000, audit: %g}\n", filepath.Join(dir, "state"), tc.audit)
		old := goldenCheckAgent(t, dir, "cifar10_squeezenet1_1.onnx", 224, 20, sq, "ucb1", extra)
		if _, err := old.Check(context.Background(), io.Discard, nil, CheckOptions{Replay: true}); err != nil {
			t.Fatal(err)
		}
		extra = fmt.Sprintf("state: %s\ncheck: {budget: 2000, audit: %g, baseline: %s}\n", filepath.Join(dir, "state"), tc.audit, old.Config.Output)
		cur := goldenCheckAgent(t, dir, "cifar10_resnet20.onnx", 32, 20, rn, "ucb1", extra)
		res, err := cur.Check(context.Background(), io.Discard, nil, CheckOptions{Replay: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.State == nil || !res.State.Loaded {
			t.Fatalf("audit %g: the second check did not continue the first's state: %+v", tc.audit, res.State)
		}
		var failed []string
		for _, c := range res.Conditions {
			if c.Kind == record.ConditionRegression && c.Status == record.StatusFail {
				failed = append(failed, c.MR)
			}
		}
		envs := map[string]Env{}
		for name, e := range map[string]*Experiment{"old": old, "new": cur} {
			tab, err := e.Sweep(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if envs[name], err = tab.replayEnv(e.Config.Scenario, false); err != nil {
				t.Fatal(err)
			}
		}
		st := PowerStudy{Scenario: cur.Config.Scenario, Envs: envs, Agent: cur.Config.Agents[0], Audit: tc.audit,
			Regression: gate.Regression{MarginPP: cur.Config.Check.Margin, Alpha: cur.Config.Check.Alpha},
			Pairs:      []PowerPair{{Name: "p", Old: "old", New: "new"}}, Budgets: []int{2000}, Passes: 20, Methods: []string{tc.method}, Cycles: []uint64{7}}
		outs, err := st.Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(failed) == 0 {
			t.Errorf("audit %g: nothing failed: the comparison would not tell", tc.audit)
		}
		if !slices.Equal(outs[0].Failed, failed) {
			t.Errorf("audit %g: amt check failed %v, the study's cycle %v", tc.audit, failed, outs[0].Failed)
		}
		t.Logf("audit %g: both fail %v", tc.audit, failed)
	}
}
