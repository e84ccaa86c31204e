// Package gate decides whether a model passes amt check, the metamorphic
// test gate for continuous integration: from the follow-ups an adaptive
// testing session tried and their verdicts (and, for regressions, those of
// a previous session), it judges each configured condition and the verdict.
//
// Two kinds of condition:
//
//   - absolute: the session's overall violation rate, or one relation's,
//     must not exceed a limit (Conditions.Rate, Conditions.MR);
//   - regression: no relation's violation rate may have risen over the
//     baseline's by more than a margin with statistical support
//     (Conditions.Regression). Per relation, the rise is the
//     Mantel–Haenszel risk difference over its parameter values
//     (RiskDifference) and the support a one-sided exact conditional test
//     stratified by parameter value (IncreaseTest: Fisher's exact test for
//     a relation without a parameter), with Holm's adjustment over the
//     relations compared (analysis.Holm), so that the gate's chance of failing a
//     model whose rates did not rise is at most α.
//
// What the regression tests compare (issue #33). An adaptive agent tries
// a relation where it expects a violation, and, continuing from the state
// of the previous check, expects them elsewhere than the previous check
// did: the follow-ups two sessions chose are no samples of one population,
// even of an unchanged model, and the tests' null hypothesis does not
// hold. The gate power study (results/gate-power) measured it: comparing
// everything an agent chose misses lost robustness (the agent learnt on
// the old model not to try the relation) and blames other relations
// instead. amt check therefore spends a share of its budget (check.audit,
// by default all of it) on an audit sample: follow-ups drawn uniformly (a
// uniform relation, then a uniform parameter value), whatever the images
// and the verdicts, so that a variant's audit follow-ups are a uniform
// random sample of the images; the regression tests compare the audit
// samples of the two checks only (Regression.Sample, AuditCellsOf), and
// under an unchanged model their rates are those of one population. The
// absolute conditions keep counting every follow-up: their rates are over
// what the session tried, an agent's included, and depend on the agent;
// set their limits from such sessions. Counts are treated as binomial
// given the follow-ups, as is usual.
//
// The package reads nothing: its inputs are counts (experiments/record
// types) and it returns the decision as record values.
package gate

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
	"github.com/amt-dev/amt/scenario"
)

// Conditions are the pass/fail conditions of a check. The zero value has
// none: every check passes.
type Conditions struct {
	// Rate, when set, is the highest passing overall violation rate (a
	// fraction in [0, 1]).
	Rate *float64
	// MR maps a relation to its highest passing violation rate.
	MR map[string]float64
	// Regression, when set, compares with a baseline.
	Regression *Regression
}

// Regression configures the regression conditions.
type Regression struct {
	// MarginPP is the tolerated rise of a relation's violation rate, in
	// percentage points (≥ 0).
	MarginPP float64
	// Alpha is the significance level of the Holm-adjusted one-sided tests,
	// in (0, 1).
	Alpha float64
	// Sample, when set, are the current run's cells the tests compare with
	// the baseline's, instead of Decide's current: amt check's audit
	// sample (AuditCellsOf), while the absolute conditions and the counts
	// reported cover every follow-up.
	Sample Cells
}

// Cells are a session's counts by relation, then by follow-up (variant
// key): the strata of the regression tests.
type Cells map[string]map[string]record.Counts

// CellsOf pools the counts of runs of a scenario (as run.json describes
// it) by relation and follow-up: an arm whose parameter a bandit chooses
// contributes one cell per value (from Run.Params), any other arm one cell
// (from Run.Arms).
func CellsOf(sc record.ScenarioMeta, runs []record.Run) Cells {
	out := Cells{}
	add := func(mr, key string, c record.Counts) {
		if out[mr] == nil {
			out[mr] = map[string]record.Counts{}
		}
		out[mr][key] = out[mr][key].Add(c)
	}
	for _, a := range sc.Arms {
		for _, r := range runs {
			if len(a.Values) > 1 {
				for _, v := range a.Values {
					k := scenario.Key(a.Action, v)
					add(a.Action, k, r.Params[k])
				}
				continue
			}
			add(a.Action, a.Name, r.Arms[a.Name])
		}
	}
	return out
}

