package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/scenario"
)

// CheckFolder is what the CI reports of amt check are made of: a check's
// result folder as package record lays it out.
type CheckFolder struct {
	Dir   string
	Check record.Check
	Meta  record.Meta
	// Summary is the check agent's summary.json (one run); Timing its
	// timing.json (nil when absent); Violations its violations.jsonl.
	Summary    record.Summary
	Timing     *record.Timing
	Violations []record.Violation
	// Gallery maps a relation to its contact sheet (relative to Dir, with
	// forward slashes), for the sheets present.
	Gallery map[string]string
}

// LoadCheck reads a check's result folder: check.json, run.json and the
// check agent's summary.json, timing.json (optional), violations.jsonl and
// gallery sheets.
func LoadCheck(dir string) (*CheckFolder, error) {
	f := &CheckFolder{Dir: dir, Gallery: map[string]string{}}
	var err error
	if f.Check, err = record.ReadCheck(filepath.Join(dir, record.CheckFile)); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	if f.Meta, err = record.ReadMeta(filepath.Join(dir, record.MetaFile)); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	ad := filepath.Join(dir, f.Check.Agent)
	if f.Summary, err = record.ReadSummary(filepath.Join(ad, record.SummaryFile)); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	if len(f.Summary.Runs) != 1 {
		return nil, fmt.Errorf("plots: %s: %d runs, a check has one", filepath.Join(ad, record.SummaryFile), len(f.Summary.Runs))
	}
	if t, err := record.ReadTiming(filepath.Join(ad, record.TimingFile)); err == nil {
		f.Timing = &t
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("plots: %w", err)
	}
	if f.Violations, err = record.ReadViolations(filepath.Join(ad, record.ViolationsFile)); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	for _, m := range f.Check.MRs {
		rel := record.GalleryFile(f.Check.Agent, m.MR)
		if fileExists(filepath.Join(dir, filepath.FromSlash(rel))) {
			f.Gallery[m.MR] = rel
		}
	}
	return f, nil
}

// fileExists reports whether p is a regular file.
func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// WriteCheckReports writes a check folder's CI reports: summary.md (the
// verdict first, then the conditions, the rates by relation, the gallery
// and the violations; it fits a CI job's summary) and junit.xml (see
// JUnit). The same files give the same bytes.
func WriteCheckReports(dir string) (summary, junit string, err error) {
	f, err := LoadCheck(dir)
	if err != nil {
		return "", "", err
	}
	summary, junit = filepath.Join(dir, record.CheckSummaryFile), filepath.Join(dir, record.JUnitFile)
	if err := record.WriteFileAtomic(summary, f.SummaryMarkdown()); err != nil {
		return "", "", fmt.Errorf("plots: %w", err)
	}
	x, err := f.JUnit()
	if err != nil {
		return "", "", err
	}
	if err := record.WriteFileAtomic(junit, x); err != nil {
		return "", "", fmt.Errorf("plots: %w", err)
	}
	return summary, junit, nil
}

// maxListed caps the violations listed in summary.md (violations.jsonl
// has them all).
const maxListed = 50

