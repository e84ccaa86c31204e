package bandit

import (
	"bytes"
	"encoding/gob"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/amt-dev/amt/mr"
)

// rawContexts returns n contexts of dimension d whose values have very
// different offsets and scales (value i ≈ 100·i + (i+1)·N(0,1)), with
// column dead constant.
func rawContexts(n, d, dead int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	xs := make([][]float32, n)
	for k := range xs {
		x := make([]float32, d)
		for i := range x {
			x[i] = float32(100*float64(i) + float64(i+1)*rng.NormFloat64())
		}
		x[dead] = 7
		xs[k] = x
	}
	return xs
}

func TestStandardizerMoments(t *testing.T) {
	const n, d = 4000, 6
	xs := rawContexts(n, d, 2, 1)
	s, err := NewStandardizer(d, StandardizerConfig{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		if err := s.Observe(x); err != nil {
			t.Fatal(err)
		}
	}
	sum, sum2 := make([]float64, d), make([]float64, d)
	out := make([]float32, s.Dim())
	for _, x := range xs {
		if _, err := s.Transform(out, x); err != nil {
			t.Fatal(err)
		}
		for i, v := range out {
			sum[i] += float64(v)
			sum2[i] += float64(v) * float64(v)
		}
	}
	for i := range sum {
		m, v := sum[i]/n, sum2[i]/n-(sum[i]/n)*(sum[i]/n)
		if i == 2 {
			if sum2[i] != 0 {
				t.Errorf("constant column %d maps to non-zero values (Σv² = %v)", i, sum2[i])
			}
			continue
		}
		if math.Abs(m) > 0.01 || math.Abs(v-1) > 0.02 {
			t.Errorf("column %d: mean %v, variance %v, want 0 and 1", i, m, v)
		}
	}
	// Transform does not change the statistics: same input, same output.
	a, _ := s.Transform(make([]float32, d), xs[0])
	b, _ := s.Transform(make([]float32, d), xs[0])
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("Transform is not repeatable: %v vs %v", a, b)
		}
	}
}

func TestStandardizerProjection(t *testing.T) {
	const n, d, proj, keep = 3000, 40, 8, 3
	xs := rawContexts(n, d, 5, 2)
	s, err := NewStandardizer(d, StandardizerConfig{Proj: proj, Keep: keep}, 9)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dim() != proj+keep {
		t.Fatalf("Dim() = %d, want %d", s.Dim(), proj+keep)
	}
	full, _ := NewStandardizer(d, StandardizerConfig{}, 9)
	for _, x := range xs {
		s.Observe(x)
		full.Observe(x)
	}
	sum2 := make([]float64, s.Dim())
	out, ref := make([]float32, s.Dim()), make([]float32, d)
	for _, x := range xs {
		s.Transform(out, x)
		full.Transform(ref, x)
		for i, v := range out {
			sum2[i] += float64(v) * float64(v)
		}
		// The kept block is the plain standardisation of the last values.
		for i := 0; i < keep; i++ {
			if out[proj+i] != ref[d-keep+i] {
				t.Fatalf("kept value %d = %v, want %v", i, out[proj+i], ref[d-keep+i])
			}
		}
	}
	for i, v := range sum2 {
		if math.Abs(v/n-1) > 0.05 {
			t.Errorf("output %d: second moment %v, want ≈ 1", i, v/n)
		}
	}
	// The projection depends on the seed only.
	s2, _ := NewStandardizer(d, StandardizerConfig{Proj: proj, Keep: keep}, 9)
	for _, x := range xs {
		s2.Observe(x)
	}
	out2 := make([]float32, s.Dim())
	s.Transform(out, xs[1])
	s2.Transform(out2, xs[1])
	for i := range out {
		if out[i] != out2[i] {
			t.Fatalf("same seed, different outputs: %v vs %v", out, out2)
		}
	}
}

