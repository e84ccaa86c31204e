package plots

import (
	"fmt"
	"math"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
	"github.com/amt-dev/amt/scenario"
)

// perDegree draws, for every parameterised MR, the primary agent's
// violation rate per parameter value beside the baseline (the paper's
// per-degree figures: RQ1's parameter choice, RQ2's robustness boundaries)
// and tabulates every agent's rates and selections.
func (b *builder) perDegree() error {
	mrs := b.degreeMRs()
	if len(mrs) == 0 {
		return nil
	}
	title := "Violation rate per degree"
	if b.wantsPerMR() {
		b.p("## %s (RQ1: parameter choice)\n\n", title)
		b.p("The paper's Figures \"Fault-revealing MRs\" (b, c): the agent's violation rate per angle of the parameterised MRs ")
		b.p("(solid) against the exhaustive baseline (dashed), with a (0°, 0) point as the original draws it. ")
	} else {
		b.p("## %s (RQ2: robustness boundaries)\n\n", title)
		b.p("The paper's Figure \"Image classification/Object detection: average violation rate per degree step\": the agent ")
		b.p("(solid) against the exhaustive baseline (dashed), with a (0°, 0) point as the original draws it. ")
	}
	b.p("The paper gives these curves only as figures, without numbers. Unlike the original, the agent's line joins only ")
	b.p("the angles it chose at least %d times (dots); rates from fewer selections are hollow circles off the line, and angles ", minSelections)
	b.p("it never chose leave a gap, so a pick or two (0 %% or 100 %%) does not read as a spike. The tables give every rate with ")
	b.p("its number of selections.\n\n")
	ymin, ymax := 0.0, 80.0 // the original's y-limits
	if b.detection {
		ymin, ymax = 50, 100
	}
	for _, m := range mrs {
		var series []lineSeries
		var pts map[float64]record.Counts
		if b.primary != nil {
			pts = analysis.PoolParams(b.primary.Summary.Runs, m)
		}
		base := analysis.BaselineByParam(b.e.Verdicts, m)
		grid := b.degreeGrid(m, pts, base)
		if len(pts) > 0 {
			xs, ys, faint := degreeSeries(pts, grid, minSelections)
			series = append(series, lineSeries{Name: b.primary.Name, X: xs, Y: ys, Points: true, Faint: faint,
				FaintName: fmt.Sprintf("%s, fewer than %d selections", b.primary.Name, minSelections)})
		}
		if len(base) > 0 {
			xs, ys, _ := degreeSeries(base, grid, 1)
			series = append(series, lineSeries{Name: "baseline (exhaustive)", X: xs, Y: ys, Baseline: true})
		}
		if len(series) == 0 {
			continue
		}
		name, unit := displayName(m), b.paramUnit(m)
		per, stem := "degree", "violation-rate-per-degree-"
		if unit != "degrees" {
			per, stem = "parameter value", "violation-rate-per-value-"
		}
		f, err := lineChart(stem+m, fmt.Sprintf("%s: %s, violation rate per %s", b.e.Name, name, per),
			strings.ToLower(name)+" ("+unit+")", "violation rate (%)", series, ymin, ymax, true, halfWidth)
		if err != nil {
			return err
		}
		if unit == "degrees" {
			// Ticks every 15°, or every 10° when no angle exceeds 45° (the
			// original's rotation and shear figures).
			step := 15.0
			if maxAbs(series) <= 45 {
				step = 10
			}
			f.Plot.X.Tick.Marker = degreeTicks{step: step}
		}
		b.p("### %s\n\n", name)
		b.figure(f, name+" violation rate per "+per)
		// Table: every agent's rate and selections per degree, and the baseline.
		agentPts := make([]map[float64]record.Counts, len(b.e.Agents))
		degs := map[float64]bool{}
		for d := range base {
			degs[d] = true
		}
		t := Table{Name: stem + m, Header: []string{unit}}
		for i, a := range b.e.Agents {
			agentPts[i] = analysis.PoolParams(a.Summary.Runs, m)
			for d := range agentPts[i] {
				degs[d] = true
			}
			t.Header = append(t.Header, a.Name, a.Name+" selections")
		}
		if len(base) > 0 {
			t.Header = append(t.Header, "baseline")
		}
		for _, d := range analysis.SortedKeys(degs) {
			row := []string{scenario.FormatValue(d)}
			for i := range b.e.Agents {
				c := agentPts[i][d]
				row = append(row, pct(analysis.Rate(c)), fmt.Sprint(c.Count))
			}
			if len(base) > 0 {
				row = append(row, pct(analysis.Rate(base[d])))
			}
			t.Rows = append(t.Rows, row)
		}
		t.Caption = fmt.Sprintf("%s: violation rate (%%) per %s (agents pooled over seeds) and the exhaustive baseline.", name, per)
		b.table(t)
	}
	return nil
}

