package gate

import "math"

// Stratum is one 2×2 table of a comparison: in the current run X1 of N1
// follow-ups violated, in the baseline X0 of N0. The strata of an MR are
// its parameter values (one stratum for an MR without a parameter).
type Stratum struct {
	X1, N1, X0, N0 int
}

// valid reports whether the stratum's counts make sense.
func (s Stratum) valid() bool {
	return s.N1 >= 0 && s.N0 >= 0 && s.X1 >= 0 && s.X0 >= 0 && s.X1 <= s.N1 && s.X0 <= s.N0
}

// informative reports whether the stratum can say anything about a
// difference: both runs tried it.
func (s Stratum) informative() bool { return s.N1 > 0 && s.N0 > 0 }

// maxExactWork bounds the work of the exact test (the sum over strata of
// the length of the running distribution times the stratum's support);
// beyond it, IncreaseTest uses the normal approximation, whose error is
// then negligible (each stratum's hypergeometric is approximately normal
// and so is their sum).
const maxExactWork = 50_000_000

// IncreaseTest tests whether the violation odds of the current run exceed
// the baseline's, stratified by parameter value: the one-sided exact
// conditional test of a common odds ratio of 1 against > 1 (the exact
// Cochran–Mantel–Haenszel test, R's mantelhaen.test(exact = TRUE,
// alternative = "greater")). Given each stratum's margins, the current
// run's violations X1 in stratum k are hypergeometric under the null
// hypothesis; the p-value is P(Σ X1 ≥ observed) under the convolution of
// those distributions. With one stratum it is Fisher's exact test
// (scipy.stats.fisher_exact(alternative="greater")).
//
// Conditioning on the strata's margins makes the test exact for small
// counts (a CI budget of a few hundred follow-ups spread over 59 variants)
// and insensitive to the parameter values' mix differing between the runs
// (an agent picks angles adaptively). When the exact distribution would be
// large (more than maxExactWork steps, thousands of follow-ups per
// stratum) it uses the CMH statistic's normal approximation with a
// continuity correction; exact reports which.
//
// Strata that one of the runs did not try carry no information and are
// left out. With no informative stratum, or when no stratum has a
// violation and a non-violation, the p-value is 1.
func IncreaseTest(strata []Stratum) (p float64, exact bool) {
	type hyper struct {
		lo  int
		pmf []float64
	}
	var hs []hyper
	observed, work, length := 0, 0, 1
	for _, s := range strata {
		if !s.valid() || !s.informative() {
			continue
		}
		n, t, n1 := s.N1+s.N0, s.X1+s.X0, s.N1
		lo, hi := max(0, n1-(n-t)), min(n1, t)
		observed += s.X1 - lo
		if hi == lo {
			continue // the margins fix X1: no information
		}
		pmf := make([]float64, hi-lo+1)
		lc := lchoose(n, n1)
		for x := lo; x <= hi; x++ {
			pmf[x-lo] = math.Exp(lchoose(t, x) + lchoose(n-t, n1-x) - lc)
		}
		hs = append(hs, hyper{lo, pmf})
		work += length * len(pmf)
		length += len(pmf) - 1
	}
	if len(hs) == 0 {
		return 1, true
	}
	if work > maxExactWork {
		return cmhNormal(strata), false
	}
	dist := []float64{1}
	for _, h := range hs {
		next := make([]float64, len(dist)+len(h.pmf)-1)
		for i, a := range dist {
			if a == 0 {
				continue
			}
			for j, b := range h.pmf {
				next[i+j] += a * b
			}
		}
		dist = next
	}
	// dist[k] = P(Σ (X1 − lo) = k); sum the upper tail from the smallest
	// terms up.
	var tail float64
	for k := len(dist) - 1; k >= observed; k-- {
		tail += dist[k]
	}
	return min(1, max(0, tail)), true
}

// cmhNormal is the one-sided p-value of the Cochran–Mantel–Haenszel
// statistic with a continuity correction: Z = (Σ X1 − Σ E − ½) / √Σ V, with
// each stratum's hypergeometric mean E and variance V.
func cmhNormal(strata []Stratum) float64 {
	var obs, mean, vr float64
	for _, s := range strata {
		if !s.valid() || !s.informative() {
			continue
		}
		n, t, n1 := float64(s.N1+s.N0), float64(s.X1+s.X0), float64(s.N1)
		if n < 2 {
			continue
		}
		obs += float64(s.X1)
		mean += n1 * t / n
		vr += n1 * (n - n1) * t * (n - t) / (n * n * (n - 1))
	}
	if vr == 0 {
		return 1
	}
	z := (obs - mean - 0.5) / math.Sqrt(vr)
	return 0.5 * math.Erfc(z/math.Sqrt2) // the standard normal's upper tail
}

// lchoose returns log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// RiskDifference returns the Mantel–Haenszel estimate of the rise of the
// violation rate, current minus baseline, as a fraction, pooled over the
// strata that both runs tried: Σ w_k (p1_k − p0_k) / Σ w_k with weights
// w_k = N1_k N0_k / (N1_k + N0_k) (Greenland & Robins 1985). With one
// stratum it is the plain difference of the two rates. ok is false when no
// stratum was tried by both runs.
func RiskDifference(strata []Stratum) (rd float64, ok bool) {
	var num, den float64
	for _, s := range strata {
		if !s.valid() || !s.informative() {
			continue
		}
		n := float64(s.N1 + s.N0)
		num += (float64(s.X1)*float64(s.N0) - float64(s.X0)*float64(s.N1)) / n
		den += float64(s.N1) * float64(s.N0) / n
	}
	if den == 0 {
		return 0, false
	}
	return num / den, true
}
