package bandit

import (
	"bytes"
	"encoding/gob"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
)

// TestSample checks Sample's frequencies against the distribution.
func TestSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	p := []float64{0.5, 0, 0.25, 0.25}
	n := 40000
	counts := make([]int, len(p))
	for i := 0; i < n; i++ {
		counts[Sample(p, rng)]++
	}
	for a, c := range counts {
		if got := float64(c) / float64(n); math.Abs(got-p[a]) > 0.01 {
			t.Errorf("arm %d drawn with frequency %.4f, want %.2f", a, got, p[a])
		}
	}
	if counts[1] != 0 {
		t.Errorf("zero-probability arm drawn %d times", counts[1])
	}
}

// TestEnforceMinimum checks VW's floor on hand-computed cases.
func TestEnforceMinimum(t *testing.T) {
	cases := []struct {
		in        []float64
		eps       float64
		floorZero bool
		want      []float64
	}{
		{[]float64{1, 0, 0}, 1, false, []float64{1, 0, 0}},
		{[]float64{2. / 3, 1. / 3, 0}, 1, false, []float64{0.5, 0.5, 0}},
		{[]float64{2. / 3, 1. / 3, 0}, 0.3, false, []float64{2. / 3, 1. / 3, 0}},
		{[]float64{1, 0, 0, 0}, 0.4, true, []float64{0.7, 0.1, 0.1, 0.1}},
		{[]float64{1, 0, 0, 0}, 1, true, []float64{0.25, 0.25, 0.25, 0.25}},
	}
	for i, c := range cases {
		p := append([]float64(nil), c.in...)
		enforceMinimum(p, c.eps, c.floorZero)
		for a := range p {
			if math.Abs(p[a]-c.want[a]) > 1e-12 {
				t.Errorf("case %d: got %v, want %v", i, p, c.want)
				break
			}
		}
	}
}