// minSelections is the fewest selections of a parameter value whose
// violation rate the agent's per-degree line passes through: a rate from
// fewer is drawn as a hollow marker off the line, since one or two picks
// can only give 0 % or 100 % (detection's 158-image pass picks each of 36
// rotation angles a handful of times per seed).
const minSelections = 5

// degreeGrid returns the values of mr's parameter a per-degree curve runs
// over, in ascending order: those of the scenario in run.json, of the
// counts given, and 0 (the original's (0°, 0) point).
func (b *builder) degreeGrid(mr string, counts ...map[float64]record.Counts) []float64 {
	vals := map[float64]bool{0: true}
	if m := b.e.Meta; m != nil {
		for _, a := range m.Scenario.Arms {
			if a.Action == mr {
				for _, v := range a.Values {
					vals[v] = true
				}
			}
		}
	}
	for _, c := range counts {
		for v := range c {
			vals[v] = true
		}
	}
	return analysis.SortedKeys(vals)
}

// degreeSeries returns the points of a per-degree curve over grid: (0, 0)
// as the original draws it; NaN, a gap in the line, for a value without
// selections; otherwise the violation rate in percent, faint when it rests
// on fewer than minCount selections.
func degreeSeries(pts map[float64]record.Counts, grid []float64, minCount int) (xs, ys []float64, faint []bool) {
	for _, k := range grid {
		c := pts[k]
		y := 100 * analysis.Rate(c) // NaN without selections
		if k == 0 {
			y = 0
		}
		xs = append(xs, k)
		ys = append(ys, y)
		faint = append(faint, k != 0 && c.Count > 0 && c.Count < minCount)
	}
	return xs, ys, faint
}

// degreeMRs returns the parameterised MRs with data: the paper's in its
// order, then any other, sorted.
func (b *builder) degreeMRs() []string {
	present := map[string]bool{}
	for _, v := range b.e.Verdicts {
		if v.HasParam() {
			present[v.MR] = true
		}
	}
	for _, a := range b.e.Agents {
		for _, r := range a.Summary.Runs {
			for _, m := range []map[string]record.Counts{r.Arms, r.Params} {
				for k := range m {
					if mr, _, ok := scenario.ParseKey(k); ok {
						present[mr] = true
					}
				}
			}
		}
	}
	return paperOrder(present)
}

// paramUnit returns the unit of mr's parameter as run.json describes it,
// "degrees" (the paper's parameters) without one.
func (b *builder) paramUnit(mr string) string {
	if m := b.e.Meta; m != nil {
		if p, ok := m.Scenario.Params[mr]; ok && p.Unit != "" {
			return p.Unit
		}
	}
	return "degrees"
}

// maxAbs returns the largest |x| of the series.
func maxAbs(series []lineSeries) float64 {
	m := 0.0
	for _, s := range series {
		for _, x := range s.X {
			m = max(m, math.Abs(x))
		}
	}
	return m
}
