package analysis

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Comparing several algorithms over many data sets, after Demšar,
// "Statistical Comparisons of Classifiers over Multiple Data Sets", JMLR 7
// (2006) 1–30. The scores form a table with a row per data set (here an
// environment) and a column per algorithm (an agent); only the ranks of the
// algorithms within each row are used, so scores of different scales (rates
// of different environments) can be compared:
//
//   - Ranks and MeanRanks: the rank of each algorithm in each row, 1 the
//     best, ties sharing the mean of the ranks they span (§3.2.2), and the
//     mean rank R_j of algorithm j over the N rows.
//   - FriedmanTest: Friedman's test that all algorithms are equivalent
//     (their mean ranks equal), with Iman and Davenport's F form of it,
//     which Demšar recommends as less conservative (§3.2.2).
//   - NemenyiCD: the critical difference of the Nemenyi post-hoc test; two
//     algorithms differ significantly when their mean ranks differ by at
//     least CD (§3.2.2, eq. 5). Its q_α is a quantile of the studentized
//     range distribution with infinite degrees of freedom, computed by
//     StudentizedRangeQuantile.
//
// Reference values in ranks_test.go were computed with SciPy 1.10.1 by
// testdata/ranks_reference.py.

// Ranks returns, for each row (an environment / data set) of scores (one
// column per algorithm), the rank of each algorithm: 1 = best; ties (equal
// scores) get the average of the ranks they span (Demšar §3.2.2, SciPy's
// rankdata method="average"). higherBetter says whether a larger score is
// better.
//
// Rows must be complete: a NaN score has no place in an order. Ranks does
// not fail on one, but gives every algorithm of such a row the rank NaN
// (and MeanRanks then NaN for every algorithm); FriedmanTest rejects it.
// Rows may differ in length; each is ranked on its own.
func Ranks(scores [][]float64, higherBetter bool) [][]float64 {
	out := make([][]float64, len(scores))
	for i, row := range scores {
		out[i] = rankRow(row, higherBetter)
	}
	return out
}

// rankRow ranks one row (see Ranks).
func rankRow(row []float64, higherBetter bool) []float64 {
	r := make([]float64, len(row))
	for _, v := range row {
		if math.IsNaN(v) {
			for j := range r {
				r[j] = math.NaN()
			}
			return r
		}
	}
	idx := make([]int, len(row))
	for j := range idx {
		idx[j] = j
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if higherBetter {
			return row[idx[a]] > row[idx[b]]
		}
		return row[idx[a]] < row[idx[b]]
	})
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && row[idx[j+1]] == row[idx[i]] {
			j++
		}
		mid := float64(i+j)/2 + 1 // mean of the 1-based ranks i+1 … j+1
		for t := i; t <= j; t++ {
			r[idx[t]] = mid
		}
		i = j + 1
	}
	return r
}

// MeanRanks is the mean over rows of Ranks: R_j = (1/N) Σ_i r_ij, one per
// column. The rows should have equal lengths; a column missing from a row
// is averaged over the rows that have it.
func MeanRanks(scores [][]float64, higherBetter bool) []float64 {
	k := 0
	for _, row := range scores {
		k = max(k, len(row))
	}
	sum := make([]float64, k)
	cnt := make([]int, k)
	for _, r := range Ranks(scores, higherBetter) {
		for j, v := range r {
			sum[j] += v
			cnt[j]++
		}
	}
	for j := range sum {
		sum[j] /= float64(cnt[j])
	}
	return sum
}

// Friedman is the Friedman test over N data sets (rows) and K algorithms
// (columns): the null hypothesis is that the algorithms are equivalent, so
// that their mean ranks are equal.
type Friedman struct {
	N, K int
	// MeanRanks are the algorithms' mean ranks, in column order (1 best).
	MeanRanks []float64
	// ChiSq is Friedman's statistic with the standard correction for ties,
	// as scipy.stats.friedmanchisquare computes it:
	//
	//	χ² = [12/(N K (K+1)) Σ_j S_j² − 3 N (K+1)] / C,
	//	C  = 1 − Σ t(t²−1) / (N K (K²−1)),
	//
	// S_j = N R_j the rank sums and t running over the sizes of the groups
	// of tied scores within each row. Without ties (C = 1) it is Demšar's
	// χ²_F = 12N/(K(K+1)) [Σ_j R_j² − K(K+1)²/4]. When every row is one
	// tie (C = 0, where SciPy gives NaN) there is no evidence of a
	// difference: ChiSq is 0 and PChiSq 1.
	ChiSq float64
	// PChiSq is ChiSq's p-value, the survival of chi-square with K−1
	// degrees of freedom.
	PChiSq float64
	// F is Iman and Davenport's statistic F_F = (N−1)χ² / (N(K−1) − χ²)
	// (Demšar §3.2.2), PF its p-value, the survival of F with K−1 and
	// (K−1)(N−1) degrees of freedom. When the rows agree perfectly
	// (χ² = N(K−1)) F is +Inf and PF 0.
	F  float64
	PF float64
}

