package experiments

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/bandit/ope"
	"github.com/amt-dev/amt/experiments/record"
)

// alwaysArm is the target policy "always follow-up j".
type alwaysArm struct{ k, j int }

func (p alwaysArm) Arms() int { return p.k }
func (p alwaysArm) Distribution([]float32) ([]float64, error) {
	d := make([]float64, p.k)
	d[p.j] = 1
	return d, nil
}
func (alwaysArm) Learn([]float32, int, float64, float64) error { return nil }

// The decision logs of the hierarchical random agent are amt ope's input:
// every line carries the follow-up's index among the scenario's variants,
// the probability of drawing main arm and parameter together (1/7 for a
// flat arm, 1/7 · 1/36 for a rotation), the scenario's main cost and the
// context; and amt ope's IPS estimate of another policy from them ("always
// flip left-right") agrees with that policy's true cost on the same images.
func TestLogDecisionsOffPolicy(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	env := newFakeOnlineEnv(t, 60, sc)
	dir := t.TempDir()
	var seeds []uint64
	for s := uint64(1); s <= 40; s++ {
		seeds = append(seeds, s)
	}
	spec := AgentSpec{ID: "random", Name: "random"}
	if _, err := RunSeeds(context.Background(), env, sc, func(seed uint64) (Agent, error) { return NewAgent(spec, sc, env.Layout(), seed) },
		dir, SeedsOptions{Agent: "random", Mode: "online", Seeds: seeds, LogDecisions: true}); err != nil {
		t.Fatal(err)
	}
	vars := sc.Variants()
	var all []byte
	for _, s := range seeds {
		b, err := os.ReadFile(filepath.Join(dir, record.DecisionsFile(s)))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	log, err := ope.ReadJSONL(bytes.NewReader(all))
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 60*len(seeds) {
		t.Fatalf("%d decisions, want %d", len(log), 60*len(seeds))
	}
	fliplr := -1
	for i, v := range vars {
		if v.Key() == "fliplr" {
			fliplr = i
		}
	}
	for i, r := range log {
		v := vars[r.Arm]
		want := 1.0 / 7
		if v.Param >= 0 {
			want /= float64(len(sc.Arms[v.Arm].Values))
		}
		if math.Abs(r.Prob-want) > 1e-12 || len(r.Context) != env.Layout().Dim || (r.Cost != 0 && r.Cost != 1) {
			t.Fatalf("decision %d (%s): prob %v (want %v), context %d values, cost %v", i, v.Key(), r.Prob, want, len(r.Context), r.Cost)
		}
	}
	res, err := ope.Evaluate(context.Background(), log, alwaysArm{len(vars), fliplr}, ope.Options{Arms: len(vars), Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	truth := 0.0
	for img := range env.Len() {
		if err := env.Load(context.Background(), img); err != nil {
			t.Fatal(err)
		}
		out, err := env.Evaluate(context.Background(), img, vars[fliplr])
		if err != nil {
			t.Fatal(err)
		}
		truth += sc.MainCost(vars[fliplr].Arm, out.Violated) / float64(env.Len())
	}
	t.Logf("always fliplr: true cost %.4f, IPS %.4f ± %.4f, DR %.4f ± %.4f", truth, res.IPS.Value, res.IPS.StdErr, res.DR.Value, res.DR.StdErr)
	if res.IPS.StdErr <= 0 || math.Abs(res.IPS.Value-truth) > 4*res.IPS.StdErr || math.Abs(res.DR.Value-truth) > 4*res.DR.StdErr {
		t.Errorf("always fliplr: true cost %.4f, IPS %.4f ± %.4f, DR %.4f ± %.4f", truth, res.IPS.Value, res.IPS.StdErr, res.DR.Value, res.DR.StdErr)
	}
}
