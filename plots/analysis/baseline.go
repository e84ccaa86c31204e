package analysis

import (
	"math"
	"slices"

	"github.com/amt-dev/amt/experiments/record"
)

// The exhaustive baseline: aggregations of the verdict table (one row per
// image and follow-up variant). Count is the number of rows, Violations the
// number of failing rows, so Counts.Rate is the share of failing rows.

// BaselineByMR counts the rows and failing rows of each MR over all its
// parameters, as the original's groupby('action').failure.mean().
func BaselineByMR(rows []record.Verdict) map[string]record.Counts {
	return groupBy(rows, func(v record.Verdict) (string, bool) { return v.MR, true })
}

// BaselineByParam counts the rows of one MR per parameter (degrees), as the
// original's groupby('parameter').failure.mean(). Rows of mr without a
// parameter are ignored.
func BaselineByParam(rows []record.Verdict, mr string) map[float64]record.Counts {
	return groupBy(rows, func(v record.Verdict) (float64, bool) { return v.Param, v.MR == mr && v.HasParam() })
}

// groupBy counts the rows and failing rows of each group, as the
// original's groupby(...).failure: key returns a row's group, or false
// for a row left out.
func groupBy[K comparable](rows []record.Verdict, key func(v record.Verdict) (K, bool)) map[K]record.Counts {
	out := map[K]record.Counts{}
	for _, v := range rows {
		if k, ok := key(v); ok {
			out[k] = out[k].Add(verdictCounts(v))
		}
	}
	return out
}

// BaselineOverall counts all rows: the original progress plot's dashed
// failure-rate line (in the hierarchical scenario it is dominated by the 36
// rotation and 18 shear rows per image).
func BaselineOverall(rows []record.Verdict) record.Counts {
	var c record.Counts
	for _, v := range rows {
		c = c.Add(verdictCounts(v))
	}
	return c
}

