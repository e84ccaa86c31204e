package bandit

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The ADF posterior of an intercept-only probit model converges to the
// observed frequency.
func TestProbitInterceptFrequency(t *testing.T) {
	for _, p := range []float64{0.05, 0.3, 0.52, 0.9} {
		m := newProbitModel([]float64{2})
		rng := rand.New(rand.NewPCG(1, 2))
		x := []float64{1}
		n, pos := 2000, 0
		for i := 0; i < n; i++ {
			y := rng.Float64() < p
			if y {
				pos++
			}
			if err := m.learn(x, y); err != nil {
				t.Fatal(err)
			}
		}
		got := normCDF(m.mu[0] / math.Sqrt(1+m.sigma[0]))
		want := float64(pos) / float64(n)
		if math.Abs(got-want) > 0.01 {
			t.Errorf("p=%v: predictive %v, frequency %v", p, got, want)
		}
	}
}
