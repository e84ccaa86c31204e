package analysis

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/amt-dev/amt/experiments/record"
)

// Statistics over seeds. An experiment runs each agent once per seed; a
// seed fixes the image order (and the agent's randomness), so two agents
// run with the same seed see the same images in the same order and their
// per-seed results form pairs. The functions below give what a comparison
// one can trust needs:
//
//   - MeanCI: the mean over seeds with a two-sided Student-t confidence
//     interval, mean ± t(1−α/2, n−1) · s/√n (s the sample standard
//     deviation). The per-seed value is a violation rate over hundreds of
//     iterations, an average of many verdicts, so it is close to normal and
//     the t interval is the textbook choice for the 10 to 30 seeds an
//     experiment runs.
//   - Paired: the paired t-test of two agents on the seeds both ran (the
//     mean difference with its t interval, t, the two-sided p), and, as a
//     check that needs no normality, the exact Wilcoxon signed-rank test
//     (WilcoxonSignedRank). The t-test is the primary one because it comes
//     with an interval for the difference in the unit one cares about
//     (percentage points); the signed-rank test only ranks. With n seeds
//     the smallest two-sided signed-rank p is 2/2^n (0.002 for 10 seeds).
//   - Holm: Holm's step-down adjustment of a family of p-values, which
//     keeps the family-wise error rate at α without assuming independence;
//     a report that runs many tests adjusts them all together.
//
// Quantiles and tail probabilities come from gonum's stat/distuv.
// Reference values in stats_test.go were computed with SciPy 1.10.1.

// CI is a mean over seeds with its two-sided confidence interval.
type CI struct {
	N int
	// Mean and SD are the sample mean and the sample standard deviation
	// (divisor n−1).
	Mean, SD float64
	// Level is the confidence level (0.95).
	Level float64
	// Half is the half-width t(1−(1−Level)/2, N−1) · SD/√N; Lo and Hi are
	// Mean ∓ Half. All three are NaN for fewer than 2 values.
	Half, Lo, Hi float64
}

// Level95 is the confidence level of the reports' intervals.
const Level95 = 0.95

// MeanCI returns the mean of xs with its Student-t confidence interval at
// level (in (0, 1)). It returns the zero CI for no values.
func MeanCI(xs []float64, level float64) CI {
	if len(xs) == 0 {
		return CI{}
	}
	c := CI{N: len(xs), Level: level, Half: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if len(xs) == 1 {
		c.Mean = xs[0]
		return c
	}
	c.Mean, c.SD = stat.MeanStdDev(xs, nil)
	c.Half = tQuantile(level, len(xs)-1) * c.SD / math.Sqrt(float64(len(xs)))
	c.Lo, c.Hi = c.Mean-c.Half, c.Mean+c.Half
	return c
}

// Shift returns c with every value v replaced by a − v (a gap to a fixed
// value a, such as an oracle's rate): the interval is mirrored, its width
// unchanged.
func (c CI) Shift(a float64) CI {
	c.Mean = a - c.Mean
	c.Lo, c.Hi = a-c.Hi, a-c.Lo
	return c
}

// tQuantile returns the two-sided critical value of Student's t with df
// degrees of freedom at the confidence level.
func tQuantile(level float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - (1-level)/2)
}

// Paired is the comparison of two agents on the seeds both ran: A − B.
type Paired struct {
	// Seeds are the seeds both ran, ascending.
	Seeds []uint64
	// Diff is the mean of the per-seed differences with its t interval.
	Diff CI
	// T is the paired t statistic Diff.Mean / (Diff.SD/√n) with n−1
	// degrees of freedom, P its two-sided p-value. With all differences
	// equal, T is ±Inf and P 0 (or T NaN and P 1 when they are all 0);
	// both are NaN for fewer than 2 seeds.
	T, P float64
	// WilcoxonP is the two-sided p-value of the Wilcoxon signed-rank test
	// of the differences (zeros dropped); NaN when every difference is 0
	// or there are none.
	WilcoxonP float64
}

// PairedTest compares a and b, each a value per seed, on the seeds both
// have (A − B): the paired t-test at the confidence level, and the
// Wilcoxon signed-rank test.
func PairedTest(a, b map[uint64]float64, level float64) Paired {
	var seeds []uint64
	for s := range a {
		if _, ok := b[s]; ok {
			seeds = append(seeds, s)
		}
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	d := make([]float64, len(seeds))
	for i, s := range seeds {
		d[i] = a[s] - b[s]
	}
	p := Paired{Seeds: seeds, Diff: MeanCI(d, level), T: math.NaN(), P: math.NaN(), WilcoxonP: math.NaN()}
	if len(d) < 2 {
		return p
	}
	switch {
	case p.Diff.SD > 0:
		p.T = p.Diff.Mean / (p.Diff.SD / math.Sqrt(float64(len(d))))
		p.P = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}.Survival(math.Abs(p.T))
	case p.Diff.Mean == 0:
		p.P = 1
	default:
		p.T, p.P = math.Inf(int(math.Copysign(1, p.Diff.Mean))), 0
	}
	p.WilcoxonP = WilcoxonSignedRank(d)
	return p
}

