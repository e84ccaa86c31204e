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
	out := map[string]record.Counts{}
	for _, v := range rows {
		out[v.MR] = out[v.MR].Add(verdictCounts(v))
	}
	return out
}

// BaselineByParam counts the rows of one MR per parameter (degrees), as the
// original's groupby('parameter').failure.mean(). Rows of mr without a
// parameter are ignored.
func BaselineByParam(rows []record.Verdict, mr string) map[float64]record.Counts {
	out := map[float64]record.Counts{}
	for _, v := range rows {
		if v.MR == mr && v.HasParam() {
			out[v.Param] = out[v.Param].Add(verdictCounts(v))
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

func verdictCounts(v record.Verdict) record.Counts {
	c := record.Counts{Count: 1}
	if v.Violation {
		c.Violations = 1
	}
	return c
}
