package bandit

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// ucb1 tries every arm once in order, ignores the context, and settles on
// the arm of least mean cost, whatever the cost unit.
func TestUCB1(t *testing.T) {
	means := []float64{0.9, 0.7, 0.5, 0.3, 0.6}
	run := func(unit float64, ctxOf func(rng *rand.Rand) []float32) (first []int, best int) {
		p := newTestPolicy(t, "ucb1", nil, len(means), 2, 1)
		rng := rand.New(rand.NewPCG(3, 4))
		const rounds, tail = 4000, 1000
		for i := 0; i < rounds; i++ {
			x := ctxOf(rng)
			d, err := p.Distribution(x)
			if err != nil {
				t.Fatal(err)
			}
			a := slices.Index(d, 1)
			if a < 0 {
				t.Fatalf("distribution %v is not one-hot", d)
			}
			if i < len(means) {
				first = append(first, a)
			}
			if i >= rounds-tail && a == 3 {
				best++
			}
			cost := 0.0
			if rng.Float64() < means[a] {
				cost = unit
			}
			if err := p.Learn(x, a, 1, cost); err != nil {
				t.Fatal(err)
			}
		}
		return first, best
	}
	first, best := run(1, func(rng *rand.Rand) []float32 { return []float32{float32(rng.Float64()), 0} })
	if !slices.Equal(first, []int{0, 1, 2, 3, 4}) {
		t.Errorf("first plays %v, want every arm once in order", first)
	}
	t.Logf("best arm in %d of the last 1000 rounds", best)
	if best < 800 {
		t.Errorf("best arm played %d of the last 1000 rounds, want ≥ 800", best)
	}
	// Costs in another unit (the paper's parameter costs are 0…10000) and
	// another context stream: the same choices.
	_, best2 := run(10000, func(rng *rand.Rand) []float32 { rng.Float64(); return []float32{5, -5} })
	if best2 != best {
		t.Errorf("costs ×10000 and other contexts: best arm %d times, want %d", best2, best)
	}
}
