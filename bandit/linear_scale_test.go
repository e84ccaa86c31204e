package bandit

import (
	"math/rand/v2"
	"testing"
)

// LinUCB's and LinTS's exploration is measured in units of the logged cost
// range, so multiplying every cost by 10⁴ (the paper's parameter costs
// against its 0/1 main costs) does not change a single choice.
func TestLinearCostScaleInvariance(t *testing.T) {
	for _, agent := range []string{"linucb", "lints"} {
		cfg, err := Resolve(agent, nil)
		if err != nil {
			t.Fatal(err)
		}
		var arms [2][]int
		for s, scale := range []float64{1, 1e4} {
			p, err := NewPolicy(agent, 4, 3, cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(2, 3))
			for r := 0; r < 300; r++ {
				x := randCtx(rng, 3)
				d, err := p.Distribution(x)
				if err != nil {
					t.Fatal(err)
				}
				a := Sample(d, rng)
				arms[s] = append(arms[s], a)
				cost := 0.0
				if rng.Float64() < 0.3+0.1*float64(a) {
					cost = 1
				}
				if err := p.Learn(x, a, d[a], scale*cost); err != nil {
					t.Fatal(err)
				}
			}
		}
		for r := range arms[0] {
			if arms[0][r] != arms[1][r] {
				t.Fatalf("%s: round %d: arm %d with 0/1 costs, %d with costs ×10⁴", agent, r, arms[0][r], arms[1][r])
			}
		}
	}
}