func TestStandardizerErrors(t *testing.T) {
	for _, c := range []struct {
		dim int
		cfg StandardizerConfig
	}{{0, StandardizerConfig{}}, {4, StandardizerConfig{Keep: 5}}, {4, StandardizerConfig{Proj: -1}},
		{4, StandardizerConfig{Proj: 2, Keep: 4}}, {4, StandardizerConfig{Clip: math.NaN()}}} {
		if _, err := NewStandardizer(c.dim, c.cfg, 1); err == nil {
			t.Errorf("NewStandardizer(%d, %+v): no error", c.dim, c.cfg)
		}
	}
	s, _ := NewStandardizer(3, StandardizerConfig{}, 1)
	for _, x := range [][]float32{{1, 2}, {1, float32(math.NaN()), 3}, {1, float32(math.Inf(1)), 3}} {
		if err := s.Observe(x); !errors.Is(err, ErrInput) {
			t.Errorf("Observe(%v) = %v, want ErrInput", x, err)
		}
		if _, err := s.Transform(make([]float32, 3), x); !errors.Is(err, ErrInput) {
			t.Errorf("Transform(%v) = %v, want ErrInput", x, err)
		}
	}
	if s.Count() != 0 {
		t.Errorf("rejected contexts were counted: %d", s.Count())
	}
	if _, err := s.Transform(make([]float32, 2), []float32{1, 2, 3}); err == nil {
		t.Error("Transform into a short buffer: no error")
	}
}

func TestStandardizerState(t *testing.T) {
	xs := rawContexts(50, 10, 0, 4)
	s, _ := NewStandardizer(10, StandardizerConfig{Proj: 4, Keep: 2}, 5)
	for _, x := range xs {
		s.Observe(x)
	}
	var buf bytes.Buffer
	if err := s.saveState(gob.NewEncoder(&buf)); err != nil {
		t.Fatal(err)
	}
	r, _ := NewStandardizer(10, StandardizerConfig{Proj: 4, Keep: 2}, 5)
	if err := r.loadState(gob.NewDecoder(bytes.NewReader(buf.Bytes()))); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Transform(make([]float32, 6), xs[3])
	b, _ := r.Transform(make([]float32, 6), xs[3])
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("restored standardizer differs: %v vs %v", a, b)
		}
	}
	other, _ := NewStandardizer(10, StandardizerConfig{Proj: 5, Keep: 2}, 5)
	if err := other.loadState(gob.NewDecoder(bytes.NewReader(buf.Bytes()))); err == nil {
		t.Error("state of another configuration loaded without error")
	}
}

// Every agent that reads contexts takes the standardize option: on 512-d
// contexts it then keeps a Standardizer in its state, a saved and reloaded
// agent continues exactly as the original, and the policies see the
// projected contexts (proj values), not the raw ones.
func TestStandardizeEveryAgent(t *testing.T) {
	spec := mr.Hierarchical()
	xs := featureCtx(16)
	for _, name := range Agents() {
		info, _ := lookupAgent(name)
		if !slices.Contains(Keys(name), "standardize") && !info.standardized {
			if name != "random" && name != "ucb1" {
				t.Errorf("%s reads contexts but has no standardize option", name)
			}
			continue
		}
		t.Run(name, func(t *testing.T) {
			opts := Options{"standardize": "true", "proj": "8"}
			if name == "hts" {
				delete(opts, "standardize") // always on
			}
			a, err := New(name, spec, Layout{Dim: 512}, opts, 3)
			if err != nil {
				t.Fatal(err)
			}
			if a.pre == nil || a.pre.Dim() != 8 {
				t.Fatalf("standardizer %v", a.pre)
			}
			if m := a.Main(); m != nil {
				if _, err := m.Distribution(make([]float32, 8)); err != nil {
					t.Errorf("main bandit does not take 8-d contexts: %v", err)
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < 40; i++ {
				c, err := a.Choose(xs[i%len(xs)], rng)
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Update(xs[i%len(xs)], c, i%3 == 0); err != nil {
					t.Fatal(err)
				}
			}
			b, err := ReadAgent(bytes.NewReader(stateBytes(t, a)), spec, Layout{Dim: 512})
			if err != nil {
				t.Fatal(err)
			}
			r1, r2 := rand.New(rand.NewPCG(5, 5)), rand.New(rand.NewPCG(5, 5))
			for i := 0; i < 20; i++ {
				x := xs[(i*7)%len(xs)]
				c1, err1 := a.Choose(x, r1)
				c2, err2 := b.Choose(x, r2)
				if err1 != nil || err2 != nil || c1 != c2 {
					t.Fatalf("step %d: %+v %v, reloaded %+v %v", i, c1, err1, c2, err2)
				}
				if err := a.Update(x, c1, i%2 == 0); err != nil {
					t.Fatal(err)
				}
				if err := b.Update(x, c2, i%2 == 0); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