// SummaryMarkdown returns summary.md.
func (f *CheckFolder) SummaryMarkdown() []byte {
	c := f.Check
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	verdict, mark := "PASS", "✅"
	if c.Verdict == record.VerdictFail {
		verdict, mark = "FAIL", "❌"
	}
	failed, skipped := 0, 0
	for _, cd := range c.Conditions {
		switch cd.Status {
		case record.StatusFail:
			failed++
		case record.StatusSkipped:
			skipped++
		}
	}
	p("# %s amt check %s: **%s**\n\n", mark, f.Meta.Experiment, verdict)
	switch {
	case len(c.Conditions) == 0:
		p("No conditions are configured (`check.fail_on`, `-baseline`): the check passes whatever it finds.\n\n")
	case failed > 0:
		p("%d of %s failed:\n\n", failed, plural.Count(len(c.Conditions), "condition"))
		for _, cd := range c.Conditions {
			if cd.Status == record.StatusFail {
				p("- ❌ %s\n", cd.Message)
			}
		}
		p("\n")
	default:
		p("All %s passed", plural.Count(len(c.Conditions)-skipped, "condition"))
		if skipped > 0 {
			p(" (%d skipped: nothing to judge)", skipped)
		}
		p(".\n\n")
	}
	rate := 0.0
	if c.Iterations > 0 {
		rate = 100 * float64(c.Violations) / float64(c.Iterations)
	}
	p("%d violations in %d follow-ups (%.1f%%).\n\n", c.Violations, c.Iterations, rate)
	p("## Session\n\n")
	p("- System under test: `%s` (sha256 %s), %s, %s mode\n", filepath.Base(f.Meta.SUT.Path), short(f.Meta.SUT.SHA256), f.Meta.CaseStudy, f.Meta.Mode)
	p("- Data: %s `%s`, %d images\n", f.Meta.Data.Format, filepath.Base(f.Meta.Data.Path), f.Meta.Data.Images)
	p("- Agent `%s` (%s), seed %d, %d of %d iterations", c.Agent, f.agentName(), c.Seed, c.Iterations, c.Budget)
	if c.TimeBudget != "" {
		p(", time budget %s", c.TimeBudget)
	}
	if c.StoppedBy == "time" {
		p(" (stopped by the time budget)\n")
	} else {
		p("\n")
	}
	if c.State != nil {
		if c.State.Loaded {
			p("- Agent state: **continued** from `%s`, the state an earlier run saved (and saved there again)\n", c.State.Path)
		} else {
			p("- Agent state: **new** (no state at `%s`; saved there for the next run)\n", c.State.Path)
		}
	}
	if c.Audit > 0 {
		p("- Audit sample: %d of the %d follow-ups drawn uniformly (check.audit %g); the regression conditions compare audit samples\n", c.AuditIterations, c.Iterations, c.Audit)
	}
	if bl := c.Baseline; bl != nil {
		p("- Baseline: `%s` (experiment %s, SUT `%s` sha256 %s): %s, %d follow-ups; regression margin %g pp, α = %g\n",
			bl.Dir, bl.Experiment, filepath.Base(bl.SUT.Path), short(bl.SUT.SHA256), plural.Count(bl.Runs, "run"), bl.Iterations, bl.MarginPP, bl.Alpha)
	}
	if f.Timing != nil {
		p("- Time: %.1f ms per iteration\n", f.Timing.MeanIterMS)
	}
	p("\n")
	if len(c.Conditions) > 0 {
		p("## Conditions\n\n| | condition | limit | observed | follow-ups | p (Holm) |\n|---|---|---|---|---|---|\n")
		for _, cd := range c.Conditions {
			p("| %s | %s | %s | %s | %d | %s |\n", statusMark(cd.Status), conditionName(cd), conditionLimit(cd), conditionValue(cd), cd.Count, conditionP(cd))
		}
		p("\n")
	}
	p("## Violation rates by MR\n\n")
	if c.Baseline != nil {
		p("| | MR | follow-ups | violations | rate | baseline rate | gallery |\n|---|---|---|---|---|---|---|\n")
	} else {
		p("| | MR | follow-ups | violations | rate | gallery |\n|---|---|---|---|---|---|\n")
	}
	for _, m := range c.MRs {
		mk := ""
		if m.Failed {
			mk = "❌"
		}
		g := "–"
		if rel, ok := f.Gallery[m.MR]; ok {
			g = fmt.Sprintf("[sheet](%s)", rel)
		}
		if c.Baseline != nil {
			p("| %s | %s | %d | %d | %s | %s | %s |\n", mk, m.MR, m.Count, m.Violations, countsPct(m.Counts), countsPct(m.Baseline), g)
		} else {
			p("| %s | %s | %d | %d | %s | %s |\n", mk, m.MR, m.Count, m.Violations, countsPct(m.Counts), g)
		}
	}
	p("\n")
	if len(f.Gallery) > 0 {
		p("## Gallery\n\nThe first violating cases of each MR: the source image and its follow-up, with what the SUT said.\n\n")
		for _, m := range c.MRs {
			if rel, ok := f.Gallery[m.MR]; ok {
				p("### %s\n\n![%s: violating cases](%s)\n\n", m.MR, m.MR, rel)
			}
		}
	}
	if len(f.Violations) > 0 {
		p("## Violations\n\n")
		if len(f.Violations) > maxListed {
			p("The first %d of %d (all are in `%s/%s`).\n\n", maxListed, len(f.Violations), c.Agent, record.ViolationsFile)
		}
		p("| iteration | image | follow-up | SUT: source → follow-up |\n|---|---|---|---|\n")
		for i, v := range f.Violations {
			if i == maxListed {
				break
			}
			p("| %d | %s | %s | %s |\n", v.Iteration, imageText(v), f.Meta.Scenario.VariantText(v.Variant), f.said(v))
		}
		p("\n")
	}
	return b.Bytes()
}

