package analysis

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence intervals of a binomial proportion: x successes in n
// independent trials (violations found among tests run). Two are given:
//
//   - Wilson: the score interval (Wilson, JASA 22, 1927), the set of p
//     whose score test z = (p̂ − p)/√(p(1−p)/n) is within ±z_{1−α/2}:
//
//     centre = (p̂ + z²/(2n)) / (1 + z²/n),
//     half   = z/(1 + z²/n) · √(p̂(1−p̂)/n + z²/(4n²)).
//
//     Its coverage is close to the nominal level even for small n or p̂
//     near 0 or 1, where the textbook Wald interval p̂ ± z√(p̂(1−p̂)/n)
//     fails (Brown, Cai and DasGupta, Statistical Science 16, 2001).
//   - ClopperPearson: the exact interval (Clopper and Pearson, Biometrika
//     26, 1934), which inverts two one-sided binomial tests; its bounds
//     are Beta quantiles,
//
//     lo = Beta(x, n−x+1).Quantile(α/2),
//     hi = Beta(x+1, n−x).Quantile(1−α/2),
//
//     with lo = 0 for x = 0 and hi = 1 for x = n. Its coverage is at least
//     the level, so it is conservative (wider than Wilson's).
//
// Both agree with SciPy 1.10.1's binomtest(x, n).proportion_ci with
// method='wilson' and 'exact' (binomial_test.go; the values come from
// testdata/ranks_reference.py).

// Wilson returns the Wilson score interval of a binomial proportion with x
// successes in n trials at the given confidence level (e.g. 0.95). n = 0
// gives (0, 1). It returns NaN, NaN for x outside [0, n] or a level
// outside (0, 1).
func Wilson(x, n int, level float64) (lo, hi float64) {
	if !validBinomial(x, n, level) {
		return math.NaN(), math.NaN()
	}
	if n == 0 {
		return 0, 1
	}
	z := distuv.UnitNormal.Quantile(1 - (1-level)/2)
	fn := float64(n)
	p := float64(x) / fn
	d := 1 + z*z/fn
	centre := (p + z*z/(2*fn)) / d
	half := z / d * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	if x == 0 {
		lo = 0
	}
	if x == n {
		hi = 1
	}
	return lo, hi
}

// ClopperPearson returns the exact (Clopper–Pearson) interval of a
// binomial proportion with x successes in n trials at the given
// confidence level, from Beta quantiles (gonum's distuv.Beta); x = 0
// gives lo = 0, x = n gives hi = 1, and n = 0 gives (0, 1). It returns
// NaN, NaN for x outside [0, n] or a level outside (0, 1).
func ClopperPearson(x, n int, level float64) (lo, hi float64) {
	if !validBinomial(x, n, level) {
		return math.NaN(), math.NaN()
	}
	alpha := 1 - level
	lo, hi = 0, 1
	if x > 0 {
		lo = distuv.Beta{Alpha: float64(x), Beta: float64(n - x + 1)}.Quantile(alpha / 2)
	}
	if x < n {
		hi = distuv.Beta{Alpha: float64(x + 1), Beta: float64(n - x)}.Quantile(1 - alpha/2)
	}
	return lo, hi
}

func validBinomial(x, n int, level float64) bool {
	return x >= 0 && x <= n && level > 0 && level < 1
}
