package bandit

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
)

// htsProblem is a synthetic testing problem: a context holds 5 noise
// features with offsets and scales far from standard, and a one-hot
// "predicted class" c ∈ {0, 1, 2} (the grey-box block); plain action "a"
// violates with probability 0.7 for class 0 and 0.2 otherwise, "b" with 0.7
// for class 1; action "rot" takes angles ±5..±45° and violates with
// Φ(−1.2 + 2.5·|v|/45 + shift_c), shift 1 for class 2, so its violation
// rate rises with |v| and small angles rarely violate.
type htsProblem struct{}

// htsLayout is the problem's context layout.
var htsLayout = Layout{Dim: 8, Grey: 3}

func (htsProblem) context(rng *rand.Rand) ([]float32, int) {
	x := make([]float32, 8)
	for i := 0; i < 5; i++ {
		x[i] = float32(3 + 2*rng.NormFloat64())
	}
	c := rng.IntN(3)
	x[5+c] = 1
	return x, c
}

func (htsProblem) prob(class int, action string, v float64) float64 {
	switch action {
	case "a":
		if class == 0 {
			return 0.7
		}
		return 0.2
	case "b":
		if class == 1 {
			return 0.7
		}
		return 0.2
	}
	shift := 0.0
	if class == 2 {
		shift = 1
	}
	return normCDF(-1.2 + 2.5*math.Abs(v)/45 + shift)
}

// htsAngle is the parameter of action "rot" (halving scale 5, as the
// paper's angles).
var htsAngle = scenario.Param{Name: "angle", Unit: "degrees", Symbol: "DEG", Min: -45, Max: 45, Scale: 5}

// htsGrid returns ±5..±45 in steps of 5.
func htsGrid() []float64 {
	var g []float64
	for v := -45.0; v <= 45; v += 5 {
		if v != 0 {
			g = append(g, v)
		}
	}
	return g
}

// htsScenario is the problem's hierarchical scenario with objective obj.
func htsScenario(obj scenario.Objective) scenario.Scenario {
	return scenario.Scenario{Name: "synthetic", Objective: obj, Arms: []scenario.Arm{
		{Name: "a", Action: "a"}, {Name: "b", Action: "b"}, {Name: "rot", Action: "rot", Param: htsAngle, Values: htsGrid()}}}
}

// htsBase turns off hts's optional terms (per-context sign slopes and
// per-value offsets, on by default since the suite chose them), for the
// tests of what the base model alone does: its level semantics and its
// calibration, measured before those terms existed.
var htsBase = Options{"interact-sign": "0", "prior-value": "0"}

// withOpts returns base with the options of more added or replaced.
func withOpts(base, more Options) Options {
	out := maps.Clone(base)
	maps.Copy(out, more)
	return out
}

