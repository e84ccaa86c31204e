package plots

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
	"github.com/amt-dev/amt/scenario"
)

// Options controls Render.
type Options struct {
	// Primary is the agent compared with the exhaustive baseline in the
	// per-MR and per-degree figures (the paper's "Tetraband" bars). Empty
	// picks "cover" when present, else the first agent that is not
	// "random", else the first agent.
	Primary string
	// Notes are extra caveats appended to the report's list.
	Notes []string
}

// Output lists what Render wrote, as paths relative to the experiment's
// folder, in the order they were written.
type Output struct {
	Report  string
	Figures []string // .png and .svg
	Tables  []string // .md, .csv and .tex
}

// Render draws an experiment's figures (PNG and SVG, in figures/), writes
// its tables (Markdown, CSV and LaTeX, in tables/) and the report.md that
// puts them beside the paper's published values. Which sections appear
// depends on the results present: per-MR and per-degree violation rates,
// the per-class effects table (Table 1), runtime and accuracy (Table 2),
// progress curves and the agent comparison with the two oracles. The output
// depends only on the result files: the same inputs give the same bytes.
func Render(ctx context.Context, e *Experiment, opt Options) (Output, error) {
	b := &builder{e: e, opt: opt}
	if err := b.init(); err != nil {
		return Output{}, err
	}
	for _, section := range []func() error{
		b.setup, b.perMR, b.perDegree, b.table1, b.table2, b.progress, b.comparison, b.claims, b.caveats, b.config,
	} {
		if err := ctx.Err(); err != nil {
			return Output{}, fmt.Errorf("plots: %w", err)
		}
		if err := section(); err != nil {
			return Output{}, err
		}
	}
	var out Output
	for _, f := range b.figs {
		if err := ctx.Err(); err != nil {
			return Output{}, fmt.Errorf("plots: %w", err)
		}
		if err := f.write(filepath.Join(e.Dir, record.FiguresDir)); err != nil {
			return Output{}, err
		}
		out.Figures = append(out.Figures, filepath.Join(record.FiguresDir, f.Stem+".png"), filepath.Join(record.FiguresDir, f.Stem+".svg"))
	}
	for _, t := range b.tables {
		for _, enc := range []struct {
			ext  string
			data []byte
		}{{".md", t.Markdown()}, {".csv", t.CSV()}, {".tex", t.LaTeX()}} {
			rel := filepath.Join(record.TablesDir, t.Name+enc.ext)
			if err := record.WriteFileAtomic(filepath.Join(e.Dir, rel), enc.data); err != nil {
				return Output{}, fmt.Errorf("plots: %w", err)
			}
			out.Tables = append(out.Tables, rel)
		}
	}
	if err := record.WriteFileAtomic(filepath.Join(e.Dir, record.ReportFile), b.md.Bytes()); err != nil {
		return Output{}, fmt.Errorf("plots: %w", err)
	}
	out.Report = record.ReportFile
	return out, nil
}

// builder accumulates the report's Markdown, figures and tables.
type builder struct {
	e         *Experiment
	opt       Options
	md        bytes.Buffer
	figs      []figure
	tables    []Table
	detection bool
	primary   *Agent // may be nil
	random    *Agent // the agent named "random", may be nil
	caveatsOf []string
}

func (b *builder) init() error {
	e := b.e
	// An online experiment has no verdict table; its run metadata names
	// the case study.
	b.detection = analysis.IsDetection(e.Verdicts) || (e.Meta != nil && e.Meta.CaseStudy == "detection")
	for _, a := range e.Agents {
		if a.Summary.Scenario == "" {
			return fmt.Errorf("plots: %s/%s/%s: missing field \"scenario\"", e.Dir, a.Name, record.SummaryFile)
		}
	}
	if b.opt.Primary != "" {
		b.primary = b.agent(b.opt.Primary)
		if b.primary == nil {
			return fmt.Errorf("plots: primary agent %q not found in %s (agents: %s)", b.opt.Primary, e.Dir, strings.Join(b.agentNames(), ", "))
		}
	} else if b.primary = b.agent("cover"); b.primary == nil {
		for i := range e.Agents {
			if e.Agents[i].Name != "random" {
				b.primary = &e.Agents[i]
				break
			}
		}
		if b.primary == nil && len(e.Agents) > 0 {
			b.primary = &e.Agents[0]
		}
	}
	if r := b.agent("random"); r != nil && r != b.primary {
		b.random = r
	}
	return nil
}

func (b *builder) agent(name string) *Agent {
	for i := range b.e.Agents {
		if b.e.Agents[i].Name == name {
			return &b.e.Agents[i]
		}
	}
	return nil
}

func (b *builder) agentNames() []string {
	var out []string
	for _, a := range b.e.Agents {
		out = append(out, a.Name)
	}
	return out
}

func (b *builder) p(format string, a ...any) { fmt.Fprintf(&b.md, format, a...) }

// table adds t to the outputs and embeds it in the report.
func (b *builder) table(t Table) {
	b.tables = append(b.tables, t)
	if t.Caption != "" {
		b.p("%s\n\n", t.Caption)
	}
	b.md.Write(t.Markdown())
	b.p("\n*Table files: [md](%s/%s.md), [csv](%s/%s.csv), [tex](%s/%s.tex).*\n\n", record.TablesDir, t.Name, record.TablesDir, t.Name, record.TablesDir, t.Name)
}

