package gate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The reference p-values are exact rationals computed offline in Python
// with fractions.Fraction and math.comb: the convolution of the strata's
// hypergeometric distributions, summed over the upper tail. [3/4 vs 1/4]
// is Fisher's tea-tasting table, whose one-sided p-value is 17/70.
func TestIncreaseTestExact(t *testing.T) {
	for _, c := range []struct {
		strata []Stratum
		want   float64
	}{
		{[]Stratum{{3, 4, 1, 4}}, 17.0 / 70},
		{[]Stratum{{7, 10, 2, 10}}, 293.0 / 8398},
		{[]Stratum{{0, 5, 0, 5}}, 1},
		{[]Stratum{{3, 40, 1, 35}}, 14573.0 / 40515},
		{[]Stratum{{12, 20, 5, 30}}, 0.0020553867121429455},
		{[]Stratum{{50, 100, 30, 100}}, 0.002968670583007767},
		{[]Stratum{{3, 10, 1, 12}, {5, 8, 2, 9}, {0, 4, 1, 6}}, 0.08700795404989044},
		{[]Stratum{{2, 5, 0, 3}, {1, 2, 1, 7}, {4, 4, 3, 3}, {0, 0, 2, 5}}, 55.0 / 336},
		{[]Stratum{{10, 30, 12, 30}, {8, 25, 9, 28}}, 0.7252996694903997},
		{[]Stratum{{0, 10, 5, 10}}, 1},
		{nil, 1},
		{[]Stratum{{3, 5, 0, 0}}, 1}, // the baseline never tried it
	} {
		p, exact := IncreaseTest(c.strata)
		if !exact || math.Abs(p-c.want) > 1e-12*max(1, c.want) {
			t.Errorf("IncreaseTest(%v) = %.17g (exact %v), want %.17g", c.strata, p, exact, c.want)
		}
	}
}

// With counts so large that the exact distribution is not computed, the
// normal approximation is used, and where both are computed they agree.
func TestIncreaseTestNormal(t *testing.T) {
	s := []Stratum{{300, 1000, 260, 1000}, {120, 500, 100, 500}}
	pe, exact := IncreaseTest(s)
	if !exact {
		t.Fatal("expected the exact test")
	}
	pn := cmhNormal(s)
	if math.Abs(pe-pn) > 0.1*pe {
		t.Errorf("exact %.4g and normal %.4g differ by more than 10%%", pe, pn)
	}
	var big []Stratum
	for range 36 {
		big = append(big, Stratum{X1: 560, N1: 1017, X0: 500, N0: 1017})
	}
	p, exact := IncreaseTest(big)
	if exact {
		t.Error("36 strata of 2034 follow-ups: want the normal approximation")
	}
	if !(p < 1e-6) {
		t.Errorf("a rise from 49%% to 55%% over 36,612 follow-ups: p = %g", p)
	}
}

// Invariants: p-values are in [0, 1] and fall as the current run's
// violations rise.
func TestIncreaseTestInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var s []Stratum
		for range 1 + rng.IntN(4) {
			n1, n0 := rng.IntN(15), rng.IntN(15)
			s = append(s, Stratum{X1: rng.IntN(n1 + 1), N1: n1, X0: rng.IntN(n0 + 1), N0: n0})
		}
		p, _ := IncreaseTest(s)
		if p < 0 || p > 1 || math.IsNaN(p) {
			t.Fatalf("%v: p = %v", s, p)
		}
		for i := range s {
			if s[i].X1 < s[i].N1 && s[i].X0 > 0 {
				up := append([]Stratum(nil), s...)
				up[i].X1++
				if q, _ := IncreaseTest(up); q > p+1e-12 {
					t.Fatalf("%v → %v: p rose from %v to %v", s, up, p, q)
				}
			}
		}
	}
}

func TestRiskDifference(t *testing.T) {
	// One stratum: the plain difference.
	if rd, ok := RiskDifference([]Stratum{{6, 10, 2, 10}}); !ok || math.Abs(rd-0.4) > 1e-15 {
		t.Errorf("one stratum: %v %v", rd, ok)
	}
	// Equal sizes: the mean of the differences, whatever the mix.
	rd, ok := RiskDifference([]Stratum{{9, 10, 8, 10}, {1, 10, 0, 10}, {5, 5, 0, 0}})
	if !ok || math.Abs(rd-0.1) > 1e-15 {
		t.Errorf("two strata: %v %v", rd, ok)
	}
	// Same per-stratum rates, different mixes: no rise, although the pooled
	// rates differ (40 % of 10 + 90 % of 30 vs 40 % of 30 + 90 % of 10).
	rd, ok = RiskDifference([]Stratum{{4, 10, 12, 30}, {27, 30, 9, 10}})
	if !ok || math.Abs(rd) > 1e-15 {
		t.Errorf("mixes: %v %v", rd, ok)
	}
	if _, ok := RiskDifference([]Stratum{{1, 2, 0, 0}}); ok {
		t.Error("no stratum in both runs: ok")
	}
}
