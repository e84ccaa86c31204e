package plots

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
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
	list := sections
	if e.Regression != nil {
		list = regressionSections
	}
	for _, section := range list {
		if err := ctx.Err(); err != nil {
			return Output{}, fmt.Errorf("plots: %w", err)
		}
		if err := section(b); err != nil {
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
	if err := removeStale(e.Dir, out); err != nil {
		return Output{}, err
	}
	return out, nil
}

// removeStale deletes the figures and tables of earlier renders that this
// one did not write (a section that no longer applies, a renamed agent), so
// the folder never shows a figure of other results — but only those amt
// wrote: record.ReplaceWritten keeps the list of what it wrote, and a file
// it did not write (a user's notes, another tool's figure) stays.
func removeStale(dir string, out Output) error {
	now := append(append([]string(nil), out.Figures...), out.Tables...)
	if err := record.ReplaceWritten(dir, []string{record.FiguresDir, record.TablesDir}, now); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return nil
}

// sections are the report's sections in their order. Each is one file,
// section_<name>.go, that writes its prose, figures and tables through the
// builder, taking its numbers from package analysis, and writes nothing when
// the results hold nothing for it. A new section is its file and one entry
// here.
var sections = []func(*builder) error{
	(*builder).setup,        // section_setup.go: what ran
	(*builder).perMR,        // section_per_mr.go: violation rate per MR (RQ1)
	(*builder).perDegree,    // section_per_degree.go: violation rate per parameter value (RQ1, RQ2)
	(*builder).corruption,   // section_corruption.go: error profile on the common corruptions, CE/mCE, its estimate at a budget
	(*builder).table1,       // section_table1.go: effects per class (Table 1)
	(*builder).gallery,      // section_gallery.go: violating cases, source and follow-up side by side
	(*builder).runtime,      // section_runtime.go: runtime and accuracy (Table 2, RQ3)
	(*builder).progress,     // section_progress.go: progress over iterations
	(*builder).comparison,   // section_comparison.go: agents against the oracles
	(*builder).significance, // section_significance.go: means with confidence intervals, paired tests
	(*builder).tune,         // section_tune.go: how amt tune chose the agents' options
	(*builder).claims,       // section_claims.go: the numbers of the paper's text
	(*builder).caveats,      // section_caveats.go: what differs from the paper (sections add to it)
	(*builder).config,       // section_config.go: the configuration, verbatim
}

// regressionSections are the sections of a regression experiment's report:
// its agents' runs span two SUTs, so the per-SUT sections do not apply.
var regressionSections = []func(*builder) error{
	(*builder).setup,
	(*builder).regression, // section_regression.go: the SUT changes mid-stream
	(*builder).caveats,
	(*builder).config,
}

// builder accumulates the report's Markdown, figures and tables. Sections
// share its lookups (primary agent, scenarios, rows) and may add caveats
// for the caveats section.
type builder struct {
	e         *Experiment
	opt       Options
	md        bytes.Buffer
	figs      []figure
	tables    []Table
	detection bool
	primary   *Agent   // may be nil
	random    *Agent   // the agent named "random", may be nil
	caveatsOf []string // added by sections, listed by the caveats section
	// t1 is Table 1 (per-class effects of the paper's seven MRs) of a
	// labelled classification table, nil otherwise, with t1Missing saying
	// why. Its Avg. column is the paper's definition of the baseline per
	// MR: the Table 1 and per-MR sections both show it.
	t1        *analysis.Effects
	t1Missing string
	// labelled is false when the data have no labels (an image folder):
	// accuracies are undefined and shown as "–".
	labelled bool
	// paper is true when the paper has a counterpart of these results:
	// labelled data of the paper's data sets (CIFAR-10, COCO), or no
	// run.json (or data format in it) to tell otherwise. Without one, the paper's columns, its
	// Table 2 row and the statements of its text are left out.
	paper bool
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
	if !b.detection && e.Verdicts != nil {
		b.t1, b.t1Missing = table1Of(e.Verdicts)
	}
	b.labelled = b.detection || hasLabels(e)
	b.paper = b.labelled && (e.Meta == nil || e.Meta.Data.Format == "" || paperDataFormats[e.Meta.Data.Format])
	if e.Legacy {
		b.caveat("No file of this folder carries a run identity (an amt that did not record them wrote it), so that they all come from one run (one configuration, one sweep, the same seeds) could not be checked; `amt run` again makes them checkable.")
	}
	for _, f := range e.Unchecked {
		b.caveat("`%s` could not be checked against the agents' runs: the folder has no `%s` recording it.", f, record.MetaFile)
	}
	return nil
}

// paperDataFormats are the data formats (record.DataMeta.Format) of the
// paper's data sets: CIFAR-10 for classification, COCO for detection.
var paperDataFormats = map[string]bool{"cifar10": true, "coco": true}

// hasLabels reports whether a classification experiment's data have
// labels: some row of the verdict table has one or, without a table, the
// data are not an (unlabelled) image folder.
func hasLabels(e *Experiment) bool {
	if e.Verdicts != nil {
		for _, v := range e.Verdicts {
			if v.Label >= 0 {
				return true
			}
		}
		return false
	}
	return e.Meta == nil || e.Meta.Data.Format != "folder"
}

func (b *builder) agent(name string) *Agent {
	for i := range b.e.Agents {
		if b.e.Agents[i].Name == name {
			return &b.e.Agents[i]
		}
	}
	return nil
}

// agentsWith returns the agents for which has is true, in report order.
func (b *builder) agentsWith(has func(a Agent) bool) []Agent {
	var out []Agent
	for _, a := range b.e.Agents {
		if has(a) {
			out = append(out, a)
		}
	}
	return out
}

func (b *builder) agentNames() []string {
	var out []string
	for _, a := range b.e.Agents {
		out = append(out, a.Name)
	}
	return out
}

func (b *builder) p(format string, a ...any) { fmt.Fprintf(&b.md, format, a...) }

// caveat adds a line to the report's caveats.
func (b *builder) caveat(format string, a ...any) {
	b.caveatsOf = append(b.caveatsOf, fmt.Sprintf(format, a...))
}

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
	return paperOrder(present)
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