// FriedmanTest runs the Friedman test on scores, one row per data set and
// one column per algorithm. It fails for fewer than 2 rows or 2 columns,
// rows of different lengths or a NaN score.
func FriedmanTest(scores [][]float64, higherBetter bool) (Friedman, error) {
	n := len(scores)
	if n < 2 {
		return Friedman{}, fmt.Errorf("analysis: Friedman test: %d data sets, need at least 2", n)
	}
	k := len(scores[0])
	if k < 2 {
		return Friedman{}, fmt.Errorf("analysis: Friedman test: %d algorithms, need at least 2", k)
	}
	for i, row := range scores {
		if len(row) != k {
			return Friedman{}, fmt.Errorf("analysis: Friedman test: row %d has %d scores, row 0 has %d", i, len(row), k)
		}
		for j, v := range row {
			if math.IsNaN(v) {
				return Friedman{}, fmt.Errorf("analysis: Friedman test: score of row %d, column %d is NaN", i, j)
			}
		}
	}
	ranks := Ranks(scores, higherBetter)
	f := Friedman{N: n, K: k, MeanRanks: MeanRanks(scores, higherBetter)}
	// Σ t(t²−1) over the groups of ties of every row: the groups are runs
	// of equal ranks.
	ties := 0.0
	for _, r := range ranks {
		s := append([]float64(nil), r...)
		sort.Float64s(s)
		for i := 0; i < len(s); {
			j := i
			for j+1 < len(s) && s[j+1] == s[i] {
				j++
			}
			t := float64(j - i + 1)
			ties += t * (t*t - 1)
			i = j + 1
		}
	}
	c := 1 - ties/float64(n*k*(k*k-1))
	f.ChiSq = friedmanChiSq(f.MeanRanks, n)
	if c <= 0 {
		f.ChiSq = 0
	} else {
		f.ChiSq /= c
	}
	f.PChiSq = distuv.ChiSquared{K: float64(k - 1)}.Survival(f.ChiSq)
	f.F = imanDavenport(f.ChiSq, n, k)
	if math.IsInf(f.F, 1) {
		f.PF = 0
	} else {
		// The survival of F(d1, d2) at x is I_{d2/(d2+d1 x)}(d2/2, d1/2);
		// distuv.F.Survival, 1 − CDF, loses p-values below 1e-16.
		d1, d2 := float64(k-1), float64((k-1)*(n-1))
		f.PF = mathext.RegIncBeta(d2/2, d1/2, d2/(d2+d1*f.F))
	}
	return f, nil
}

// friedmanChiSq is Demšar's χ²_F = 12N/(K(K+1)) [Σ_j R_j² − K(K+1)²/4]
// from the mean ranks R_j of K algorithms over N data sets (no tie
// correction).
func friedmanChiSq(meanRanks []float64, n int) float64 {
	k := float64(len(meanRanks))
	s := 0.0
	for _, r := range meanRanks {
		s += r * r
	}
	v := 12 * float64(n) / (k * (k + 1)) * (s - k*(k+1)*(k+1)/4)
	return math.Max(0, v) // not below 0 by rounding
}

// imanDavenport is F_F = (N−1)χ² / (N(K−1) − χ²), +Inf when the
// denominator is not positive (χ² at its maximum N(K−1)).
func imanDavenport(chi2 float64, n, k int) float64 {
	d := float64(n*(k-1)) - chi2
	if d <= 1e-12*float64(n*(k-1)) {
		return math.Inf(1)
	}
	return float64(n-1) * chi2 / d
}

// NemenyiCD is the critical difference of the Nemenyi post-hoc test for k
// algorithms over n data sets at level alpha (Demšar eq. 5):
//
//	CD = q_α/√2 · √(k(k+1)/(6n)),
//
// with q_α = StudentizedRangeQuantile(1−alpha, k, +Inf), the upper α
// quantile of the range of k independent standard normals. Demšar's
// Table 5a lists q_α/√2 (1.960 for k = 2 and α = 0.05). Two algorithms
// whose mean ranks differ by at least CD differ significantly. It returns
// NaN for k < 2, n < 1 or alpha outside (0, 1).
func NemenyiCD(k, n int, alpha float64) float64 {
	if k < 2 || n < 1 || !(alpha > 0 && alpha < 1) {
		return math.NaN()
	}
	q := StudentizedRangeQuantile(1-alpha, k, math.Inf(1))
	return q / math.Sqrt2 * math.Sqrt(float64(k*(k+1))/(6*float64(n)))
}