// agentName is the check agent's kind ("cover").
func (f *CheckFolder) agentName() string {
	for _, a := range f.Meta.Agents {
		if a.ID == f.Check.Agent {
			return a.Name
		}
	}
	return f.Summary.Agent
}

// said says what the SUT answered on a violation's two images.
func (f *CheckFolder) said(v record.Violation) string {
	if f.Meta.CaseStudy == "detection" {
		return fmt.Sprintf("AP %.3f → %.3f", v.ScoreOriginal, v.ScoreTransformed)
	}
	s := f.className(v.PredOriginal) + " → " + f.className(v.PredTransformed)
	if v.Label >= 0 {
		s += " (label " + f.className(v.Label) + ")"
	}
	return s
}

func (f *CheckFolder) className(c int) string {
	if cl := f.Meta.Data.Classes; c >= 0 && c < len(cl) && cl[c] != "" {
		return cl[c]
	}
	return fmt.Sprintf("class %d", c)
}

func imageText(v record.Violation) string {
	if v.Name != "" {
		return fmt.Sprintf("%d (%s)", v.Image, v.Name)
	}
	if v.ID != int64(v.Image) {
		return fmt.Sprintf("%d (id %d)", v.Image, v.ID)
	}
	return strconv.Itoa(v.Image)
}

func statusMark(s string) string {
	switch s {
	case record.StatusFail:
		return "❌"
	case record.StatusSkipped:
		return "➖"
	}
	return "✅"
}

func conditionName(c record.Condition) string {
	switch c.Kind {
	case record.ConditionRate:
		return "overall violation rate"
	case record.ConditionMRRate:
		return c.MR + " violation rate"
	case record.ConditionRegression:
		return c.MR + " rise over the baseline"
	}
	return c.Kind
}

func conditionLimit(c record.Condition) string {
	if c.Kind == record.ConditionRegression {
		return fmt.Sprintf("≤ +%g pp", c.Limit)
	}
	return fmt.Sprintf("≤ %g%%", 100*c.Limit)
}

func conditionValue(c record.Condition) string {
	switch {
	case c.Status == record.StatusSkipped:
		return "–"
	case c.Kind == record.ConditionRegression:
		return fmt.Sprintf("%+.1f pp", c.Value)
	}
	return fmt.Sprintf("%.1f%%", 100*c.Value)
}

func conditionP(c record.Condition) string {
	if c.Kind != record.ConditionRegression || c.Status == record.StatusSkipped {
		return "–"
	}
	return pValue(c.PAdjusted)
}

