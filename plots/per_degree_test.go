package plots

import (
	"math"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/scenario"
)

// A per-degree curve has a point at every grid value: (0, 0) as the
// original draws it, a gap (NaN) where the agent never chose the value, and
// a faint point where it chose it fewer than minCount times — so that one
// pick's 0 % or 100 % is neither joined into the line nor hidden.
func TestDegreeSeries(t *testing.T) {
	pts := map[float64]record.Counts{
		-10: {Count: 6, Violations: 3}, // 50 %, solid
		-5:  {Count: 1, Violations: 1}, // 100 % from one pick: faint
		10:  {Count: 5, Violations: 0}, // 0 %, solid (minCount reached)
		// 5 never chosen: a gap
	}
	grid := []float64{-10, -5, 0, 5, 10}
	xs, ys, faint := degreeSeries(pts, grid, 5)
	if len(xs) != len(grid) || len(ys) != len(grid) || len(faint) != len(grid) {
		t.Fatalf("%d x, %d y, %d faint flags for a grid of %d values (a value without selections must leave a gap, not vanish)", len(xs), len(ys), len(faint), len(grid))
	}
	wantY := []float64{50, 100, 0, math.NaN(), 0}
	wantFaint := []bool{false, true, false, false, false}
	for i := range grid {
		if xs[i] != grid[i] || !(ys[i] == wantY[i] || math.IsNaN(ys[i]) && math.IsNaN(wantY[i])) || faint[i] != wantFaint[i] {
			t.Errorf("point %d: (%v, %v, faint %v), want (%v, %v, faint %v)", i, xs[i], ys[i], faint[i], grid[i], wantY[i], wantFaint[i])
		}
	}
	// The line joins -10 alone (then -5 is faint), 0, and 10 alone (5 is a
	// gap): three runs, none across the faint point or the gap.
	segs := lineSegments(xs, ys, faint)
	var got []string
	for _, s := range segs {
		var p []string
		for _, xy := range s {
			p = append(p, scenario.FormatValue(xy.X))
		}
		got = append(got, strings.Join(p, " "))
	}
	if strings.Join(got, "|") != "-10|0|10" {
		t.Errorf("line runs %q, want -10|0|10", got)
	}
	// With every value chosen often enough, one line through all.
	full := map[float64]record.Counts{-10: {Count: 9, Violations: 1}, -5: {Count: 9}, 5: {Count: 9, Violations: 9}, 10: {Count: 9}}
	xs, ys, faint = degreeSeries(full, grid, 5)
	if segs := lineSegments(xs, ys, faint); len(segs) != 1 || len(segs[0]) != 5 {
		t.Errorf("a complete curve is split: %v", segs)
	}
}

// The line chart draws series with gaps and faint points, and refuses one
// with nothing to draw.
func TestLineChartGapsAndFaintPoints(t *testing.T) {
	s := lineSeries{Name: "cover", X: []float64{-10, -5, 0, 5, 10}, Y: []float64{50, 100, 0, math.NaN(), 0},
		Faint: []bool{false, true, false, false, false}, Points: true, FaintName: "cover, few"}
	f, err := lineChart("t", "t", "x", "y", []lineSeries{s}, 0, 100, true, halfWidth)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Legend) != 2 || f.Legend[1].name != "cover, few" || len(f.Legend[0].thumbs) != 2 {
		t.Errorf("legend %+v: want the series (line and dot) and its faint points", f.Legend)
	}
	if _, _, err := f.encode(); err != nil {
		t.Fatal(err)
	}
	empty := lineSeries{Name: "none", X: []float64{5}, Y: []float64{math.NaN()}}
	if _, err := lineChart("t", "t", "x", "y", []lineSeries{empty}, 0, 100, true, halfWidth); err == nil {
		t.Error("a series without a value was drawn")
	}
}
