// Package analysis turns amt's result files (see experiments/record) into
// the numbers the paper's figures and tables show, aggregated exactly as the
// original Tetraband evaluation.py did:
//
//   - an agent's per-arm (or per-parameter) violation rate is the ratio of
//     means over seeds at the final iteration, Σ violations / Σ selections,
//     not the mean of the per-seed ratios;
//   - the exhaustive baseline's rate of an MR (or of one parameter) is the
//     share of failing (image, MR[, parameter]) rows of the verdict table,
//     so "Rotation" is the unweighted mean over all its angles and images;
//   - progress curves average the cumulative counts over seeds at each
//     logged iteration and divide by the iteration.
//
// It also computes the two oracles agents are compared with: the best single
// arm (the one follow-up variant with the highest violation rate) and the
// per-image best arm (a violation whenever any variant of the image fails).
//
// Rates are fractions in [0, 1]; the plots package multiplies by 100.
package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/scenario"
)

// PoolArms sums each main arm's final counts over runs (seeds): the numerator
// and denominator of the original's ratio-of-means per-arm rate. Arm keys
// that carry a parameter ("rotation:30", as in the flat rotation and shear
// scenarios) are pooled under their MR name, so the result always maps MR
// names to counts.
func PoolArms(runs []record.Run) map[string]record.Counts {
	out := map[string]record.Counts{}
	for _, r := range runs {
		for k, c := range r.Arms {
			if mr, _, ok := scenario.ParseKey(k); ok {
				k = mr
			}
			out[k] = out[k].Add(c)
		}
	}
	return out
}

// PoolParams sums the final per-parameter counts of one MR over runs,
// keyed by degrees. It reads Run.Params ("rotation:-30"); runs whose Params
// hold nothing for mr (the flat rotation and shear scenarios, where the
// angles are the main arms) contribute their parameterised Arms keys
// instead.
func PoolParams(runs []record.Run, mr string) map[float64]record.Counts {
	out := map[float64]record.Counts{}
	add := func(m map[string]record.Counts) bool {
		found := false
		for k, c := range m {
			if name, d, ok := scenario.ParseKey(k); ok && name == mr {
				out[d] = out[d].Add(c)
				found = true
			}
		}
		return found
	}
	for _, r := range runs {
		if !add(r.Params) {
			add(r.Arms)
		}
	}
	return out
}

// Pooled returns Σ violations and Σ iterations over runs: the agent's
// overall violation rate as a ratio of means.
func Pooled(runs []record.Run) record.Counts {
	var c record.Counts
	for _, r := range runs {
		c = c.Add(record.Counts{Count: r.Iterations, Violations: r.Violations})
	}
	return c
}

// Rate returns c's violation rate, NaN when nothing was counted (so that
// "no data" never reads as a rate of 0; record.Counts.Rate gives 0).
func Rate(c record.Counts) float64 {
	if c.Count == 0 {
		return math.NaN()
	}
	return c.Rate()
}

// Spread summarises one value measured once per seed.
type Spread struct {
	N        int
	Mean, SD float64 // SD is the sample standard deviation (0 for N < 2)
	Min, Max float64
}

// SpreadOf summarises xs. It returns the zero Spread for no values.
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := Spread{N: len(xs), Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range xs {
		s.Mean += x
		s.Min = math.Min(s.Min, x)
		s.Max = math.Max(s.Max, x)
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}

// RunRates returns each run's own violation rate, Violations/Iterations
// (runs with no iterations are skipped), for spreads over seeds.
func RunRates(runs []record.Run) []float64 {
	var out []float64
	for _, r := range runs {
		if r.Iterations > 0 {
			out = append(out, float64(r.Violations)/float64(r.Iterations))
		}
	}
	return out
}

// Accuracy is the pooled SUT score of a set of runs.
type Accuracy struct {
	Iterations int
	// Original and Modified are Σ score / Σ iterations on the source and
	// follow-up inputs (accuracy for classification, mean per-image mAP
	// for detection).
	Original, Modified float64
	// MeanIterationMS is the iteration-weighted mean wall time of one
	// iteration; 0 when no run was timed.
	MeanIterationMS float64
}

// AccuracyOf pools the scores and iteration times of runs.
func AccuracyOf(runs []record.Run) Accuracy {
	var a Accuracy
	var orig, mod, ms float64
	timed := 0
	for _, r := range runs {
		a.Iterations += r.Iterations
		orig += r.OriginalScore
		mod += r.ModifiedScore
		if r.MeanIterationMS > 0 {
			ms += r.MeanIterationMS * float64(r.Iterations)
			timed += r.Iterations
		}
	}
	if a.Iterations > 0 {
		a.Original = orig / float64(a.Iterations)
		a.Modified = mod / float64(a.Iterations)
	}
	if timed > 0 {
		a.MeanIterationMS = ms / float64(timed)
	}
	return a
}

// MeanTiming pools the measured times of runs (timing.json's, in the
// order of runs) into iteration-weighted means; ok is false when their
// numbers differ or nothing was timed.
func MeanTiming(runs []record.Run, times []record.RunTiming) (mean record.RunTiming, ok bool) {
	if len(runs) != len(times) {
		return mean, false
	}
	total := 0.0
	for i, t := range times {
		w := float64(runs[i].Iterations)
		total += w
		mean.MeanDecisionUS += w * t.MeanDecisionUS
		mean.MeanIterationMS += w * t.MeanIterationMS
		mean.MeanLoadMS += w * t.MeanLoadMS
		mean.MeanFeaturesMS += w * t.MeanFeaturesMS
		mean.MeanChooseUS += w * t.MeanChooseUS
		mean.MeanEvaluateMS += w * t.MeanEvaluateMS
		mean.MeanUpdateUS += w * t.MeanUpdateUS
	}
	if total == 0 || mean.MeanIterationMS == 0 {
		return record.RunTiming{}, false
	}
	for _, f := range []*float64{&mean.MeanDecisionUS, &mean.MeanIterationMS, &mean.MeanLoadMS, &mean.MeanFeaturesMS,
		&mean.MeanChooseUS, &mean.MeanEvaluateMS, &mean.MeanUpdateUS} {
		*f /= total
	}
	return mean, true
}

// SortedKeys returns the keys of m in ascending order.
func SortedKeys[K string | float64 | int, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// errorf prefixes errors of this package.
func errorf(format string, a ...any) error {
	return fmt.Errorf("analysis: "+format, a...)
}