// TestLegacyCoverStructure is the property test of VW 8.x's probability
// structure: with N = 3 policies at most 3 arms have non-zero probability
// and every probability is 1, 2/3, 1/2 or 1/3, over many random contexts
// and updates (with and without the network, with K = 7 and K = 36).
func TestLegacyCoverStructure(t *testing.T) {
	allowed := []float64{1, 2. / 3, 0.5, 1. / 3}
	for _, c := range []struct {
		k      int
		hidden string
	}{{7, "16"}, {36, "16"}, {7, "0"}} {
		cfg, err := Resolve("cover", Options{"hidden": c.hidden})
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPolicy("cover", c.k, 6, cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		for r := 0; r < 600; r++ {
			x := randCtx(rng, 6)
			d, err := p.Distribution(x)
			if err != nil {
				t.Fatal(err)
			}
			nz := 0
			for a, v := range d {
				if v == 0 {
					continue
				}
				nz++
				ok := false
				for _, w := range allowed {
					ok = ok || math.Abs(v-w) < 1e-12
				}
				if !ok {
					t.Fatalf("k=%d round %d: arm %d has probability %v, want one of 1, 2/3, 1/2, 1/3 (pmf %v)", c.k, r, a, v, d)
				}
			}
			if nz > 3 {
				t.Fatalf("k=%d round %d: %d non-zero arms, want at most 3 (pmf %v)", c.k, r, nz, d)
			}
			a := Sample(d, rng)
			cost := float64(rng.IntN(2))
			if rng.IntN(3) == 0 {
				cost = rng.Float64() * 10000
			}
			if err := p.Learn(x, a, round2(d[a]), cost); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestModernCoverFloor checks that modern cover floors every arm at ε/K.
func TestModernCoverFloor(t *testing.T) {
	cfg, _ := Resolve("cover-modern", nil)
	p, err := NewPolicy("cover-modern", 7, 4, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for r := 0; r < 300; r++ {
		x := randCtx(rng, 4)
		d, err := p.Distribution(x)
		if err != nil {
			t.Fatal(err)
		}
		for a, v := range d {
			if v < 0.1/7-1e-12 {
				t.Fatalf("round %d: arm %d has probability %v < ε/K = %v", r, a, v, 0.1/7)
			}
		}
		a := Sample(d, rng)
		if err := p.Learn(x, a, d[a], float64(rng.IntN(2))); err != nil {
			t.Fatal(err)
		}
	}
}

// runAgent runs rounds decisions of a on random contexts with violations
// drawn from a fixed context-dependent rule.
func runAgent(t testing.TB, a *Agent, rounds, dim int, rng *rand.Rand) []Choice {
	t.Helper()
	var out []Choice
	for r := 0; r < rounds; r++ {
		x := randCtx(rng, dim)
		c, err := a.Choose(x, rng)
		if err != nil {
			t.Fatal(err)
		}
		violated := (x[0] > 0) == (c.Arm%2 == 0) && (c.Param < 0 || c.Param%3 == 0)
		if err := a.Update(x, c, violated); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func stateBytes(t testing.TB, a *Agent) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := a.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDeterminismAndResume checks, for every agent on the hierarchical
// scenario, that the same seed gives byte-identical state, and that saving
// after 200 rounds, loading and running 200 more equals running 400.
func TestDeterminismAndResume(t *testing.T) {
	const dim = 6
	spec := mr.Hierarchical()
	for _, name := range Agents() {
		t.Run(name, func(t *testing.T) {
			a1, err := New(name, spec, Layout{Dim: dim}, nil, 42)
			if err != nil {
				t.Fatal(err)
			}
			a2, _ := New(name, spec, Layout{Dim: dim}, nil, 42)
			pcg1 := rand.NewPCG(9, 9)
			rng1 := rand.New(pcg1)
			rng2 := rand.New(rand.NewPCG(9, 9))
			c1 := runAgent(t, a1, 200, dim, rng1)
			runAgent(t, a2, 200, dim, rng2)
			if !bytes.Equal(stateBytes(t, a1), stateBytes(t, a2)) {
				t.Fatal("two runs with the same seed give different state bytes")
			}
			path := filepath.Join(t.TempDir(), "agent.state")
			if err := a2.Save(path); err != nil {
				t.Fatal(err)
			}
			a3, err := Load(path, spec, Layout{Dim: dim})
			if err != nil {
				t.Fatal(err)
			}
			// The caller's generator continues where run 1's is.
			pcgState, _ := pcg1.MarshalBinary()
			pcg3 := new(rand.PCG)
			if err := pcg3.UnmarshalBinary(pcgState); err != nil {
				t.Fatal(err)
			}
			rng3 := rand.New(pcg3)
			c1 = append(c1, runAgent(t, a1, 200, dim, rng1)...)
			c3 := runAgent(t, a3, 200, dim, rng3)
			for i, c := range c3 {
				if c != c1[200+i] {
					t.Fatalf("round %d after reload: choice %+v, uninterrupted run chose %+v", 200+i, c, c1[200+i])
				}
			}
			if !bytes.Equal(stateBytes(t, a1), stateBytes(t, a3)) {
				t.Fatal("state after save/load/continue differs from the uninterrupted run")
			}
			if name == "cover" {
				// Learning happened: the state differs from a fresh agent's.
				fresh, _ := New(name, spec, Layout{Dim: dim}, nil, 42)
				if bytes.Equal(stateBytes(t, a1), stateBytes(t, fresh)) {
					t.Fatal("400 rounds left the agent's state unchanged")
				}
			}
		})
	}
}

// TestLoadErrors checks the clear errors for mismatching state files.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.state")
	a, err := New("cover", mr.Hierarchical(), Layout{Dim: 5}, Options{"hidden": "2"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, mr.Hierarchical(), Layout{Dim: 6}); err == nil || !strings.Contains(err.Error(), "context dimension 5, want 6") {
		t.Errorf("wrong dimension: err = %v", err)
	}
	if _, err := Load(path, flatRotation(t), Layout{Dim: 5}); err == nil || !strings.Contains(err.Error(), "scenario") {
		t.Errorf("wrong scenario: err = %v", err)
	}
	// Same scenario name, different arm counts.
	spec := mr.Hierarchical()
	spec.Arms = spec.Arms[:6]
	if _, err := Load(path, spec, Layout{Dim: 5}); err == nil || !strings.Contains(err.Error(), "arm counts") {
		t.Errorf("wrong arm counts: err = %v", err)
	}
	// Another format version.
	var buf bytes.Buffer
	buf.WriteString(stateMagic)
	h := a.header()
	h.Version = StateVersion + 1
	if err := gob.NewEncoder(&buf).Encode(h); err != nil {
		t.Fatal(err)
	}
	vpath := filepath.Join(dir, "v.state")
	if err := os.WriteFile(vpath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(vpath, mr.Hierarchical(), Layout{Dim: 5}); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("wrong version: err = %v", err)
	}
	// Not a state file; truncated state.
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("hello"), 0o644)
	if _, err := Load(junk, mr.Hierarchical(), Layout{Dim: 5}); err == nil || !strings.Contains(err.Error(), "not an amt bandit state") {
		t.Errorf("junk file: err = %v", err)
	}
	full, _ := os.ReadFile(path)
	trunc := filepath.Join(dir, "trunc")
	os.WriteFile(trunc, full[:len(full)/2], 0o644)
	if _, err := Load(trunc, mr.Hierarchical(), Layout{Dim: 5}); err == nil {
		t.Error("truncated file loaded without error")
	}
	// LoadOrNew: missing file → new; existing with other options → error.
	b, loaded, err := LoadOrNew(filepath.Join(dir, "missing"), "cover", mr.Hierarchical(), Layout{Dim: 5}, nil, 1)
	if err != nil || loaded || b == nil {
		t.Errorf("LoadOrNew(missing) = %v, %v, %v; want new agent", b, loaded, err)
	}
	if _, loaded, err := LoadOrNew(path, "cover", mr.Hierarchical(), Layout{Dim: 5}, Options{"hidden": "2"}, 1); err != nil || !loaded {
		t.Errorf("LoadOrNew(existing) loaded=%v err=%v", loaded, err)
	}
	if _, _, err := LoadOrNew(path, "cover", mr.Hierarchical(), Layout{Dim: 5}, nil, 1); err == nil || !strings.Contains(err.Error(), "options") {
		t.Errorf("LoadOrNew with other options: err = %v", err)
	}
	if _, _, err := LoadOrNew(path, "linucb", mr.Hierarchical(), Layout{Dim: 5}, nil, 1); err == nil || !strings.Contains(err.Error(), "agent") {
		t.Errorf("LoadOrNew with another agent: err = %v", err)
	}
}

// TestOptions checks option parsing and its errors.
func TestOptions(t *testing.T) {
	o, err := ParseOptions("hidden=0, psi=0.1,mode=modern")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Resolve("cover", o)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hidden != 0 || cfg.Psi != 0.1 || cfg.Mode != "modern" || !cfg.Round {
		t.Errorf("resolved %+v", cfg)
	}
	bad := []struct{ agent, opts, want string }{
		{"cover", "alpha=1", `unknown option "alpha" (known:`},
		{"cover", "hiden=1", `unknown option "hiden"; did you mean "hidden"? (known:`},
		{"cover", "hidden=-1", "hidden"},
		{"cover", "psi=abc", "psi"},
		{"cover", "mode=new", "legacy or modern"},
		{"cover", "estimator=iwr", "not available for cover"},
		{"linucb", "lambda=0", "lambda"},
		{"lints", "samples=0", "samples"},
		{"nope", "", `unknown agent "nope" (known:`},
		{"covr", "", `unknown agent "covr"; did you mean "cover"? (known:`},
	}
	for _, b := range bad {
		o, err := ParseOptions(b.opts)
		if err == nil {
			_, err = New(b.agent, mr.Hierarchical(), Layout{Dim: 3}, o, 1)
		}
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s %q: err = %v, want it to mention %q", b.agent, b.opts, err, b.want)
		}
	}
	for _, s := range []string{"a", "=1", "a=1,a=2"} {
		if _, err := ParseOptions(s); err == nil {
			t.Errorf("ParseOptions(%q) succeeded", s)
		}
	}
}

// TestAgentRewards checks the paper's reward-to-cost rules through a
// recording policy.
func TestAgentRewards(t *testing.T) {
	a, err := New("cover", mr.Hierarchical(), Layout{Dim: 2}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	main, rot := &recorder{k: 7}, &recorder{k: 36}
	a.main, a.subs[5] = main, rot
	x := []float32{0.5, -0.5}
	// rotation at index 14 = −20°: reward 10000/2^3 = 1250, cost 8750.
	if err := a.Update(x, Choice{Arm: 5, Param: 14, ArmProb: 1. / 3, ParamProb: 0.6666}, true); err != nil {
		t.Fatal(err)
	}
	if main.cost != 0 || main.prob != 1./3 || rot.cost != 8750 || rot.arm != 14 {
		t.Errorf("violation: main cost %v prob %v, rotation cost %v arm %d", main.cost, main.prob, rot.cost, rot.arm)
	}
	if err := a.Update(x, Choice{Arm: 5, Param: 0, ArmProb: 1, ParamProb: 1}, false); err != nil {
		t.Fatal(err)
	}
	if main.cost != 1 || rot.cost != 10000 {
		t.Errorf("no violation: main cost %v, rotation cost %v", main.cost, rot.cost)
	}
	// −45° reward 39.0625, cost 9960.9375 → "9960.94" with rounding.
	if err := a.Update(x, Choice{Arm: 5, Param: 9, ArmProb: 1, ParamProb: 1}, true); err != nil {
		t.Fatal(err)
	}
	if rot.cost != 9960.94 {
		t.Errorf("rounded cost %v, want 9960.94", rot.cost)
	}
	for _, c := range []Choice{{Arm: 7, Param: -1, ArmProb: 1}, {Arm: 0, Param: 2, ArmProb: 1}, {Arm: 5, Param: 36, ArmProb: 1, ParamProb: 1}, {Arm: 5, Param: 1, ArmProb: 1, ParamProb: -1}} {
		if err := a.Update(x, c, true); err == nil {
			t.Errorf("Update(%+v) succeeded", c)
		}
	}
	// A flat scenario: the arm's main reward is the halving reward of its
	// angle, the main maximum the largest of them (10000 at ±5°), and
	// there are no parameter bandits.
	f, err := New("cover", flatRotation(t), Layout{Dim: 2}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	fm := &recorder{k: 36}
	f.main = fm
	if err := f.Update(x, Choice{Arm: 1, Param: -1, ArmProb: 1}, true); err != nil { // −85°
		t.Fatal(err)
	}
	if want := round2(10000 - 10000/math.Pow(2, 16)); fm.cost != want || f.Sub(1) != nil {
		t.Errorf("flat rotation at -85°: cost %v, want %v", fm.cost, want)
	}
}

// flatRotation is the paper's flat rotation scenario.
func flatRotation(t testing.TB) scenario.Scenario {
	s, err := mr.Builtin("rotation")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type recorder struct {
	k         int
	arm       int
	prob      float64
	cost      float64
	Uniform   // persistent no-ops
	learnings int
}

func (r *recorder) Arms() int { return r.k }
func (r *recorder) Distribution([]float32) ([]float64, error) {
	return uniform(r.k), nil
}
func (r *recorder) Learn(_ []float32, arm int, prob, cost float64) error {
	r.arm, r.prob, r.cost = arm, prob, cost
	r.learnings++
	return nil
}

// FuzzPolicy feeds arbitrary contexts, arms, probabilities and costs to
// every policy: invalid input must give ErrInput, valid input a
// distribution, and nothing may panic.
func FuzzPolicy(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}, 1, 0.5, 1.0)
	f.Add([]byte{0, 0, 192, 127, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 1.0, 0.0)
	f.Add([]byte{0, 0, 128, 127, 0, 0, 0, 0, 0, 0, 0, 0}, 2, 1e-300, 1e300)
	f.Add([]byte{1, 2, 3}, -1, 0.0, math.NaN())
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 2, 1.5, math.Inf(1))
	const dim, k = 3, 3
	var pols []Policy
	for _, a := range AgentTable() {
		name := a.Name
		if a.joint != nil {
			continue // no flat policy; FuzzHTS
		}
		cfg, _ := Resolve(name, Options{})
		if name != "random" && name != "linucb" && name != "lints" {
			cfg.Hidden = 2
		}
		p, err := NewPolicy(name, k, dim, cfg, 1)
		if err != nil {
			f.Fatal(err)
		}
		pols = append(pols, p)
	}
	f.Fuzz(func(t *testing.T, raw []byte, arm int, prob, cost float64) {
		ctx := make([]float32, len(raw)/4)
		for i := range ctx {
			ctx[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
		}
		valid := checkLearn(ctx, dim, k, arm, prob, cost) == nil
		for _, p := range pols {
			d, err := p.Distribution(ctx)
			if err == nil {
				sum := 0.0
				for _, v := range d {
					sum += v
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Fatalf("%T: distribution %v", p, d)
				}
			} else if !errors.Is(err, ErrInput) {
				t.Fatalf("%T: Distribution error %v is not ErrInput", p, err)
			}
			err = p.Learn(ctx, arm, prob, cost)
			if valid && err != nil {
				t.Fatalf("%T: valid Learn failed: %v", p, err)
			}
			if !valid && !errors.Is(err, ErrInput) {
				t.Fatalf("%T: invalid Learn(%v, %d, %v, %v) gave %v, want ErrInput", p, ctx, arm, prob, cost, err)
			}
		}
	})
}

// An agent marked ContextFree makes the same choices whatever the context
// (so callers may skip computing features for it); every other agent of
// the table reports that it uses the context.
func TestContextFree(t *testing.T) {
	sc, err := mr.Builtin("hierarchical")
	if err != nil {
		t.Fatal(err)
	}
	const dim = 5
	for _, info := range AgentTable() {
		t.Run(info.Name, func(t *testing.T) {
			a, err := New(info.Name, sc, Layout{Dim: dim}, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			if a.UsesContext() == info.ContextFree {
				t.Fatalf("UsesContext %v, ContextFree %v", a.UsesContext(), info.ContextFree)
			}
			if !info.ContextFree {
				return
			}
			b, _ := New(info.Name, sc, Layout{Dim: dim}, nil, 1)
			r1, r2 := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
			ctxRng := rand.New(rand.NewPCG(5, 6))
			zero := make([]float32, dim)
			for i := range 300 {
				x := make([]float32, dim)
				for j := range x {
					x[j] = float32(ctxRng.NormFloat64())
				}
				c1, err1 := a.Choose(x, r1)
				c2, err2 := b.Choose(zero, r2)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if c1 != c2 {
					t.Fatalf("step %d: %+v with a context, %+v with zeros", i, c1, c2)
				}
				violated := (c1.Arm+i)%3 == 0
				if err := a.Update(x, c1, violated); err != nil {
					t.Fatal(err)
				}
				if err := b.Update(zero, c2, violated); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// seed: 0 is the original's seeding (every VW instance of every run used
// VW's seed 0): agents of different runs then learn identically from the
// same data, while with seed: run (the default) their network
// initialisations differ. The default stays out of Canonical, so state
// files saved before the option existed still load.
func TestFixedSeed(t *testing.T) {
	sc, err := mr.Builtin("hierarchical")
	if err != nil {
		t.Fatal(err)
	}
	trace := func(opts Options, runSeed uint64) []Choice {
		a, err := New("cover", sc, Layout{Dim: 3}, opts, runSeed)
		if err != nil {
			t.Fatal(err)
		}
		rng, data := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(8, 8))
		var out []Choice
		for i := range 400 {
			x := []float32{float32(data.Float64()), float32(data.Float64()), 1}
			c, err := a.Choose(x, rng)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Update(x, c, (c.Arm+i)%2 == 0); err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
		return out
	}
	if a, b := trace(Options{"seed": "0"}, 1), trace(Options{"seed": "0"}, 2); !slices.Equal(a, b) {
		t.Error("seed 0: runs with different seeds learned differently")
	}
	if a, b := trace(nil, 1), trace(nil, 2); slices.Equal(a, b) {
		t.Error("seed run: runs with different seeds learned identically")
	}
	cfg, _ := Resolve("cover", nil)
	if c := cfg.Canonical("cover"); strings.Contains(c, "seed") {
		t.Errorf("default seed in Canonical: %s", c)
	}
	cfg, _ = Resolve("cover", Options{"seed": "0"})
	if c := cfg.Canonical("cover"); !strings.Contains(c, "seed=0") || !cfg.FixedSeed {
		t.Errorf("seed 0: %s %+v", c, cfg)
	}
	if _, err := Resolve("cover", Options{"seed": "-1"}); err == nil {
		t.Error("seed -1: no error")
	}
}