func countsPct(c record.Counts) string {
	if c.Count == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*c.Rate())
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// JUnit XML, the de-facto schema CI systems read (as in Jenkins'
// junit-10.xsd, which GitLab and GitHub test-report actions accept too):
// testsuites holds testsuite elements, each
// with name, tests, failures, errors, skipped and time, holding properties
// and testcase elements; a testcase has a name, a classname and a time,
// and a failure (message, type, text), a skipped element or system-out.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Properties *junitProps     `xml:"properties,omitempty"`
		Cases      []junitTestCase `xml:"testcase"`
	}
	junitProps struct {
		Props []junitProp `xml:"property"`
	}
	junitProp struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitTestCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitMessage `xml:"failure,omitempty"`
		Skipped   *junitMessage `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitMessage struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// JUnit returns junit.xml: a test suite for the check's conditions and one
// per relation. A relation's suite has a test case per follow-up cell (the
// relation with one parameter value) with its counts, failing when the
// cell had violations and a condition on the relation failed (the failure
// lists each violating image with the parameter and what the SUT said;
// in a passing relation they are listed as the test's output instead),
// skipped when the session never tried it, and the test cases of the
// conditions on the relation. The numbers of failures are those of the
// verdict: junit.xml has a failure iff the check failed. Times are the
// cells' shares of the measured session time (0 without timing.json).
func (f *CheckFolder) JUnit() ([]byte, error) {
	c := f.Check
	cls := "amt.check." + f.Meta.Experiment
	msPerIt := 0.0
	if f.Timing != nil {
		msPerIt = f.Timing.MeanIterMS
	}
	secs := func(n int) string { return strconv.FormatFloat(float64(n)*msPerIt/1000, 'f', 3, 64) }
	conditionCase := func(cd record.Condition) junitTestCase {
		tc := junitTestCase{Name: "condition: " + conditionName(cd) + " " + conditionLimit(cd), Classname: cls, Time: "0.000"}
		switch cd.Status {
		case record.StatusFail:
			tc.Failure = &junitMessage{Message: cd.Message, Type: "amt." + cd.Kind, Text: cd.Message}
		case record.StatusSkipped:
			tc.Skipped = &junitMessage{Message: cd.Message}
		default:
			tc.SystemOut = cd.Message
		}
		return tc
	}
	out := junitSuites{Name: "amt check " + f.Meta.Experiment, Time: secs(c.Iterations)}
	var overall []junitTestCase
	for _, cd := range c.Conditions {
		if cd.MR == "" {
			overall = append(overall, conditionCase(cd))
		}
	}
	if len(overall) > 0 {
		out.Suites = append(out.Suites, suiteOf(f.Meta.Experiment, "0.000", nil, overall))
	}
	byCell := map[string][]record.Violation{}
	for _, v := range f.Violations {
		byCell[v.Variant] = append(byCell[v.Variant], v)
	}
	run := f.Summary.Runs[0]
	for _, m := range c.MRs {
		var cases []junitTestCase
		for _, key := range f.Meta.Scenario.Variants {
			action, _, ok := scenario.ParseKey(key)
			if !ok {
				action = key
			}
			if action != m.MR {
				continue
			}
			cnt, ok := run.Params[key]
			if !ok {
				cnt = run.Arms[key]
			}
			tc := junitTestCase{Name: key, Classname: cls + "." + m.MR, Time: secs(cnt.Count)}
			vs := byCell[key]
			lines := make([]string, 0, len(vs)+1)
			summary := fmt.Sprintf("%s: %d of %s violated", f.Meta.Scenario.VariantText(key), cnt.Violations, plural.Count(cnt.Count, "follow-up"))
			lines = append(lines, summary)
			for _, v := range vs {
				lines = append(lines, fmt.Sprintf("image %s, %s: %s (iteration %d)", imageText(v), f.Meta.Scenario.VariantText(v.Variant), f.said(v), v.Iteration))
			}
			switch {
			case cnt.Count == 0:
				tc.Skipped = &junitMessage{Message: "not tried in this session"}
			case cnt.Violations > 0 && m.Failed:
				tc.Failure = &junitMessage{Message: summary + "; " + m.MR + " failed its condition", Type: "amt.metamorphic-violation", Text: strings.Join(lines, "\n")}
			default:
				tc.SystemOut = strings.Join(lines, "\n")
			}
			cases = append(cases, tc)
		}
		for _, cd := range c.Conditions {
			if cd.MR == m.MR {
				cases = append(cases, conditionCase(cd))
			}
		}
		props := []junitProp{
			{"follow-ups", strconv.Itoa(m.Count)}, {"violations", strconv.Itoa(m.Violations)}, {"violation-rate", rateProp(m.Counts)},
		}
		if c.Baseline != nil {
			props = append(props, junitProp{"baseline-follow-ups", strconv.Itoa(m.Baseline.Count)}, junitProp{"baseline-violations", strconv.Itoa(m.Baseline.Violations)},
				junitProp{"baseline-violation-rate", rateProp(m.Baseline)})
		}
		if rel, ok := f.Gallery[m.MR]; ok {
			props = append(props, junitProp{"gallery", rel})
		}
		out.Suites = append(out.Suites, suiteOf(m.MR, secs(m.Count), props, cases))
	}
	for _, s := range out.Suites {
		out.Tests += s.Tests
		out.Failures += s.Failures
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("plots: junit.xml: %w", err)
	}
	return append(append([]byte(xml.Header), b...), '\n'), nil
}

func suiteOf(name, time string, props []junitProp, cases []junitTestCase) junitSuite {
	s := junitSuite{Name: name, Tests: len(cases), Time: time, Cases: cases}
	if len(props) > 0 {
		s.Properties = &junitProps{Props: props}
	}
	for _, tc := range cases {
		if tc.Failure != nil {
			s.Failures++
		}
		if tc.Skipped != nil {
			s.Skipped++
		}
	}
	return s
}

func rateProp(c record.Counts) string {
	if c.Count == 0 {
		return ""
	}
	return strconv.FormatFloat(c.Rate(), 'f', 4, 64)
}
