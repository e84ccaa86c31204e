package bandit

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/amt-dev/amt/scenario"
)

// TestMatchesVWMeasurements replays the synthetic 3-action problem of
// vw-cover-dr-nn.md §8a (x1, x2 ~ U(0,1), a two-valued categorical c
// one-hot encoded, best action = third of x1, Bernoulli(0.8) reward for it
// and 0.2 otherwise, cost = 1 − reward; optimum 0.2, uniform 0.6) for
// 20 000 rounds, through the whole agent as the paper's experiments use it
// (Agent.Choose/Update with the agent's defaults: cover rounds
// probabilities and costs to 2 decimals), and compares the realised cost
// and the share of best actions over the last 2 000 rounds with what the
// real VW binaries measured (§8a): 8.8.1 with the paper's command (cover 3,
// DR, NN 16) 0.351 and 0.735; 9.10.0 (the modern semantics) 0.457 and
// 0.553; 8.8.1 linear cover 0.295 and 0.830.
//
// The band is derived from those figures. VW's are single runs, so each
// carries the binomial noise of 2 000 rounds, σ = √(v(1 − v)/2000) (0.011
// for cost 0.351). Over 24 seeds our runs are bimodal: most converge
// (paper command: cost 0.345–0.39, sd ≈ σ), about a quarter settle on a
// policy that misses one band (0.51–0.55). The statistic is therefore the
// median of 5 seeds, robust to up to two such runs, whose variance is
// about π/2 · σ²/5; compared with a single VW run, the difference has
// σ_d = σ √(1 + π/10), and the band is VW's figure ± 3 σ_d (paper command:
// cost [0.314, 0.388], best action [0.701, 0.769]). The band must stay
// this tight: a looser one such as [0.29, 0.42] on the mean of 3 seeds
// without rounding hides departures of 2.5 σ_d.
func TestMatchesVWMeasurements(t *testing.T) {
	cases := []struct {
		name, agent string
		opts        Options
		cost, best  float64 // VW's measurements, §8a
	}{
		{"paper-cover-nn16", "cover", nil, 0.351, 0.735},
		{"modern-cover-nn16", "cover-modern", nil, 0.457, 0.553},
		{"paper-cover-linear", "cover", Options{"hidden": "0"}, 0.295, 0.830},
	}
	seeds := []uint64{1, 2, 3, 4, 5}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			costs, bests := make([]float64, len(seeds)), make([]float64, len(seeds))
			var wg sync.WaitGroup
			errs := make([]error, len(seeds))
			for i, seed := range seeds {
				wg.Add(1)
				go func() {
					defer wg.Done()
					costs[i], bests[i], errs[i] = vwProblem(c.agent, c.opts, seed)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			cost, best := median(costs), median(bests)
			t.Logf("last 2000 rounds, median of %d seeds: cost %.3f (seeds %.3f), best action %.3f (seeds %.3f)", len(seeds), cost, costs, best, bests)
			for _, m := range []struct {
				what      string
				got, want float64
			}{{"realised cost", cost, c.cost}, {"best-action share", best, c.best}} {
				band := 3 * math.Sqrt(m.want*(1-m.want)/2000) * math.Sqrt(1+math.Pi/(2*float64(len(seeds))))
				if math.Abs(m.got-m.want) > band {
					t.Errorf("%s %.3f outside VW's %.3f ± %.3f", m.what, m.got, m.want, band)
				}
			}
		})
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// vwProblem runs one seed of the §8a problem through an agent over three
// flat arms of unit reward (a violation = reward 1 = cost 0) and returns
// the realised cost and the share of best actions over the last 2000 of
// 20 000 rounds.
func vwProblem(agent string, opts Options, seed uint64) (cost, best float64, err error) {
	sc := scenario.Scenario{Name: "vw-8a", Objective: scenario.Paper, Arms: []scenario.Arm{
		{Name: "a1", Action: "a1"}, {Name: "a2", Action: "a2"}, {Name: "a3", Action: "a3"}}}
	a, err := New(agent, sc, Layout{Dim: 4}, opts, seed)
	if err != nil {
		return 0, 0, err
	}
	rng := rand.New(rand.NewPCG(100+seed, 1))
	const rounds, tail = 20000, 2000
	for r := 0; r < rounds; r++ {
		x1, x2 := rng.Float64(), rng.Float64()
		cat := float32(rng.IntN(2))
		x := []float32{float32(x1), float32(x2), cat, 1 - cat}
		ch, err := a.Choose(x, rng)
		if err != nil {
			return 0, 0, err
		}
		opt := min(int(x1*3), 2)
		pr := 0.2
		if ch.Arm == opt {
			pr = 0.8
		}
		c := 1.0
		if rng.Float64() < pr {
			c = 0
		}
		if err := a.Update(x, ch, c == 0); err != nil {
			return 0, 0, err
		}
		if r >= rounds-tail {
			cost += c / tail
			if ch.Arm == opt {
				best += 1.0 / tail
			}
		}
	}
	return cost, best, nil
}
