package ope

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/amt-dev/amt/bandit"
)

// The synthetic problem: x ~ U(−1,1)², three arms with expected costs
// 0.5 + 0.4·x0, 0.5 − 0.4·x0, 0.3 + 0.3·x1 (Bernoulli costs), logged by a
// context-dependent non-uniform policy.
func meanCost(x []float32, a int) float64 {
	switch a {
	case 0:
		return 0.5 + 0.4*float64(x[0])
	case 1:
		return 0.5 - 0.4*float64(x[0])
	}
	return 0.3 + 0.3*float64(x[1])
}

func logging(x []float32) []float64 {
	if x[0] > 0 {
		return []float64{0.6, 0.3, 0.1}
	}
	return []float64{0.2, 0.2, 0.6}
}

func synthLog(n int, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	log := make([]Record, n)
	for i := range log {
		x := []float32{float32(rng.Float64()*2 - 1), float32(rng.Float64()*2 - 1)}
		p := logging(x)
		a := bandit.Sample(p, rng)
		c := 0.0
		if rng.Float64() < meanCost(x, a) {
			c = 1
		}
		log[i] = Record{Context: x, Arm: a, Prob: p[a], Cost: c}
	}
	return log
}

// fixed is a non-learning target policy given by a function.
type fixed struct{ f func(x []float32) []float64 }

func (f fixed) Arms() int                                    { return 3 }
func (f fixed) Distribution(x []float32) ([]float64, error)  { return f.f(x), nil }
func (f fixed) Learn([]float32, int, float64, float64) error { return nil }

// trueValue integrates the target's expected cost over contexts (grid).
func trueValue(f func(x []float32) []float64) float64 {
	const g = 400
	v := 0.0
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			x := []float32{float32(-1 + (float64(i)+0.5)*2/g), float32(-1 + (float64(j)+0.5)*2/g)}
			for a, p := range f(x) {
				v += p * meanCost(x, a) / (g * g)
			}
		}
	}
	return v
}

// TestEstimatorsRecoverKnownValue checks that IPS, SNIPS and DR recover
// the known values of three target policies within their 99.9 % intervals
// (and within 0.02), and that DR is at least as precise as IPS.
func TestEstimatorsRecoverKnownValue(t *testing.T) {
	targets := map[string]func(x []float32) []float64{
		"uniform": func([]float32) []float64 { return []float64{1. / 3, 1. / 3, 1. / 3} },
		"optimal": func(x []float32) []float64 {
			p := make([]float64, 3)
			best := 0
			for a := 1; a < 3; a++ {
				if meanCost(x, a) < meanCost(x, best) {
					best = a
				}
			}
			p[best] = 1
			return p
		},
		"arm0": func([]float32) []float64 { return []float64{1, 0, 0} },
	}
	log := synthLog(20000, 3)
	for name, f := range targets {
		truth := trueValue(f)
		res, err := Evaluate(context.Background(), log, fixed{f}, Options{Arms: 3, Level: 0.999})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []Estimate{res.IPS, res.SNIPS, res.DR} {
			t.Logf("%s %s: %.4f ± %.4f (truth %.4f, ess %.0f)", name, e.Estimator, e.Value, e.StdErr, truth, e.ESS)
			if truth < e.Lo || truth > e.Hi || math.Abs(e.Value-truth) > 0.02 {
				t.Errorf("%s %s = %.4f [%.4f, %.4f], truth %.4f", name, e.Estimator, e.Value, e.Lo, e.Hi, truth)
			}
		}
		if res.DR.StdErr > res.IPS.StdErr*1.05 {
			t.Errorf("%s: DR stderr %.4f above IPS's %.4f", name, res.DR.StdErr, res.IPS.StdErr)
		}
	}
}

// TestEvaluateLearningPolicy checks that a learning policy evaluated
// progressively beats the uniform policy's estimated cost.
func TestEvaluateLearningPolicy(t *testing.T) {
	log := synthLog(6000, 5)
	cfg, _ := bandit.Resolve("linucb", nil)
	lin, err := bandit.NewPolicy("linucb", 3, 2, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := bandit.NewUniform(3, 2)
	rl, err := Evaluate(context.Background(), log, lin, Options{Arms: 3, Level: 0.95, Learn: true})
	if err != nil {
		t.Fatal(err)
	}
	ru, err := Evaluate(context.Background(), log, u, Options{Arms: 3, Level: 0.95, Learn: true})
	if err != nil {
		t.Fatal(err)
	}
	if rl.DR.Hi >= ru.DR.Lo {
		t.Errorf("linucb DR %.4f [%.4f, %.4f] not below uniform's %.4f [%.4f, %.4f]", rl.DR.Value, rl.DR.Lo, rl.DR.Hi, ru.DR.Value, ru.DR.Lo, ru.DR.Hi)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Evaluate(ctx, log, u, Options{Arms: 3, Level: 0.95}); err == nil {
		t.Error("cancelled evaluation succeeded")
	}
}

func TestReadJSONL(t *testing.T) {
	good := `{"context":[1,2],"arm":1,"prob":0.5,"cost":1}

{"context":[0.5,-2],"arm":0,"prob":1,"cost":0}
`
	recs, err := ReadJSONL(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].Context[1] != -2 || recs[0].Prob != 0.5 {
		t.Errorf("read %+v", recs)
	}
	b, _ := json.Marshal(recs[0])
	if string(b) != `{"context":[1,2],"arm":1,"prob":0.5,"cost":1}` {
		t.Errorf("marshal %s", b)
	}
	bad := []struct{ in, want string }{
		{`{"context":[1],"arm":0,"prob":0,"cost":1}`, "line 1: prob 0"},
		{`{"context":[1],"arm":-1,"prob":1,"cost":1}`, "arm -1"},
		{`{"context":[1],"arm":0,"prob":1}`, `missing "cost"`},
		{`{"context":[1],"arm":0,"prob":1,"cost":1,"x":2}`, "unknown field"},
		{"{\"context\":[1],\"arm\":0,\"prob\":1,\"cost\":1}\n{\"context\":[1,2],\"arm\":0,\"prob\":1,\"cost\":1}", "line 2: context has 2 values"},
		{`not json`, "line 1"},
		{``, "no records"},
	}
	for _, c := range bad {
		if _, err := ReadJSONL(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadJSONL(%q) err = %v, want %q", c.in, err, c.want)
		}
	}
}

func TestEstimatorErrors(t *testing.T) {
	pts := []Point{{Arm: 0, Prob: 0.5, Cost: 1, Target: []float64{1, 0}}, {Arm: 3, Prob: 0.5, Cost: 1, Target: []float64{1, 0}}}
	if _, err := IPS(pts, 0.95); err == nil {
		t.Error("arm outside target accepted")
	}
	if _, err := IPS(pts[:1], 0.95); err == nil {
		t.Error("single record accepted")
	}
	pts[1].Arm = 1
	if _, err := DR(pts, 1.5); err == nil {
		t.Error("level 1.5 accepted")
	}
	// Target never plays a logged arm: SNIPS has no information.
	pts[0].Target, pts[1].Target = []float64{0, 1}, []float64{1, 0}
	if e, err := SNIPS(pts, 0.95); err != nil || !math.IsNaN(e.Value) {
		t.Errorf("SNIPS without overlap = %+v, %v", e, err)
	}
}
