package bandit

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randCtx(rng *rand.Rand, d int) []float32 {
	x := make([]float32, d)
	for i := range x {
		x[i] = float32(rng.Float64()*2 - 1)
	}
	return x
}

// TestBankForwardMatchesGo checks the Gorgonia forward pass against a plain
// Go evaluation of the same network, before and after updates.
func TestBankForwardMatchesGo(t *testing.T) {
	for _, h := range []int{0, 4} {
		rng := rand.New(rand.NewPCG(1, 2))
		b, err := newBank(5, 7, h, rng)
		if err != nil {
			t.Fatal(err)
		}
		st := &gdState{Eta: 0.5}
		for step := 0; step < 20; step++ {
			x := randCtx(rng, 7)
			if err := b.forward(x); err != nil {
				t.Fatal(err)
			}
			for r := 0; r < b.M; r++ {
				if got, want := float64(b.raw[r]), b.predictOne(r); math.Abs(got-want) > 1e-4 {
					t.Fatalf("h=%d step %d regressor %d: gorgonia %v, go %v", h, step, r, got, want)
				}
			}
			b.learn(st, []int{0, 1, 2, 3, 4}, []float64{1, -1, 0.5, 2, 0}, []float64{1, 1, 2, 1, 1})
		}
	}
}

// TestBankLearnsRegression checks that linear and network regressors fit
// y = 2 x0 − x1 + 0.5 and that the network fits |x0| (not linear).
func TestBankLearnsRegression(t *testing.T) {
	cases := []struct {
		name string
		h    int
		f    func(x []float32) float64
		tol  float64
	}{
		// Target variances: 5/3 for the linear target; 0.5 + 0.5 sin(3 x0)
		// has variance 0.131 and the best linear fit leaves 0.041, so the
		// network must beat every linear model (even with VW's clipping of
		// predictions to the label range).
		{"linear", 0, func(x []float32) float64 { return 2*float64(x[0]) - float64(x[1]) + 0.5 }, 0.02},
		{"nn-linear", 8, func(x []float32) float64 { return 2*float64(x[0]) - float64(x[1]) + 0.5 }, 0.1},
		{"nn-sin", 8, func(x []float32) float64 { return 0.5 + 0.5*math.Sin(3*float64(x[0])) }, 0.01},
		{"linear-sin", 0, func(x []float32) float64 { return 0.5 + 0.5*math.Sin(3*float64(x[0])) }, -0.025},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			b, err := newBank(1, 3, c.h, rng)
			if err != nil {
				t.Fatal(err)
			}
			st := &gdState{Eta: 0.5}
			mse := 0.0
			n := 4000
			for i := 0; i < n; i++ {
				x := randCtx(rng, 3)
				if err := b.forward(x); err != nil {
					t.Fatal(err)
				}
				y := c.f(x)
				if i >= n-500 {
					e := st.clip(float64(b.raw[0])) - y
					mse += e * e / 500
				}
				b.learn(st, []int{0}, []float64{y}, []float64{1})
			}
			t.Logf("mse %.5f", mse)
			if c.tol < 0 {
				// A model that cannot fit: its error must stay above -tol.
				if mse < -c.tol {
					t.Errorf("mse over last 500 = %.4f, below what any linear model can reach (%v)", mse, -c.tol)
				}
				return
			}
			if mse > c.tol {
				t.Errorf("mse over last 500 = %.4f, want < %v", mse, c.tol)
			}
		})
	}
}

// TestGDPassesMatchGo checks the platform's per-weight loops (SSE on amd64)
// against the pure Go ones, including tails, zero features and the
// clamps.
func TestGDPassesMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{0, 1, 3, 4, 7, 513} {
		mk := func() []float32 { return make([]float32, n) }
		G, x, x2, xin := mk(), mk(), mk(), mk()
		for i := 0; i < n; i++ {
			G[i] = float32(rng.Float64() * 3)
			if i%5 == 0 {
				G[i] = 0
				continue // absent feature: x = 0
			}
			x[i] = float32(rng.NormFloat64())
			x2[i] = x[i] * x[i]
			xin[i] = x[i] / 2
		}
		if n == 513 {
			G[1] = 2.9e38 // reaches the 3e38 cap
		}
		G2 := append([]float32(nil), G...)
		xr, xr2 := mk(), mk()
		s := gdPass1(G, x, x2, xin, xr, 0.7)
		s2 := gdPass1Go(G2, x, x2, xin, xr2, 0.7)
		if math.Abs(float64(s-s2)) > 1e-4*math.Abs(float64(s2))+1e-6 {
			t.Errorf("n=%d: sum %v, Go %v", n, s, s2)
		}
		for i := range G {
			if G[i] != G2[i] || math.Abs(float64(xr[i]-xr2[i])) > 1e-4*math.Abs(float64(xr2[i]))+1e-9 {
				t.Fatalf("n=%d i=%d: G %v/%v xr %v/%v", n, i, G[i], G2[i], xr[i], xr2[i])
			}
		}
		w := mk()
		for i := range w {
			w[i] = float32(rng.NormFloat64())
		}
		if n == 513 {
			w[2] = 9.99e19
		}
		w2 := append([]float32(nil), w...)
		gdPass2(w, xr, 1e3)
		gdPass2Go(w2, xr, 1e3)
		for i := range w {
			if math.Abs(float64(w[i]-w2[i])) > 1e-5*math.Abs(float64(w2[i]))+1e-6 || math.Abs(float64(w[i])) > 1e20 {
				t.Fatalf("n=%d i=%d: w %v, Go %v", n, i, w[i], w2[i])
			}
		}
	}
}