// figure adds f to the outputs and embeds its PNG in the report.
func (b *builder) figure(f figure, alt string) {
	b.figs = append(b.figs, f)
	b.p("![%s](%s/%s.png)\n\n*Figure files: [png](%s/%s.png), [svg](%s/%s.svg).*\n\n", alt, record.FiguresDir, f.Stem, record.FiguresDir, f.Stem, record.FiguresDir, f.Stem)
}

func (b *builder) caseStudy() string {
	if b.detection {
		return "detection"
	}
	return "classification"
}

// scenarios returns the agents' scenarios, sorted and without repeats.
func (b *builder) scenarios() []string {
	var out []string
	for _, a := range b.e.Agents {
		if !slices.Contains(out, a.Summary.Scenario) {
			out = append(out, a.Summary.Scenario)
		}
	}
	sort.Strings(out)
	return out
}

// scenarioRows returns the verdict table's rows an agent of the named
// scenario can choose: the scenario's variants as run.json lists them, or
// every row for a scenario the metadata does not describe.
func (b *builder) scenarioRows(name string) []record.Verdict {
	var variants []string
	if m := b.e.Meta; m != nil && m.Scenario.Name == name {
		variants = m.Scenario.Variants
	}
	return analysis.ScenarioRows(b.e.Verdicts, variants)
}

// images returns the number of distinct images in the table.
func (b *builder) images() int {
	seen := map[int]bool{}
	for _, v := range b.e.Verdicts {
		seen[v.Image] = true
	}
	return len(seen)
}

// rate returns c's rate, NaN when nothing was counted.
func rate(c record.Counts) float64 {
	if c.Count == 0 {
		return math.NaN()
	}
	return c.Rate()
}

func (b *builder) setup() error {
	e := b.e
	b.p("# Report: %s\n\n", e.Name)
	b.p("Generated by `amt plot` from the result files in this folder; rerun it to redraw. ")
	b.p("Violation rates are in percent. An agent's rate pools its seeds as Σ violations / Σ selections at the final iteration ")
	b.p("(the original evaluation's ratio of means, not the mean of per-seed rates); the baseline's rate is the share of failing ")
	b.p("(image, MR, parameter) rows of the exhaustive verdict table, so Rotation and Shear average over all their angles.\n\n")
	b.p("## Setup\n\n")
	b.p("- Case study: %s\n", b.caseStudy())
	if e.Verdicts != nil {
		variants := map[string]bool{}
		for _, v := range e.Verdicts {
			variants[v.ParamKey()] = true
		}
		b.p("- Exhaustive verdict table (`%s`): %d images × %d variants = %d rows\n", record.VerdictsFile, b.images(), len(variants), len(e.Verdicts))
	} else {
		b.p("- No exhaustive verdict table (`%s`) in this folder: baseline columns and oracles are left out.\n", record.VerdictsFile)
	}
	if b.primary != nil {
		b.p("- Agent compared with the baseline in the figures: `%s`\n", b.primary.Name)
	}
	b.p("\n")
	if len(e.Agents) == 0 {
		return nil
	}
	t := Table{Name: "agents", Header: []string{"agent", "kind", "scenario", "mode", "seeds", "iterations per run", "progress logs"}}
	for _, a := range e.Agents {
		its := map[int]bool{}
		for _, r := range a.Summary.Runs {
			its[r.Iterations] = true
		}
		var itStr []string
		for _, it := range analysis.SortedKeys(its) {
			itStr = append(itStr, fmt.Sprint(it))
		}
		mode := a.Summary.Mode
		if mode == "" {
			mode = "–"
		}
		t.Rows = append(t.Rows, []string{a.Name, a.Summary.Agent, a.Summary.Scenario, mode, fmt.Sprint(len(a.Summary.Runs)), strings.Join(itStr, ", "), fmt.Sprint(len(a.Logs))})
	}
	b.table(t)
	return nil
}

// mrCategories returns the MRs of the per-MR chart: the paper's seven in
// their order when present, then any other MR of the table or the primary
// agent, sorted.
func (b *builder) mrCategories() []string {
	present := map[string]bool{}
	for _, v := range b.e.Verdicts {
		present[v.MR] = true
	}
	if b.primary != nil {
		for k := range analysis.PoolArms(b.primary.Summary.Runs) {
			present[k] = true
		}
	}
	var out []string
	for _, m := range paperMRs() {
		if present[m] {
			out = append(out, m)
			delete(present, m)
		}
	}
	return append(out, analysis.SortedKeys(present)...)
}

// wantsPerMR reports whether the experiment chooses between MRs (rather
// than the values of one MR), so a per-MR comparison is meaningful: the
// scenario in run.json has arms of several MRs, or, without run metadata,
// the agents chose several (or, without agents, the table has several).
func (b *builder) wantsPerMR() bool {
	if m := b.e.Meta; m != nil {
		actions := map[string]bool{}
		for _, a := range m.Scenario.Arms {
			actions[a.Action] = true
		}
		return len(actions) > 1
	}
	if len(b.e.Agents) == 0 {
		return len(b.mrCategories()) > 1
	}
	chosen := map[string]bool{}
	for _, a := range b.e.Agents {
		for k := range analysis.PoolArms(a.Summary.Runs) {
			chosen[k] = true
		}
	}
	return len(chosen) > 1
}