// AuditCellsOf pools the audit follow-ups of runs (record.Run.Audit, keyed
// by variant key) by relation and follow-up: the cells of the regression
// tests of a check with an audit sample. It is empty when no run has an
// audit sample.
func AuditCellsOf(runs []record.Run) Cells {
	out := Cells{}
	for _, r := range runs {
		for k, c := range r.Audit {
			mr := k
			if a, _, ok := scenario.ParseKey(k); ok {
				mr = a
			}
			if out[mr] == nil {
				out[mr] = map[string]record.Counts{}
			}
			out[mr][k] = out[mr][k].Add(c)
		}
	}
	return out
}

// Total returns the counts of one relation over its cells.
func (c Cells) Total(mr string) record.Counts {
	var t record.Counts
	for _, v := range c[mr] {
		t = t.Add(v)
	}
	return t
}

// Decision is the outcome of Decide.
type Decision struct {
	// Pass is true when no condition failed.
	Pass bool
	// Conditions are the conditions judged: the overall rate, the MR
	// rates (in the order of mrs), the regressions (in the order of mrs).
	Conditions []record.Condition
	// MRs are the relations' counts, in the order of mrs.
	MRs []record.CheckMR
}

// Verdict returns record.VerdictPass or record.VerdictFail.
func (d Decision) Verdict() string {
	if d.Pass {
		return record.VerdictPass
	}
	return record.VerdictFail
}

// Decide judges the conditions on a session's counts. mrs lists the
// scenario's relations in order; overall is the session's iterations and
// violations; current and baseline are the cells of the session and of the
// baseline (baseline is used only with conds.Regression). A condition on a
// relation the session did not try is skipped, not failed.
func Decide(conds Conditions, mrs []string, overall record.Counts, current, baseline Cells) (Decision, error) {
	d := Decision{Pass: true}
	for _, mr := range mrs {
		d.MRs = append(d.MRs, record.CheckMR{MR: mr, Counts: current.Total(mr), Baseline: baseline.Total(mr)})
	}
	index := map[string]int{}
	for i, mr := range mrs {
		index[mr] = i
	}
	judge := func(c record.Condition, failed bool) {
		switch {
		case c.Count == 0:
			c.Status = record.StatusSkipped
		case failed:
			c.Status = record.StatusFail
			d.Pass = false
			if i, ok := index[c.MR]; ok {
				d.MRs[i].Failed = true
			}
		default:
			c.Status = record.StatusPass
		}
		d.Conditions = append(d.Conditions, c)
	}
	if conds.Rate != nil {
		lim := *conds.Rate
		if err := checkRate("violation_rate", lim); err != nil {
			return d, err
		}
		r := overall.Rate()
		c := record.Condition{Kind: record.ConditionRate, Limit: lim, Value: r, Count: overall.Count}
		c.Message = rateMessage("overall violation rate", overall, lim)
		judge(c, overall.Count > 0 && r > lim)
	}
	var named []string
	for mr := range conds.MR {
		if _, ok := index[mr]; !ok {
			return d, fmt.Errorf("gate: condition on %q, which is not a relation of the scenario (%v)", mr, mrs)
		}
		named = append(named, mr)
	}
	sort.Slice(named, func(i, j int) bool { return index[named[i]] < index[named[j]] })
	for _, mr := range named {
		lim := conds.MR[mr]
		if err := checkRate(mr, lim); err != nil {
			return d, err
		}
		t := current.Total(mr)
		c := record.Condition{Kind: record.ConditionMRRate, MR: mr, Limit: lim, Value: t.Rate(), Count: t.Count}
		c.Message = rateMessage(mr+" violation rate", t, lim)
		judge(c, t.Count > 0 && t.Rate() > lim)
	}
	if conds.Regression == nil {
		return d, nil
	}
	g := *conds.Regression
	if !(g.Alpha > 0 && g.Alpha < 1) || !(g.MarginPP >= 0 && g.MarginPP <= 100) {
		return d, fmt.Errorf("gate: regression alpha %v must be in (0, 1) and margin %v pp in [0, 100]", g.Alpha, g.MarginPP)
	}
	sample := current
	if g.Sample != nil {
		sample = g.Sample
	}
	type test struct {
		c             record.Condition
		tested, exact bool
	}
	tests := make([]test, len(mrs))
	var ps []float64
	for i, mr := range mrs {
		strata := strataOf(sample[mr], baseline[mr])
		c := record.Condition{Kind: record.ConditionRegression, MR: mr, Limit: g.MarginPP}
		rd, ok := RiskDifference(strata)
		for _, s := range strata {
			if s.informative() {
				c.Count += s.N1
			}
		}
		if !ok {
			c.Count = 0
			c.Message = fmt.Sprintf("%s: not tried in both runs; nothing to compare", mr)
			tests[i] = test{c: c}
			continue
		}
		c.Value = 100 * rd
		var exact bool
		c.P, exact = IncreaseTest(strata)
		tests[i] = test{c: c, tested: true, exact: exact}
		ps = append(ps, c.P)
	}
	adj := analysis.Holm(ps)
	k := 0
	for i, t := range tests {
		c := t.c
		if !t.tested {
			judge(c, false)
			continue
		}
		c.PAdjusted = adj[k]
		k++
		b, cur := baseline.Total(mrs[i]), sample.Total(mrs[i])
		failed := c.Value > g.MarginPP && c.PAdjusted <= g.Alpha
		rel := "≤"
		if c.PAdjusted > g.Alpha {
			rel = ">"
		}
		how := "exact"
		if !t.exact {
			how = "CMH normal approximation"
		}
		c.Message = fmt.Sprintf("%s: %s → %s (%+.1f pp stratified; tolerated +%g pp), one-sided %s %s, Holm-adjusted %s %s α = %g",
			mrs[i], pct(b), pct(cur), c.Value, g.MarginPP, how, pIs(c.P), pIs(c.PAdjusted), rel, g.Alpha)
		judge(c, failed)
	}
	return d, nil
}