// maxExactWilcoxon is the largest number of non-zero differences whose
// signed-rank distribution is computed exactly; beyond it the normal
// approximation (with the tie correction of the variance) is used.
const maxExactWilcoxon = 50

// WilcoxonSignedRank returns the two-sided p-value of the Wilcoxon
// signed-rank test that the differences d are symmetric about 0. Zero
// differences are dropped (Wilcoxon's convention, SciPy's
// zero_method="wilcox"), tied absolute values get their mean rank. For at
// most 50 non-zero differences the p-value is exact: the statistic's
// distribution under the 2^n equally likely sign assignments, computed by
// counting (with ties, this is the exact conditional distribution, a
// permutation test of the signed ranks). For more, the normal
// approximation without continuity correction, its variance corrected
// for ties (SciPy's method="approx", correction=False). It returns NaN
// when no difference is non-zero.
func WilcoxonSignedRank(d []float64) float64 {
	var abs []float64
	var pos []bool
	for _, x := range d {
		if x != 0 && !math.IsNaN(x) {
			abs = append(abs, math.Abs(x))
			pos = append(pos, x > 0)
		}
	}
	n := len(abs)
	if n == 0 {
		return math.NaN()
	}
	// Mid-ranks, doubled so that they are integers.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return abs[idx[i]] < abs[idx[j]] })
	rank2 := make([]int, n) // 2 × rank
	var ties []int          // sizes of the groups of ties
	for i := 0; i < n; {
		j := i
		for j+1 < n && abs[idx[j+1]] == abs[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			rank2[idx[k]] = i + j + 2 // 2 × mean of the 1-based ranks i+1 … j+1
		}
		ties = append(ties, j-i+1)
		i = j + 1
	}
	w2 := 0 // 2 × the sum of the ranks of the positive differences
	for i, r := range rank2 {
		if pos[i] {
			w2 += r
		}
	}
	if n > maxExactWilcoxon {
		mean := float64(n*(n+1)) / 4
		v := float64(n*(n+1)*(2*n+1)) / 24
		for _, t := range ties {
			v -= float64(t*t*t-t) / 48
		}
		if v <= 0 {
			return 1
		}
		z := (float64(w2)/2 - mean) / math.Sqrt(v)
		return math.Min(1, 2*distuv.UnitNormal.Survival(math.Abs(z)))
	}
	// count[s] is the number of sign assignments whose doubled positive
	// rank sum is s; float64 counts are exact up to 2^53, far above 2^50.
	total := n * (n + 1) // the largest doubled sum
	count := make([]float64, total+1)
	count[0] = 1
	reach := 0
	for _, r := range rank2 {
		for s := reach; s >= 0; s-- {
			if count[s] != 0 {
				count[s+r] += count[s]
			}
		}
		reach += r
	}
	var le, ge, all float64
	for s, c := range count {
		all += c
		if s <= w2 {
			le += c
		}
		if s >= w2 {
			ge += c
		}
	}
	return math.Min(1, 2*math.Min(le, ge)/all)
}

// Holm returns Holm's step-down adjusted p-values of a family of tests, in
// the order given: with the m p-values sorted ascending, the i-th
// (1-based) becomes max over j ≤ i of min(1, (m−j+1)·p_(j)). A test is
// significant at family-wise level α when its adjusted p is below α. NaN
// values (tests that could not be run) are left out of the family and
// stay NaN.
func Holm(ps []float64) []float64 {
	var idx []int
	for i, p := range ps {
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	m, run := len(idx), 0.0
	for j, i := range idx {
		run = math.Max(run, math.Min(1, float64(m-j)*ps[i]))
		out[i] = run
	}
	return out
}

// SeedRates returns each run's violation rate, Violations/Iterations, by
// seed (runs with no iterations are left out). It fails when two runs
// have the same seed: pairs by seed would be ambiguous.
func SeedRates(runs []record.Run) (map[uint64]float64, error) {
	out := make(map[uint64]float64, len(runs))
	for _, r := range runs {
		if r.Iterations <= 0 {
			continue
		}
		if _, dup := out[r.Seed]; dup {
			return nil, fmt.Errorf("analysis: two runs of seed %d", r.Seed)
		}
		out[r.Seed] = float64(r.Violations) / float64(r.Iterations)
	}
	return out, nil
}

// Values returns the values of a per-seed map in ascending seed order.
func Values(m map[uint64]float64) []float64 {
	seeds := make([]uint64, 0, len(m))
	for s := range m {
		seeds = append(seeds, s)
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	out := make([]float64, len(seeds))
	for i, s := range seeds {
		out[i] = m[s]
	}
	return out
}