// BaselineAccuracy returns the share of rows whose source and follow-up
// predictions equal the label (the original's original_accuracy and
// modified_accuracy baselines, averaged over all rows). ok is false when the
// table has no labelled classification rows.
func BaselineAccuracy(rows []record.Verdict) (original, modified float64, ok bool) {
	n := 0
	for _, v := range rows {
		if v.Label < 0 || v.PredOriginal < 0 || v.PredTransformed < 0 {
			continue
		}
		n++
		if v.PredOriginal == v.Label {
			original++
		}
		if v.PredTransformed == v.Label {
			modified++
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	return original / float64(n), modified / float64(n), true
}

// Images returns the number of distinct images in the table.
func Images(rows []record.Verdict) int {
	seen := map[int]bool{}
	for _, v := range rows {
		seen[v.Image] = true
	}
	return len(seen)
}

// Variants returns the number of distinct variants (MR and parameter,
// record.Verdict.ParamKey) in the table.
func Variants(rows []record.Verdict) int {
	seen := map[string]bool{}
	for _, v := range rows {
		seen[v.ParamKey()] = true
	}
	return len(seen)
}

// VariantsPerImage returns the distinct numbers of rows per image, in
// ascending order: one number for a complete table.
func VariantsPerImage(rows []record.Verdict) []int {
	per := map[int]int{}
	for _, v := range rows {
		per[v.Image]++
	}
	n := map[int]bool{}
	for _, k := range per {
		n[k] = true
	}
	return SortedKeys(n)
}

// IsDetection reports whether the table holds detection verdicts (per-image
// mAP columns instead of predicted classes).
func IsDetection(rows []record.Verdict) bool {
	for _, v := range rows {
		if !math.IsNaN(v.MapOriginal) {
			return true
		}
	}
	return false
}

// Selector picks the rows of one row of the per-class effects table: an MR
// and, for parameterised MRs, the parameters to pool (empty = all).
type Selector struct {
	Name   string    // row label, e.g. "Rotation ±30°"
	MR     string    // MR name
	Params []float64 // parameters to pool; empty takes every row of MR
}

// Match reports whether v belongs to the selector.
func (s Selector) Match(v record.Verdict) bool {
	if v.MR != s.MR {
		return false
	}
	if len(s.Params) == 0 {
		return true
	}
	return v.HasParam() && slices.Contains(s.Params, v.Param)
}

// ClassEffects counts, for each selector and each label, the rows and failing
// rows: the cells of the paper's Table 1 ("percentage of images in the class
// which are wrongly classified after applying the MR"; a violation is a
// change of the predicted class, as in the original's effects_table). The
// result is indexed [selector][label]; labels outside [0, classes) are
// skipped. ok is false when no row has a usable label.
func ClassEffects(rows []record.Verdict, sel []Selector, classes int) (cells [][]record.Counts, ok bool) {
	cells = make([][]record.Counts, len(sel))
	for i := range cells {
		cells[i] = make([]record.Counts, classes)
	}
	for _, v := range rows {
		if v.Label < 0 || v.Label >= classes {
			continue
		}
		for i, s := range sel {
			if s.Match(v) {
				cells[i][v.Label] = cells[i][v.Label].Add(verdictCounts(v))
				ok = true
			}
		}
	}
	return cells, ok
}

// CountSelected counts the rows and failing rows s selects, over all
// images: the baseline of one selector pooled over rows.
func CountSelected(rows []record.Verdict, s Selector) record.Counts {
	var c record.Counts
	for _, v := range rows {
		if s.Match(v) {
			c = c.Add(verdictCounts(v))
		}
	}
	return c
}

// Effects is the per-class effects table (the paper's Table 1) with its
// averages, all rates in [0, 1] and NaN where nothing was counted.
type Effects struct {
	// Cells are the counts, indexed [selector][class] (ClassEffects).
	Cells [][]record.Counts
	// RowMean is each selector's mean over the classes that have rows:
	// the paper's Avg. column (tex line 607: "the average violation rate
	// over all classes").
	RowMean []float64
	// ClassMean is each class's mean over the first main selectors that
	// have rows: the paper's Avg. row.
	ClassMean []float64
	// Overall is the mean of the first main selectors' RowMean.
	Overall float64
}

// EffectsOf computes the per-class effects table of rows for the selectors
// and its averages; the first main selectors are the table's MRs, any after
// them extra rows left out of the Avg. row and the overall mean. ok is false
// when no row has a usable label.
func EffectsOf(rows []record.Verdict, sel []Selector, classes, main int) (e Effects, ok bool) {
	e.Cells, ok = ClassEffects(rows, sel, classes)
	if !ok {
		return e, false
	}
	e.RowMean = make([]float64, len(sel))
	colSum := make([]float64, classes)
	colN := make([]int, classes)
	for i := range sel {
		var sum float64
		n := 0
		for c := range classes {
			r := Rate(e.Cells[i][c])
			if !math.IsNaN(r) {
				sum += r
				n++
				if i < main {
					colSum[c] += r
					colN[c]++
				}
			}
		}
		e.RowMean[i] = math.NaN()
		if n > 0 {
			e.RowMean[i] = sum / float64(n)
		}
	}
	e.ClassMean = make([]float64, classes)
	for c := range classes {
		e.ClassMean[c] = math.NaN()
		if colN[c] > 0 {
			e.ClassMean[c] = colSum[c] / float64(colN[c])
		}
	}
	var overall float64
	on := 0
	for i := 0; i < main && i < len(sel); i++ {
		if !math.IsNaN(e.RowMean[i]) {
			overall += e.RowMean[i]
			on++
		}
	}
	e.Overall = math.NaN()
	if on > 0 {
		e.Overall = overall / float64(on)
	}
	return e, true
}

func verdictCounts(v record.Verdict) record.Counts {
	c := record.Counts{Count: 1}
	if v.Violation {
		c.Violations = 1
	}
	return c
}