// strataOf pairs a relation's cells of the two runs by follow-up, in key
// order (cells only one run has are kept; IncreaseTest and RiskDifference
// ignore them).
func strataOf(cur, base map[string]record.Counts) []Stratum {
	keys := map[string]bool{}
	for k := range cur {
		keys[k] = true
	}
	for k := range base {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	out := make([]Stratum, 0, len(sorted))
	for _, k := range sorted {
		c, b := cur[k], base[k]
		out = append(out, Stratum{X1: c.Violations, N1: c.Count, X0: b.Violations, N0: b.Count})
	}
	return out
}

func checkRate(what string, r float64) error {
	if math.IsNaN(r) || r < 0 || r > 1 {
		return fmt.Errorf("gate: %s limit %v is not a rate in [0, 1]", what, r)
	}
	return nil
}

func rateMessage(what string, c record.Counts, lim float64) string {
	if c.Count == 0 {
		return what + ": nothing tried"
	}
	rel := "≤"
	if c.Rate() > lim {
		rel = ">"
	}
	return fmt.Sprintf("%s %s (%d of %d) %s %g%%", what, pct(c), c.Violations, c.Count, rel, 100*lim)
}

// pct formats a rate in percent ("–" for no data).
func pct(c record.Counts) string {
	if c.Count == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*c.Rate())
}

// formatP formats a p-value with two significant digits ("< 0.0001" below).
func formatP(p float64) string {
	if p < 1e-4 {
		return "< 0.0001"
	}
	return fmt.Sprintf("%.2g", p)
}

// pIs returns "p = 0.031" or "p < 0.0001".
func pIs(p float64) string {
	if p < 1e-4 {
		return "p < 0.0001"
	}
	return "p = " + formatP(p)
}