func (b *builder) perMR() error {
	if !b.wantsPerMR() {
		return nil
	}
	cats := b.mrCategories()
	if len(cats) == 0 {
		return nil
	}
	base := analysis.BaselineByMR(b.e.Verdicts)
	t1 := map[string]record.Counts{}
	for _, s := range table1Selectors()[:7] {
		for _, v := range b.e.Verdicts {
			if s.Match(v) {
				t1[s.MR] = t1[s.MR].Add(record.Counts{Count: 1, Violations: boolInt(v.Violation)})
			}
		}
	}
	paper := map[string]float64{}
	if !b.detection {
		for _, r := range PaperTable1() {
			paper[r.MR] = r.Avg
		}
	}
	agentRates := make([]map[string]record.Counts, len(b.e.Agents))
	for i, a := range b.e.Agents {
		agentRates[i] = analysis.PoolArms(a.Summary.Runs)
	}
	var primary map[string]record.Counts
	if b.primary != nil {
		primary = analysis.PoolArms(b.primary.Summary.Runs)
	}
	// Sort ascending by the primary agent's rate (the paper's order), else by
	// the baseline; MRs without a value go last, ties keep the paper's order.
	key := func(m string) float64 {
		if primary != nil {
			return rate(primary[m])
		}
		return rate(base[m])
	}
	sort.SliceStable(cats, func(i, j int) bool {
		ki, kj := key(cats[i]), key(cats[j])
		if math.IsNaN(kj) {
			return !math.IsNaN(ki)
		}
		return ki < kj
	})
	var labels []string
	for _, m := range cats {
		labels = append(labels, displayName(m))
	}
	var series []barSeries
	if b.primary != nil {
		s := barSeries{Name: b.primary.Name}
		for _, m := range cats {
			s.Values = append(s.Values, 100*rate(primary[m]))
		}
		series = append(series, s)
	}
	if b.e.Verdicts != nil {
		s := barSeries{Name: "baseline (exhaustive)", Baseline: true}
		for _, m := range cats {
			s.Values = append(s.Values, 100*rate(base[m]))
		}
		series = append(series, s)
	}
	b.p("## Violation rate per MR (RQ1)\n\n")
	b.p("The paper's Figure \"Fault-revealing MRs\" (a): the violation rate of the follow-up tests generated by each MR the agent ")
	b.p("selected, against the exhaustive baseline, sorted ascending by the agent's rate as the paper does. The paper gives the ")
	b.p("agent's bars only as a figure (no numbers in the .tex); its baseline numbers are Table 1's Avg. column, which used ")
	b.p("rotation ±30° and shear ±20° only, whereas the figure's baseline bars average over all angles.\n\n")
	f, err := barChart("violation-rate-per-mr", fmt.Sprintf("%s: violation rate per MR", b.e.Name), "violation rate (%)", labels, series)
	if err != nil {
		return err
	}
	b.figure(f, "violation rate per MR")
	t := Table{Name: "violation-rate-per-mr", Header: []string{"MR"}}
	for _, a := range b.e.Agents {
		t.Header = append(t.Header, a.Name)
	}
	hasBase := b.e.Verdicts != nil
	if hasBase {
		t.Header = append(t.Header, "baseline (all angles)", "baseline (rot ±30°, shear ±20°)")
	}
	if len(paper) > 0 {
		t.Header = append(t.Header, "paper Table 1 Avg.")
		if hasBase {
			t.Header = append(t.Header, "ours − paper")
		}
	}
	for _, m := range cats {
		row := []string{displayName(m)}
		for i := range b.e.Agents {
			row = append(row, pct(rate(agentRates[i][m])))
		}
		ours := rate(base[m])
		if len(table1Params(m)) > 0 {
			ours = rate(t1[m]) // NaN when the table lacks Table 1's angles
		}
		if hasBase {
			row = append(row, pct(rate(base[m])), pct(ours))
		}
		if len(paper) > 0 {
			pv, ok := paper[m]
			if !ok {
				pv = math.NaN()
			}
			row = append(row, num(pv))
			if hasBase {
				row = append(row, signed(100*ours-pv))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	t.Caption = "Violation rate (%) per MR: agents (pooled over seeds)"
	if hasBase {
		t.Caption += ", exhaustive baseline"
	}
	if len(paper) > 0 {
		t.Caption += ", and the paper's Table 1 average"
	}
	t.Caption += "."
	b.table(t)
	return nil
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

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
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
	var out []string
	for _, m := range paperMRs() {
		if present[m] {
			out = append(out, m)
			delete(present, m)
		}
	}
	return append(out, analysis.SortedKeys(present)...)
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
	b.p("The paper gives these curves only as figures, without numbers.\n\n")
	ymin, ymax := 0.0, 80.0 // the original's y-limits
	if b.detection {
		ymin, ymax = 50, 100
	}
	for _, m := range mrs {
		var series []lineSeries
		withZero := func(pts map[float64]record.Counts) (xs, ys []float64) {
			keys := analysis.SortedKeys(pts)
			if !slices.Contains(keys, 0) {
				keys = append(keys, 0)
				sort.Float64s(keys)
			}
			for _, k := range keys {
				if k != 0 && pts[k].Count == 0 {
					// Never chosen (short runs, e.g. detection's 158
					// iterations): no rate to draw; the line joins its
					// neighbours.
					continue
				}
				xs = append(xs, k)
				if k == 0 {
					ys = append(ys, 0)
				} else {
					ys = append(ys, 100*rate(pts[k]))
				}
			}
			return xs, ys
		}
		if b.primary != nil {
			if pts := analysis.PoolParams(b.primary.Summary.Runs, m); len(pts) > 0 {
				xs, ys := withZero(pts)
				series = append(series, lineSeries{Name: b.primary.Name, X: xs, Y: ys})
			}
		}
		base := analysis.BaselineByParam(b.e.Verdicts, m)
		if len(base) > 0 {
			xs, ys := withZero(base)
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
				row = append(row, pct(rate(c)), fmt.Sprint(c.Count))
			}
			if len(base) > 0 {
				row = append(row, pct(rate(base[d])))
			}
			t.Rows = append(t.Rows, row)
		}
		t.Caption = fmt.Sprintf("%s: violation rate (%%) per %s (agents pooled over seeds) and the exhaustive baseline.", name, per)
		b.table(t)
	}
	return nil
}

// table1 writes the per-class effects table beside the paper's Table 1.
func (b *builder) table1() error {
	if b.detection || b.e.Verdicts == nil || !b.wantsPerMR() {
		return nil
	}
	classes := CIFAR10Classes()
	for _, v := range b.e.Verdicts {
		if v.Label >= len(classes) {
			b.p("## Effects per class (Table 1)\n\nLeft out: the table's labels go beyond the %d CIFAR-10 classes (label %d).\n\n", len(classes), v.Label)
			return nil
		}
	}
	sel := table1Selectors()
	cells, ok := analysis.ClassEffects(b.e.Verdicts, sel, len(classes))
	if !ok {
		b.p("## Effects per class (Table 1)\n\nLeft out: the verdict table has no labels.\n\n")
		return nil
	}
	b.p("## Effects per class (Table 1)\n\n")
	b.p("Share (%%) of each class's follow-ups whose predicted class differs from the source's, from the exhaustive table. ")
	b.p("As the original's numbers (original-implementation.md §9), Rotation is ±30° and Shear ±20° although the paper's ")
	b.p("caption says 30° for both; the extra row Shear ±30° is not in the paper and not part of the averages. ")
	b.p("Avg. (column) is the mean over classes, Avg. (row) the mean over the seven MRs, as in the paper.\n\n")
	header := append([]string{"MR"}, classes...)
	header = append(header, "Avg.")
	ours := Table{Name: "table1-effects-per-class", Header: header,
		Caption: "Ours: effects of MRs by the true class of the image (%)."}
	avg := make([]float64, len(sel))
	colSum := make([]float64, len(classes))
	colN := make([]int, len(classes))
	for i, s := range sel {
		row := []string{s.Name}
		var sum float64
		n := 0
		for c := range classes {
			r := rate(cells[i][c])
			row = append(row, pct(r))
			if !math.IsNaN(r) {
				sum += r
				n++
				if i < 7 {
					colSum[c] += r
					colN[c]++
				}
			}
		}
		avg[i] = math.NaN()
		if n > 0 {
			avg[i] = sum / float64(n)
		}
		ours.Rows = append(ours.Rows, append(row, pct(avg[i])))
	}
	avgRow := []string{"Avg."}
	var overall float64
	on := 0
	for c := range classes {
		v := math.NaN()
		if colN[c] > 0 {
			v = colSum[c] / float64(colN[c])
		}
		avgRow = append(avgRow, pct(v))
	}
	for i := 0; i < 7 && i < len(avg); i++ {
		if !math.IsNaN(avg[i]) {
			overall += avg[i]
			on++
		}
	}
	ov := math.NaN()
	if on > 0 {
		ov = overall / float64(on)
	}
	// Keep the extra row last, after the Avg. row of the seven.
	extra := ours.Rows[7:]
	ours.Rows = append(append(ours.Rows[:7:7], append(avgRow, pct(ov))), extra...)
	b.table(ours)

	paper := Table{Name: "table1-paper", Header: header, Caption: "The paper's Table 1 (tex lines 626–635)."}
	for _, r := range PaperTable1() {
		row := []string{r.Label}
		for _, v := range r.Classes {
			row = append(row, num(v))
		}
		paper.Rows = append(paper.Rows, append(row, num(r.Avg)))
	}
	pc, po := PaperTable1AvgRow()
	row := []string{"Avg."}
	for _, v := range pc {
		row = append(row, num(v))
	}
	paper.Rows = append(paper.Rows, append(row, num(po)))
	b.table(paper)

	cmp := Table{Name: "table1-avg-vs-paper", Header: []string{"MR", "ours", "paper", "ours − paper"},
		Caption: "Table 1's Avg. column, ours beside the paper's (%)."}
	for i, r := range PaperTable1() {
		cmp.Rows = append(cmp.Rows, []string{sel[i].Name, pct(avg[i]), num(r.Avg), signed(100*avg[i] - r.Avg)})
	}
	cmp.Rows = append(cmp.Rows, []string{"Avg.", pct(ov), num(po), signed(100*ov - po)})
	b.table(cmp)
	return nil
}

// table2 writes the runtime and accuracy table beside the paper's Table 2.
func (b *builder) table2() error {
	if len(b.e.Agents) == 0 {
		return nil
	}
	metric := "accuracy"
	if b.detection {
		metric = "mAP"
	}
	b.p("## Runtime and %s (Table 2, RQ3)\n\n", metric)
	b.p("Mean wall time per iteration (choose, transform, run the SUT or look up the verdict, learn) and the SUT's %s on the ", metric)
	b.p("unmodified source images and on the follow-ups generated by each agent's choices, pooled over seeds (Σ score / Σ iterations).\n\n")
	detail := Table{Name: "runtime-accuracy-per-agent", Header: []string{"agent", "mode", "runs", "iterations",
		"ms per iteration", "µs per decision", metric + " unmodified (%)", metric + " modified (%)", "violation rate (%)"},
		Caption: "Per agent."}
	for _, a := range b.e.Agents {
		if a.TimesFromFile {
			b.caveatsOf = append(b.caveatsOf, fmt.Sprintf("The times of agent `%s` come from its %s (its %s has none): measured, so they differ between otherwise identical runs.", a.Name, record.TimingFile, record.SummaryFile))
		}
		acc := analysis.AccuracyOf(a.Summary.Runs)
		ms, us := math.NaN(), math.NaN()
		if acc.MeanIterationMS > 0 {
			ms = acc.MeanIterationMS
		}
		if a.Summary.MeanDecisionUS > 0 {
			us = a.Summary.MeanDecisionUS
		}
		mode := a.Summary.Mode
		if mode == "" {
			mode = "–"
		}
		detail.Rows = append(detail.Rows, []string{a.Name, mode, fmt.Sprint(len(a.Summary.Runs)), fmt.Sprint(acc.Iterations),
			num(ms), num(us), pct(acc.Original), pct(acc.Modified), pct(rate(analysis.Pooled(a.Summary.Runs)))})
	}
	var paper *PaperTable2Row
	for _, r := range PaperTable2() {
		if r.CaseStudy == b.caseStudy() {
			paper = &r
		}
	}
	if b.primary != nil && b.random != nil && paper != nil {
		pa, ra := analysis.AccuracyOf(b.primary.Summary.Runs), analysis.AccuracyOf(b.random.Summary.Runs)
		both := analysis.AccuracyOf(append(slices.Clone(b.primary.Summary.Runs), b.random.Summary.Runs...))
		secs := func(ms float64) string {
			if ms <= 0 {
				return "–"
			}
			return fmt.Sprintf("%.3f", ms/1000)
		}
		t := Table{Name: "table2-runtime-accuracy", Header: []string{"", "runtime " + b.primary.Name + " (s)", "runtime random (s)",
			metric + " unmodified (%)", metric + " " + b.primary.Name + " (%)", metric + " random (%)"},
			Caption: fmt.Sprintf("Table 2 row (%s): ours beside the paper's (tex line %d).", b.caseStudy(), map[string]int{"classification": 789, "detection": 790}[b.caseStudy()])}
		t.Rows = append(t.Rows,
			[]string{"ours", secs(pa.MeanIterationMS), secs(ra.MeanIterationMS), pct(both.Original), pct(pa.Modified), pct(ra.Modified)},
			[]string{"paper", fmt.Sprint(paper.RuntimeAgentS), fmt.Sprint(paper.RuntimeRandomS), num(paper.Unmodified), num(paper.Agent), num(paper.Random)})
		b.table(t)
		for _, a := range []*Agent{b.primary, b.random} {
			if a.Summary.Mode != "online" {
				b.caveatsOf = append(b.caveatsOf, fmt.Sprintf("Agent `%s` ran in %q mode: its runtime %s the SUT, so it is not comparable with the paper's online runtimes.",
					a.Name, orDash(a.Summary.Mode), map[bool]string{true: "excludes", false: "may exclude"}[a.Summary.Mode == "replay"]))
			}
		}
	}
	b.table(detail)
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// progress draws each agent's cumulative accuracy and failure-rate curves
// (the original's progress plot).
func (b *builder) progress() error {
	var with []Agent
	for _, a := range b.e.Agents {
		if len(a.Logs) > 0 {
			with = append(with, a)
		}
	}
	if len(with) == 0 {
		return nil
	}
	b.p("## Progress over iterations (RQ3)\n\n")
	b.p("The original evaluation's progress plot: seed-averaged cumulative accuracy on the source images, accuracy on the ")
	b.p("follow-ups and failure (violation) rate against the iteration; dashed lines are the exhaustive baseline's follow-up ")
	b.p("accuracy and failure rate over all of the scenario's rows. Not a figure of the paper.\n\n")
	for _, a := range with {
		pr, err := analysis.ProgressOf(a.Logs)
		if err != nil {
			return fmt.Errorf("plots: agent %s: %w", a.Name, err)
		}
		xs := make([]float64, len(pr.Iterations))
		for i, it := range pr.Iterations {
			xs[i] = float64(it)
		}
		scale := func(v []float64) []float64 {
			out := make([]float64, len(v))
			for i, x := range v {
				out[i] = 100 * x
			}
			return out
		}
		series := []lineSeries{
			{Name: "accuracy (orig.)", X: xs, Y: scale(pr.OriginalAccuracy)},
			{Name: "accuracy (MR)", X: xs, Y: scale(pr.ModifiedAccuracy)},
			{Name: "failure rate", X: xs, Y: scale(pr.FailureRate)},
		}
		rows := b.scenarioRows(a.Summary.Scenario)
		flat := func(v float64) []float64 {
			out := make([]float64, len(xs))
			for i := range out {
				out[i] = 100 * v
			}
			return out
		}
		// Dashed baselines take the colours of their solid counterparts.
		accCol, failCol := seriesColor(1), seriesColor(2)
		if _, mod, ok := analysis.BaselineAccuracy(rows); ok {
			series = append(series, lineSeries{Name: "accuracy (MR), baseline", X: xs, Y: flat(mod), Dashed: true, Color: &accCol})
		}
		if len(rows) > 0 {
			series = append(series, lineSeries{Name: "failure rate, baseline", X: xs, Y: flat(analysis.BaselineOverall(rows).Rate()), Dashed: true, Color: &failCol})
		}
		f, err := lineChart("progress-"+a.Name, fmt.Sprintf("%s: %s, %d seeds", b.e.Name, a.Name, pr.Seeds), "iteration", "%", series, 0, 100, false, halfWidth)
		if err != nil {
			return err
		}
		b.p("### %s\n\n", a.Name)
		b.figure(f, a.Name+" progress")
	}
	return nil
}

// comparison draws cumulative violations of every agent with their spread
// over seeds and tabulates the final rates against the two oracles.
func (b *builder) comparison() error {
	var with []Agent
	for _, a := range b.e.Agents {
		if len(a.Logs) > 0 || len(a.Summary.Runs) > 0 {
			with = append(with, a)
		}
	}
	if len(with) == 0 {
		return nil
	}
	b.p("## Agent comparison\n\n")
	// Oracles per scenario, from the table.
	type oracles struct{ single, perImage analysis.Oracle }
	orc := map[string]oracles{}
	if b.e.Verdicts != nil {
		for _, sc := range b.scenarios() {
			rows := b.scenarioRows(sc)
			s, err1 := analysis.BestSingleArm(rows)
			p, err2 := analysis.PerImageBest(rows)
			if err1 == nil && err2 == nil {
				orc[sc] = oracles{s, p}
			}
		}
	}
	var series []lineSeries
	maxIt, seeds := 0, 0
	for _, a := range with {
		if len(a.Logs) == 0 {
			continue
		}
		pr, err := analysis.ProgressOf(a.Logs)
		if err != nil {
			return fmt.Errorf("plots: agent %s: %w", a.Name, err)
		}
		s := lineSeries{Name: a.Name, X: []float64{0}, Y: []float64{0}}
		if pr.Seeds > 1 {
			s.Lo, s.Hi = []float64{0}, []float64{0}
		}
		seeds = max(seeds, pr.Seeds)
		for i, it := range pr.Iterations {
			s.X = append(s.X, float64(it))
			s.Y = append(s.Y, pr.Violations[i].Mean)
			if pr.Seeds > 1 {
				s.Lo = append(s.Lo, pr.Violations[i].Min)
				s.Hi = append(s.Hi, pr.Violations[i].Max)
			}
			maxIt = max(maxIt, it)
		}
		series = append(series, s)
	}
	sc := b.scenarios()
	if len(series) > 0 {
		if o, ok := orc[sc[0]]; ok && len(sc) == 1 {
			for _, x := range []analysis.Oracle{o.single, o.perImage} {
				name := "oracle: " + x.Name
				if x.Arm != "" {
					name += " (" + x.Arm + ")"
				}
				series = append(series, lineSeries{Name: name, X: []float64{0, float64(maxIt)}, Y: []float64{0, x.Rate() * float64(maxIt)}, Baseline: true})
			}
			// Tell the two oracle lines apart.
			series[len(series)-1].Baseline = false
			series[len(series)-1].Dashed = true
		}
		b.p("Cumulative violations against the iteration: the mean over seeds, with the band from the seeds' minimum to maximum; ")
		b.p("dashed lines are the expected cumulative violations of the two oracles computed from the exhaustive table.\n\n")
		title := fmt.Sprintf("%s: cumulative violations", b.e.Name)
		if seeds > 1 {
			title += fmt.Sprintf(" (mean and min–max over %d seeds)", seeds)
		}
		f, err := lineChart("cumulative-violations", title, "iteration", "violations (cumulative)", series, 0, math.NaN(), false, wideWidth)
		if err != nil {
			return err
		}
		f.H = tallHeight
		b.figure(f, "cumulative violations")
	}
	t := Table{Name: "final-violation-rate", Header: []string{"agent", "scenario", "seeds", "violation rate (%)", "sd over seeds", "min", "max"}}
	if len(orc) > 0 {
		t.Header = append(t.Header, "gap to best single arm (pp)", "gap to per-image best (pp)")
	}
	for _, a := range with {
		pooled := rate(analysis.Pooled(a.Summary.Runs))
		sp := analysis.SpreadOf(analysis.RunRates(a.Summary.Runs))
		row := []string{a.Name, a.Summary.Scenario, fmt.Sprint(len(a.Summary.Runs)), pct(pooled), pct(sp.SD), pct(sp.Min), pct(sp.Max)}
		if sp.N == 0 {
			row[4], row[5], row[6] = "–", "–", "–"
		}
		if len(orc) > 0 {
			if o, ok := orc[a.Summary.Scenario]; ok {
				row = append(row, num(100*(o.single.Rate()-pooled)), num(100*(o.perImage.Rate()-pooled)))
			} else {
				row = append(row, "–", "–")
			}
		}
		t.Rows = append(t.Rows, row)
	}
	t.Caption = "Final violation rate per agent (Σ violations / Σ iterations over seeds; spread of the per-seed rates) and its gap, in percentage points, to the oracles (positive = below the oracle)."
	b.table(t)
	if len(orc) > 0 {
		ot := Table{Name: "oracles", Header: []string{"scenario", "oracle", "variant", "images", "violation rate (%)"},
			Caption: "Oracles from the exhaustive table: the single variant with the highest violation rate, and an agent that always picks a failing variant when the image has one."}
		for _, s := range sc {
			o, ok := orc[s]
			if !ok {
				continue
			}
			ot.Rows = append(ot.Rows,
				[]string{s, o.single.Name, o.single.Arm, fmt.Sprint(o.single.Counts.Count), pct(o.single.Rate())},
				[]string{s, o.perImage.Name, "per image", fmt.Sprint(o.perImage.Counts.Count), pct(o.perImage.Rate())})
		}
		b.table(ot)
	}
	return nil
}

// claims checks the numbers the paper states in its text.
func (b *builder) claims() error {
	t := Table{Name: "paper-claims", Header: []string{"tex line", "the paper says", "ours"},
		Caption: "Numbers the paper states in its text, beside this experiment's."}
	base := analysis.BaselineByMR(b.e.Verdicts)
	var primary map[string]record.Counts
	if b.primary != nil {
		primary = analysis.PoolArms(b.primary.Summary.Runs)
	}
	for _, c := range PaperClaims() {
		if c.CaseStudy != "" && c.CaseStudy != b.caseStudy() {
			continue
		}
		ours := ""
		switch c.ID {
		case "setup":
			if b.primary != nil {
				its := 0
				if len(b.primary.Summary.Runs) > 0 {
					its = b.primary.Summary.Runs[0].Iterations
				}
				ours = fmt.Sprintf("%d seeds of %d iterations (`%s`)", len(b.primary.Summary.Runs), its, b.primary.Name)
			}
		case "variants":
			if b.e.Verdicts != nil {
				per := map[int]int{}
				for _, v := range b.e.Verdicts {
					per[v.Image]++
				}
				n := map[int]bool{}
				for _, k := range per {
					n[k] = true
				}
				var s []string
				for _, k := range analysis.SortedKeys(n) {
					s = append(s, fmt.Sprint(k))
				}
				ours = strings.Join(s, ", ") + " variants per image"
			}
		case "flipud-over-50":
			if c, ok := base["flipud"]; ok {
				ours = pctUnit(rate(c))
			}
		case "flipud-automobile":
			cells, ok := analysis.ClassEffects(b.e.Verdicts, []analysis.Selector{{MR: "flipud"}}, 10)
			if ok && cells[0][1].Count > 0 {
				ours = fmt.Sprintf("%s (%d automobile images)", pctUnit(rate(cells[0][1])), cells[0][1].Count)
			}
		case "fliplr-least":
			least := ""
			for _, m := range paperMRs() {
				if c, ok := base[m]; ok && (least == "" || rate(c) < rate(base[least])) {
					least = m
				}
			}
			if least != "" {
				ours = fmt.Sprintf("least effective in the baseline: %s (%s)", displayName(least), pctUnit(rate(base[least])))
			}
		case "agent-exceeds-baseline":
			if primary != nil && b.e.Verdicts != nil {
				var above, below []string
				for _, m := range paperMRs() {
					a, okA := primary[m]
					bl, okB := base[m]
					if !okA || !okB || a.Count == 0 {
						continue
					}
					if rate(a) > rate(bl) {
						above = append(above, displayName(m))
					} else {
						below = append(below, fmt.Sprintf("%s (%s vs %s)", displayName(m), pct(rate(a)), pct(rate(bl))))
					}
				}
				ours = fmt.Sprintf("`%s` above the baseline for %s; not above for %s", b.primary.Name, listOrNone(above), listOrNone(below))
			}
		case "rotation-10deg":
			p := analysis.BaselineByParam(b.e.Verdicts, "rotation")
			c := p[10].Add(p[-10])
			if c.Count > 0 {
				ours = fmt.Sprintf("baseline at ±10°: %s; at ±5°: %s", pctUnit(rate(c)), pctUnit(rate(p[5].Add(p[-5]))))
			}
		case "detection-70":
			n := 0
			for _, m := range paperMRs() {
				if c, ok := base[m]; ok && rate(c) > 0.7 {
					n++
				}
			}
			if b.e.Verdicts != nil {
				ours = fmt.Sprintf("%d of 7 MRs above 70 %% in the baseline", n)
			}
		case "detection-rotation-most", "detection-lowest":
			ranked := rankByRate(base)
			if len(ranked) == 0 {
				break
			}
			if c.ID == "detection-rotation-most" {
				ours = "baseline ranking, most effective first: " + strings.Join(ranked, ", ")
			} else {
				ours = "lowest three in the baseline: " + strings.Join(ranked[max(len(ranked)-3, 0):], ", ")
			}
		}
		if ours == "" {
			ours = "– (not in these results)"
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(c.Line), c.Text, ours})
	}
	b.p("## The paper's statements\n\n")
	b.table(t)
	return nil
}

// rankByRate returns the main MRs present in base, with their rates,
// ordered by descending violation rate (ties in MainMRs order).
func rankByRate(base map[string]record.Counts) []string {
	type mrRate struct {
		mr   string
		rate float64
	}
	var rs []mrRate
	for _, m := range paperMRs() {
		if c, ok := base[m]; ok && c.Count > 0 {
			rs = append(rs, mrRate{m, rate(c)})
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].rate > rs[j].rate })
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s %s", displayName(r.mr), pct(r.rate))
	}
	return out
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func (b *builder) caveats() error {
	b.p("## Caveats\n\n")
	m := b.e.Meta
	var cs []string
	if b.detection {
		cs = append(cs,
			"The paper's SUT is SSD-ResNet50-FPN on 5,000 COCO val2017 images, which cannot be obtained here and would be far too slow on a CPU; amt's default stand-in is yolov3-tiny (the Darknet COCO weights) on a 158-image COCO subset.",
			"The paper's detection per-MR and per-degree results exist only as figures; only Table 2's detection row has numbers.",
			"Images are decoded with Go's image/jpeg, which differs from libjpeg-turbo (what Pillow, and so the original tool, used) by a few grey levels (0.24 on average, at most 4, on the COCO subset); that moves about 1 % of the detection verdicts. Everything after decoding matches the reference pipeline's goldens exactly.",
			"Images without annotations score an mAP of −1 on the source and every follow-up and so always pass, as in the original; they count as iterations.")
	} else {
		switch {
		case m != nil && m.SUT.SHA256 == paperSUTSHA256:
			cs = append(cs, "The SUT is the paper's SqueezeNet-1.1 CIFAR-10 checkpoint (the one the paper names; the released original code actually loaded ResNet-34 for CIFAR-10, original-implementation.md §4).")
		case m != nil:
			cs = append(cs, fmt.Sprintf("The SUT is %s (sha256 %.12s…), not the paper's SqueezeNet-1.1: compare shapes, not values.", filepath.Base(m.SUT.Path), m.SUT.SHA256))
		default:
			cs = append(cs, fmt.Sprintf("No run metadata (%s) to tell which SUT produced these results; the paper's, and amt's default, is the SqueezeNet-1.1 CIFAR-10 checkpoint.", record.MetaFile))
		}
		switch n := b.images(); {
		case n > 1017 && (m == nil || m.Data.SHA256 == mixed10000SHA256):
			cs = append(cs, fmt.Sprintf("The data are %d CIFAR-10 test images: records 1,017 and later are recovered from JPEG copies (mean absolute pixel error ≈ 6/255; classifiers lose about 10 points of accuracy on them), so accuracies are not comparable with the paper's.", n))
		case n > 0 && n < 10000:
			cs = append(cs, fmt.Sprintf("The exhaustive table covers %d images, not the paper's 10,000: a pass has %d iterations instead of 10,000, and each Table 1 cell rests on about %d images (a sampling error of several points).", n, n, max(n/10, 1)))
		}
	}
	switch {
	case m != nil && m.Features.Kind == "phash":
		cs = append(cs, "Context features are a 256-bit perceptual hash (pHash), the alternative the paper tried and found not expressive enough; the paper's results used 512 ResNet-18 features.")
	case m == nil || (m.Features.Model != nil && m.Features.Model.SHA256 == features512SHA256):
		cs = append(cs, "Context features (amt's default) come from a 512-d SqueezeNet-1.1 trunk (global-average-pooled, fine-tuned on CIFAR-10), standing in for the paper's ImageNet ResNet-18 (512-d), which cannot be obtained here; the original also added an unseeded random fc bias to every feature.")
	}
	for _, a := range b.e.Agents {
		if a.Summary.Agent == "cover" || a.Name == "cover" {
			cs = append(cs, "Agent `cover` reproduces Vowpal Wabbit 8.6.1's cover as the original ran it (`--cover 3 --nn 16`, DR, ψ = 1): `--epsilon 0.1` has no effect there and at most 3 arms have non-zero probability; `cover-modern` follows later VW semantics (original-implementation.md §1, vw-cover-dr-nn.md).")
			break
		}
	}
	if b.e.Verdicts != nil {
		cs = append(cs, "The original's baseline skipped the first image (a reset() side effect); amt's table includes every image.")
	}
	timed := false
	for _, a := range b.e.Agents {
		timed = timed || analysis.AccuracyOf(a.Summary.Runs).MeanIterationMS > 0
	}
	if timed {
		cs = append(cs, "Runtimes depend on the machine: the paper's ran on a cluster with PyTorch/TensorFlow, ours on a shared CPU in pure Go; compare the ratio of agent to random, not absolute times.")
	}
	cs = append(cs, b.caveatsOf...)
	cs = append(cs, b.opt.Notes...)
	for _, c := range cs {
		b.p("- %s\n", c)
	}
	b.p("\n")
	return nil
}

func (b *builder) config() error {
	b.p("## Configuration\n\n")
	if b.e.Config == nil {
		b.p("No configuration file was found in this folder or given to `amt plot -config`.\n\n")
		return nil
	}
	fence := "```"
	for bytes.Contains(b.e.Config, []byte(fence)) {
		fence += "`"
	}
	b.p("`%s`:\n\n%syaml\n%s", filepath.Base(b.e.ConfigFile), fence, b.e.Config)
	if !bytes.HasSuffix(b.e.Config, []byte("\n")) {
		b.p("\n")
	}
	b.p("%s\n", fence)
	return nil
}