func newTestHTS(t testing.TB, sc scenario.Scenario, opts Options, seed uint64) *Agent {
	t.Helper()
	a, err := New("hts", sc, htsLayout, opts, seed)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// htsRun plays rounds on htsProblem's contexts, where a follow-up of an
// image of class c violates with probability prob(c, action, value), and
// returns the realised mean violation rate and main reward, and the share
// of the last quarter's parameterised choices at |v| ≤ 10; late, if not
// nil, is called with the class and value of each of those.
func htsRun(t *testing.T, a *Agent, rounds int, seed uint64, prob func(class int, action string, v float64) float64, late func(class int, v float64)) (viol, reward, small float64) {
	t.Helper()
	var pr htsProblem
	rng := rand.New(rand.NewPCG(seed, 11))
	sc := a.Scenario()
	var nParam, nSmall float64
	for r := 0; r < rounds; r++ {
		x, class := pr.context(rng)
		c, err := a.Choose(x, rng)
		if err != nil {
			t.Fatal(err)
		}
		vr, err := sc.Variant(c.Arm, c.Param)
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(vr.Value) && r >= rounds*3/4 {
			nParam++
			if math.Abs(vr.Value) <= 10 {
				nSmall++
			}
			if late != nil {
				late(class, vr.Value)
			}
		}
		v := rng.Float64() < prob(class, vr.Action, vr.Value)
		if v {
			viol++
			reward += sc.MainReward(c.Arm)
		}
		if err := a.Update(x, c, v); err != nil {
			t.Fatal(err)
		}
	}
	return viol / float64(rounds), reward / float64(rounds), nSmall / max(nParam, 1)
}

// With violations as the only reward (the fault objective), hts comes
// close to the per-context oracle (best variant per class) and far above
// uniform choices.
func TestHTSFindsViolations(t *testing.T) {
	sc := htsScenario(scenario.Fault)
	var pr htsProblem
	oracle, uniform := 0.0, 0.0
	for class := 0; class < 3; class++ {
		best := 0.0
		for _, a := range sc.Arms {
			vals := a.Values
			if len(vals) == 0 {
				vals = []float64{math.NaN()}
			}
			for _, v := range vals {
				p := pr.prob(class, a.Action, v)
				best = max(best, p)
				uniform += p / float64(len(vals)) / 3 / 3
			}
		}
		oracle += best / 3
	}
	viol, _, small := htsRun(t, newTestHTS(t, sc, nil, 1), 2000, 1, pr.prob, nil)
	t.Logf("violation rate %.3f, oracle %.3f, uniform %.3f", viol, oracle, uniform)
	if viol < oracle-0.06 || viol < uniform+0.2 {
		t.Errorf("violation rate %.3f, want within 0.06 of the oracle %.3f (uniform %.3f)", viol, oracle, uniform)
	}
	if small > 0.1 {
		t.Errorf("%.0f%% of late rotations at |v| <= 10, which rarely violate", 100*small)
	}
}

// With the paper's halving reward, levels "own" make the parameter level
// maximise ParamReward·p (small angles here: 10000·0.18 at 5° beats
// 39·0.9 at 45°), while "coop" maximises p·(1 + ParamReward/10000), which
// seeks violations (large angles) except where a small angle violates
// about as often (class 2). Late rotations pick each class's optimal |v|
// (±5°).
func TestHTSLevels(t *testing.T) {
	sc := htsScenario(scenario.Paper)
	var pr htsProblem
	rot := sc.Arms[2]
	for _, levels := range htsLevels {
		var opt [3]float64 // the optimal |v| per class
		for class := range opt {
			bv := -1.0
			for j, d := range rot.Values {
				p := pr.prob(class, rot.Action, d)
				v := p * sc.ParamReward(2, j)
				if levels == "coop" {
					v = p * (1 + sc.ParamReward(2, j)/sc.ParamMax())
				}
				if v > bv {
					opt[class], bv = math.Abs(d), v
				}
			}
		}
		var n, hit float64
		viol, _, small := htsRun(t, newTestHTS(t, sc, withOpts(htsBase, Options{"levels": levels}), 2), 2000, 2, pr.prob, func(class int, v float64) {
			n++
			if math.Abs(math.Abs(v)-opt[class]) <= 5 {
				hit++
			}
		})
		t.Logf("levels %s: violation rate %.3f, late rotations at |v| <= 10: %.2f, at the class's optimum %v (±5°): %.2f of %v",
			levels, viol, small, opt, hit/n, n)
		if n < 20 || hit/n < 0.7 {
			t.Errorf("levels %s: %.0f of %.0f late rotations at the optimal angle, want >= 70%%", levels, hit, n)
		}
	}
}

// In a flat scenario of fixed-angle arms rewarded with the halving reward
// (as the paper's rotation-only scenario), the shared ordinal model earns
// at least 70 % of the best fixed angle's reward per iteration.
func TestHTSFlatAngles(t *testing.T) {
	sc := scenario.Scenario{Name: "flat", Objective: scenario.PaperFlat}
	for _, v := range htsGrid() {
		sc.Arms = append(sc.Arms, scenario.Arm{Name: scenario.Key("rot", v), Action: "rot", Param: htsAngle, Values: []float64{v}})
	}
	var pr htsProblem
	best := 0.0
	for i, a := range sc.Arms {
		r := 0.0
		for class := 0; class < 3; class++ {
			r += sc.MainReward(i) * pr.prob(class, a.Action, a.Values[0]) / 3
		}
		best = max(best, r)
	}
	_, reward, _ := htsRun(t, newTestHTS(t, sc, nil, 3), 1000, 3, htsProblem{}.prob, nil)
	t.Logf("reward per iteration %.0f, best fixed angle %.0f", reward, best)
	if reward < 0.7*best {
		t.Errorf("reward per iteration %.0f < 70%% of the best fixed angle's %.0f", reward, best)
	}
}

// htsAngleProblem is a scenario of one rotation action over htsGrid's
// angles on htsProblem's contexts, where an image of class c turned by v
// violates with probability prob(c, v).
type htsAngleProblem struct {
	sc   scenario.Scenario
	prob func(class int, v float64) float64
}

func newHTSAngleProblem(name string, prob func(class int, v float64) float64) htsAngleProblem {
	return htsAngleProblem{prob: prob, sc: scenario.Scenario{Name: name, Objective: scenario.Fault, Arms: []scenario.Arm{
		{Name: "rot", Action: "rot", Param: htsAngle, Values: htsGrid()}}}}
}

// bestFixed returns the violation rate of the best single angle.
func (p htsAngleProblem) bestFixed() float64 {
	best := 0.0
	for _, v := range htsGrid() {
		best = max(best, (p.prob(0, v)+p.prob(1, v)+p.prob(2, v))/3)
	}
	return best
}

// actionProb is prob in htsRun's form.
func (p htsAngleProblem) actionProb(class int, _ string, v float64) float64 { return p.prob(class, v) }

// play runs hts with opts and seed for 2,000 rounds and returns its
// violation rate.
func (p htsAngleProblem) play(t *testing.T, opts Options, seed uint64) float64 {
	t.Helper()
	viol, _, _ := htsRun(t, newTestHTS(t, p.sc, opts, seed), 2000, seed, p.actionProb, nil)
	return viol
}

// When the violation curve is one the value basis cannot follow (here a
// spike: 0.75 at +30°, 0.3 at every other angle), prior-value's per-value
// offsets learn it value by value: hts then plays +30° most of the time
// and comes close to it, while without them it settles on the basis's
// best fit and misses.
func TestHTSPriorValue(t *testing.T) {
	const spike, hi, lo = 30.0, 0.75, 0.3
	p := newHTSAngleProblem("spike", func(_ int, v float64) float64 {
		if v == spike {
			return hi
		}
		return lo
	})
	run := func(opts Options) (viol, late float64) {
		var n float64
		viol, _, _ = htsRun(t, newTestHTS(t, p.sc, opts, 4), 2000, 4, p.actionProb, func(_ int, v float64) {
			n++
			if v == spike {
				late++
			}
		})
		return viol, late / n
	}
	vOff, lateOff := run(htsBase)
	vOn, lateOn := run(Options{"interact-sign": "0"}) // prior-value's default, 0.3
	t.Logf("violation rate %.3f without offsets (late share at +30°: %.2f), %.3f with (%.2f); best fixed %.2f", vOff, lateOff, vOn, lateOn, hi)
	if lateOn < 0.7 || vOn < hi-0.1 || vOn < vOff+0.05 {
		t.Errorf("with prior-value: violation rate %.3f (without: %.3f), late share at +30° %.2f; want ≥ %.2f, 0.05 above, and ≥ 0.7", vOn, vOff, lateOn, hi-0.1)
	}
}

// When the context decides the direction (class 0 images break under
// positive angles, class 1 under negative ones, class 2 under neither),
// interact-sign's per-context slopes in sign(v)·u let hts rotate each
// image the way that breaks it: it beats every fixed angle, which hts
// without them cannot.
func TestHTSInteractSign(t *testing.T) {
	p := newHTSAngleProblem("sign", func(class int, v float64) float64 {
		switch {
		case class == 0 && v > 0, class == 1 && v < 0:
			return normCDF(-1 + 3*math.Abs(v)/45)
		}
		return 0.1
	})
	bestFixed := p.bestFixed()
	off, on := p.play(t, Options{"interact-sign": "0"}, 5), p.play(t, nil, 5) // the defaults: interact-sign 4
	t.Logf("violation rate %.3f without sign slopes, %.3f with; best fixed angle %.3f", off, on, bestFixed)
	if on < bestFixed+0.1 || off > bestFixed+0.03 {
		t.Errorf("violation rate %.3f with interact-sign (%.3f without), want ≥ the best fixed angle's %.3f + 0.1 (and without ≤ it + 0.03)", on, off, bestFixed)
	}
}

// When the context decides the shape of the violation curve (class 0
// images break more the larger the angle, class 1 most at ±15° and class 2
// at ±30°, and less beyond), interact-curve's per-context slopes in u² let
// hts turn each image by the angle that breaks it; with one curvature for
// all classes it cannot place every class's peak.
func TestHTSInteractCurve(t *testing.T) {
	p := newHTSAngleProblem("curve", func(class int, v float64) float64 {
		u := math.Abs(v) / 45
		switch class {
		case 0:
			return normCDF(-1 + 2*u)
		case 1:
			return normCDF(0.5 - 40*(u-1./3)*(u-1./3))
		}
		return normCDF(0.5 - 40*(u-2./3)*(u-2./3))
	})
	bestFixed := p.bestFixed()
	// run returns the mean violation rate over four seeds (one seed can
	// let the smooth model's per-value offsets come close by chance).
	run := func(opts Options) float64 {
		const seeds = 4
		total := 0.0
		for seed := uint64(6); seed < 6+seeds; seed++ {
			total += p.play(t, opts, seed)
		}
		return total / seeds
	}
	off, on := run(nil), run(Options{"interact-curve": "4"})
	t.Logf("violation rate %.3f without per-context curvature, %.3f with; best fixed angle %.3f", off, on, bestFixed)
	if on < bestFixed+0.15 || on < off+0.05 {
		t.Errorf("violation rate %.3f with interact-curve (%.3f without), want ≥ the best fixed angle's %.3f + 0.15 and ≥ without + 0.05 (means over four seeds)", on, off, bestFixed)
	}
}

// The logged probabilities are the choice frequencies of the draws, the
// same seed gives the same choices, and bad input is rejected without
// changing the agent.
func TestHTSChoices(t *testing.T) {
	sc := mr.Hierarchical()
	const dim = 20
	mk := func() *Agent {
		a, err := New("hts", sc, Layout{Dim: dim}, Options{"samples": "8"}, 7)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	h1, h2 := mk(), mk()
	rng1, rng2 := rand.New(rand.NewPCG(1, 1)), rand.New(rand.NewPCG(1, 1))
	ctxRng := rand.New(rand.NewPCG(2, 2))
	for r := 0; r < 200; r++ {
		x := randCtx(ctxRng, dim)
		c1, err := h1.Choose(x, rng1)
		if err != nil {
			t.Fatal(err)
		}
		c2, _ := h2.Choose(x, rng2)
		if c1 != c2 {
			t.Fatalf("round %d: same seed, choices %+v and %+v", r, c1, c2)
		}
		if c1.ArmProb <= 0 || c1.ArmProb > 1 || math.Abs(c1.ArmProb*8-math.Round(c1.ArmProb*8)) > 1e-9 {
			t.Fatalf("arm probability %v is not a frequency of 8 draws", c1.ArmProb)
		}
		if (c1.Param >= 0) != sc.Arms[c1.Arm].Hierarchical() || (c1.Param >= 0 && !(c1.ParamProb > 0 && c1.ParamProb <= 1)) {
			t.Fatalf("choice %+v inconsistent with arm %q", c1, sc.Arms[c1.Arm].Name)
		}
		v := r%3 == 0
		if err := h1.Update(x, c1, v); err != nil {
			t.Fatal(err)
		}
		if err := h2.Update(x, c2, v); err != nil {
			t.Fatal(err)
		}
	}
	before := stateBytes(t, h1)
	x := randCtx(ctxRng, dim)
	for _, c := range []Choice{{Arm: 7, Param: -1}, {Arm: 0, Param: 2}, {Arm: 5, Param: -1}, {Arm: 5, Param: 36}} {
		if err := h1.Update(x, c, true); !errors.Is(err, ErrInput) {
			t.Errorf("Update(%+v) = %v, want ErrInput", c, err)
		}
	}
	if err := h1.Update([]float32{1, 2}, Choice{Arm: 0, Param: -1}, true); !errors.Is(err, ErrInput) {
		t.Errorf("Update with a short context = %v, want ErrInput", err)
	}
	nan := append([]float32(nil), x...)
	nan[2] = float32(math.NaN())
	if _, err := h1.Choose(nan, rng1); !errors.Is(err, ErrInput) {
		t.Errorf("Choose with NaN = %v, want ErrInput", err)
	}
	if err := h1.Update(nan, Choice{Arm: 0, Param: -1}, true); !errors.Is(err, ErrInput) {
		t.Errorf("Update with NaN = %v, want ErrInput", err)
	}
	if !bytes.Equal(before, stateBytes(t, h1)) {
		t.Error("rejected input changed the agent's state")
	}
	if h1.Main() != nil || h1.Sub(5) != nil {
		t.Error("hts has flat levels")
	}
}

// The posterior predicts the violation rates of the synthetic problem:
// trained on 4000 uniformly drawn choices, its predictive probability for
// "a", "b" and the smallest, a middle and the largest rotation of every
// class is within 0.08 of the truth.
func TestHTSProbability(t *testing.T) {
	sc := htsScenario(scenario.Fault)
	a := newTestHTS(t, sc, htsBase, 4)
	var pr htsProblem
	rng := rand.New(rand.NewPCG(4, 4))
	for r := 0; r < 4000; r++ {
		x, class := pr.context(rng)
		if _, err := a.Choose(x, rng); err != nil { // observes x
			t.Fatal(err)
		}
		c := Choice{Arm: rng.IntN(3), Param: -1, ArmProb: 1. / 3}
		if sc.Arms[c.Arm].Hierarchical() {
			c.Param, c.ParamProb = rng.IntN(len(sc.Arms[c.Arm].Values)), 1./float64(len(sc.Arms[c.Arm].Values))
		}
		v, _ := sc.Variant(c.Arm, c.Param)
		if err := a.Update(x, c, rng.Float64() < pr.prob(class, v.Action, v.Value)); err != nil {
			t.Fatal(err)
		}
	}
	h := a.joint.(*hts)
	n := len(htsGrid())
	for class := 0; class < 3; class++ {
		var x []float32
		for c := -1; c != class; {
			x, c = pr.context(rng)
		}
		z, err := a.transform(x)
		if err != nil {
			t.Fatal(err)
		}
		for _, cell := range [][2]int{{0, -1}, {1, -1}, {2, 0}, {2, n / 4}, {2, n/2 - 1}, {2, n - 1}} {
			p, err := h.probability(z, cell[0], cell[1])
			if err != nil {
				t.Fatal(err)
			}
			v, _ := sc.Variant(cell[0], cell[1])
			if want := pr.prob(class, v.Action, v.Value); math.Abs(p-want) > 0.08 {
				t.Errorf("class %d, %s: predictive %.3f, truth %.3f", class, v.Key(), p, want)
			}
		}
	}
}

func TestHTSConfigErrors(t *testing.T) {
	for _, o := range []Options{{"samples": "0"}, {"prior": "0"}, {"prior-angle": "NaN"}, {"temp": "-1"},
		{"levels": "both"}, {"drift": "2"}, {"proj": "-1"}, {"round": "true"}} {
		if _, err := New("hts", mr.Hierarchical(), Layout{Dim: 10}, o, 1); err == nil {
			t.Errorf("options %v: no error", o)
		}
	}
	if _, err := New("hts", mr.Hierarchical(), Layout{Dim: 10, Grey: 11}, nil, 1); err == nil {
		t.Error("grey-box block larger than the context: no error")
	}
	if _, err := New("hts", scenario.Scenario{Name: "empty", Objective: scenario.Paper}, Layout{Dim: 10}, nil, 1); err == nil {
		t.Error("empty scenario: no error")
	}
	if _, err := NewPolicy("hts", 3, 2, Config{}, 1); err == nil {
		t.Error("hts has a flat policy")
	}
}

// FuzzHTS feeds arbitrary contexts and choices to hts through the Agent:
// invalid input must give ErrInput and leave the state unchanged, and
// nothing may panic.
func FuzzHTS(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}, 5, 3, true)
	f.Add([]byte{0, 0, 192, 127, 0, 0, 0, 0, 0, 0, 0, 0}, 0, -1, false)
	f.Add([]byte{0, 0, 128, 127, 0, 0, 0, 0, 0, 0, 0, 0}, 6, 17, true)
	f.Add([]byte{1, 2, 3}, -1, 0, false)
	const dim = 3
	a, err := New("hts", mr.Hierarchical(), Layout{Dim: dim, Grey: 1}, Options{"samples": "4"}, 1)
	if err != nil {
		f.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	f.Fuzz(func(t *testing.T, raw []byte, arm, param int, violated bool) {
		ctx := make([]float32, len(raw)/4)
		for i := range ctx {
			ctx[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
		}
		validCtx := checkContext(ctx, dim) == nil
		before := stateBytes(t, a)
		c, err := a.Choose(ctx, rng)
		if validCtx != (err == nil) || (!validCtx && !errors.Is(err, ErrInput)) {
			t.Fatalf("Choose(%v) = %+v, %v", ctx, c, err)
		}
		if !validCtx && !bytes.Equal(before, stateBytes(t, a)) {
			t.Fatal("rejected context changed the state")
		}
		if validCtx {
			if err := a.Update(ctx, c, violated); err != nil {
				t.Fatalf("Update of its own choice %+v: %v", c, err)
			}
		}
		_, verr := a.Scenario().Variant(arm, param)
		before = stateBytes(t, a)
		err = a.Update(ctx, Choice{Arm: arm, Param: param}, violated)
		if (validCtx && verr == nil) != (err == nil) || (err != nil && !errors.Is(err, ErrInput)) {
			t.Fatalf("Update(%v, arm %d, param %d) = %v", ctx, arm, param, err)
		}
		if err != nil && !bytes.Equal(before, stateBytes(t, a)) {
			t.Fatal("rejected update changed the state")
		}
	})
}

// draw sums each w_l = mean_l + Σ_k L_lk·temp·ε_k in k order with the ε_k
// drawn in k order: bit for bit the column-by-column accumulation it
// replaced.
func TestHTSDrawOrder(t *testing.T) {
	a := newTestHTS(t, htsScenario(scenario.Fault), nil, 3)
	var pr htsProblem
	htsRun(t, a, 300, 3, pr.prob, nil)
	h := a.joint.(*hts)
	h.moments()
	h.rng = rand.New(rand.NewPCG(9, 9))
	h.draw()
	ref := rand.New(rand.NewPCG(9, 9))
	for gi, g := range h.groups {
		n := len(g.mean)
		w := append([]float64(nil), g.mean...)
		for k := 0; k < n; k++ {
			e := h.cfg.Temp * ref.NormFloat64()
			for l := k; l < n; l++ {
				w[l] += g.cov[l*n+k] * e
			}
		}
		for l := range w {
			if math.Float64bits(w[l]) != math.Float64bits(g.w[l]) {
				t.Fatalf("group %d: w[%d] = %v, column order gives %v", gi, l, g.w[l], w[l])
			}
		}
	}
}
