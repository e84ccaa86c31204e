package plots

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
)

// regressionReference is the agent the regression experiment's agents are
// tested against.
const regressionReference = "random"

// regression reports a regression experiment: the violation rate of every
// agent per window of iterations across the change of SUT (figure), its
// rates before and after the change and right after it with their
// intervals, the oracles of both SUTs, and paired tests of carried against
// fresh agents and against random.
func (b *builder) regression() error {
	r := b.e.Regression
	if r == nil {
		return nil
	}
	stats, err := analysis.RegressionStats(*r, analysis.Level95)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	b.p("## Regression testing: the SUT changes\n\n")
	b.p("The paper's continuous-integration setting: the model under test changes between two test runs. Every run tests the ")
	b.p("first %d iterations on `%s`, then the SUT changes to `%s` for the rest, on the same images in the seed's order (the ", r.Switch, filepath.Base(r.SUTBefore.Path), filepath.Base(r.SUTAfter.Path))
	b.p("passes after the change are the seed's next passes). Each agent runs twice: `<agent>-%s` continues after the change ", record.Carried)
	b.p("with the state it saved at the change (a state file, as `state:` carries an agent between CI runs), `<agent>-%s` ", record.Fresh)
	b.p("starts a new agent there; before the change the two are the same run. Rates are per seed (violations / iterations) ")
	b.p("with their mean and 95 %% Student-t interval over seeds; \"first %d after\" counts the first %d iterations after the change ", r.Window, r.Window)
	b.p("(how fast an agent adapts).\n\n")

	// The windowed rates, from the progress logs.
	var series []lineSeries
	maxIt := 0
	agentIdx := map[string]int{}
	for _, s := range stats {
		a := b.agent(s.ID)
		if a == nil || len(a.Logs) == 0 {
			continue
		}
		pr, err := analysis.ProgressOf(a.Logs)
		if err != nil {
			return fmt.Errorf("plots: agent %s: %w", a.Name, err)
		}
		ends, rates := analysis.WindowRates(pr)
		ls := lineSeries{Name: s.ID, Points: true}
		prev := 0
		for i, end := range ends {
			ls.X = append(ls.X, float64(prev+end)/2)
			ls.Y = append(ls.Y, 100*rates[i])
			prev = end
			maxIt = max(maxIt, end)
		}
		if _, ok := agentIdx[s.Agent]; !ok {
			agentIdx[s.Agent] = len(agentIdx)
		}
		col := seriesColor(agentIdx[s.Agent])
		ls.Color = &col
		ls.Dashed = s.State == record.Fresh
		series = append(series, ls)
	}
	rowsB := b.scenarioRows(b.scenarioName())
	before, errB := analysis.PerImageBest(rowsB)
	bestB, errBB := analysis.BestSingleArm(rowsB)
	var after analysis.Oracle
	var bestA analysis.Oracle
	errA := fmt.Errorf("no %s", record.VerdictsAfterFile)
	errBA := errA
	if b.e.VerdictsAfter != nil {
		rowsA := b.scenarioRowsOf(b.e.VerdictsAfter, b.scenarioName())
		after, errA = analysis.PerImageBest(rowsA)
		bestA, errBA = analysis.BestSingleArm(rowsA)
	}
	if len(series) > 0 {
		// The best single variant is the ceiling of an agent that
		// settles on one follow-up; the per-image oracle (the table) is
		// out of any agent's reach.
		if errBB == nil && errBA == nil {
			series = append(series, lineSeries{Name: "oracle: best single variant of each SUT", Baseline: true,
				X: []float64{0, float64(r.Switch), float64(r.Switch), float64(maxIt)},
				Y: []float64{100 * bestB.Rate(), 100 * bestB.Rate(), 100 * bestA.Rate(), 100 * bestA.Rate()}})
		}
		black := color.NRGBA{0, 0, 0, 0xff}
		series = append(series, lineSeries{Name: fmt.Sprintf("SUT change (after iteration %d)", r.Switch), Color: &black, Dashed: true,
			X: []float64{float64(r.Switch), float64(r.Switch)}, Y: []float64{0, 100}})
		b.p("Violation rate per window of iterations (the progress logs' intervals, drawn at their middle), mean over seeds, beside each SUT's best single variant; ")
		b.p("solid lines are carried agents, dashed ones fresh agents, in the colour of their agent.\n\n")
		f, err := lineChart("regression-windowed", fmt.Sprintf("%s: violation rate per window across the SUT change", b.e.Name),
			"iteration", "violation rate in the window (%)", series, 0, 100, false, wideWidth)
		if err != nil {
			return err
		}
		f.H = tallHeight
		b.figure(f, "windowed violation rate across the SUT change")
	}

	t := Table{Name: "regression-rates", Header: []string{"agent", "state", "seeds",
		"before (%)", "± (pp)", "after (%)", "± (pp)", fmt.Sprintf("first %d after (%%)", r.Window), "± (pp)"},
		Caption: "Violation rate before the change, after it, and in its first iterations: mean over seeds with the half-width of its 95 % t interval."}
	for _, s := range stats {
		t.Rows = append(t.Rows, []string{s.ID, s.State, fmt.Sprint(s.AfterCI.N),
			pct(s.BeforeCI.Mean), pct(s.BeforeCI.Half), pct(s.AfterCI.Mean), pct(s.AfterCI.Half), pct(s.WindowCI.Mean), pct(s.WindowCI.Half)})
	}
	b.table(t)

	if errB == nil {
		ot := Table{Name: "regression-oracles", Header: []string{"SUT", "model", "best single arm", "rate (%)", "per-image best arm (%)"},
			Caption: "Oracles of each SUT's exhaustive table: the single variant with the highest violation rate, and an agent that always picks a failing variant when the image has one."}
		if errBB == nil {
			ot.Rows = append(ot.Rows, []string{"before", filepath.Base(r.SUTBefore.Path), bestB.Arm, pct(bestB.Rate()), pct(before.Rate())})
		}
		if errA == nil && errBA == nil {
			ot.Rows = append(ot.Rows, []string{"after", filepath.Base(r.SUTAfter.Path), bestA.Arm, pct(bestA.Rate()), pct(after.Rate())})
		}
		b.table(ot)
	}

	tests := analysis.RegressionTests(stats, regressionReference, analysis.Level95)
	if len(tests) == 0 {
		return nil
	}
	b.p("Paired tests by seed (same images, same order): each agent carried against fresh, over the first %d iterations after ", r.Window)
	b.p("the change and over all of them, and each carried agent against `%s-%s` after the change. Δ is the mean per-seed ", regressionReference, record.Carried)
	b.p("difference with its 95 %% t interval; p-values of the paired t-test and of the exact Wilcoxon signed-rank test are ")
	b.p("Holm-adjusted over the %d tests of the table; \"significant\" means a Holm-adjusted t-test p below 0.05.\n\n", len(tests))
	tt := Table{Name: "regression-tests", Header: []string{"agent", "vs", "iterations", "seeds", "Δ (pp)", "± 95 % CI (pp)", "t", "p", "p (Holm)", "Wilcoxon p (Holm)", "significant"},
		Caption: "Paired comparisons of a regression experiment's agents (agent − reference)."}
	for _, x := range tests {
		what := "after the change"
		if x.Metric == "window" {
			what = fmt.Sprintf("first %d after", r.Window)
		}
		sig := "no"
		switch {
		case math.IsNaN(x.PHolm):
			sig = "–"
		case x.Significant(significanceAlpha):
			sig = "yes"
		}
		tt.Rows = append(tt.Rows, []string{x.Agent, x.Reference, what, fmt.Sprint(len(x.Seeds)), signedPct(x.Diff.Mean), pct(x.Diff.Half),
			tStat(x.T), pValue(x.P), pValue(x.PHolm), pValue(x.WilcoxonPHolm), sig})
	}
	b.table(tt)
	return nil
}

// scenarioName is the experiment's scenario: run.json's, else the first
// agent's.
func (b *builder) scenarioName() string {
	if b.e.Meta != nil {
		return b.e.Meta.Scenario.Name
	}
	if sc := b.scenarios(); len(sc) > 0 {
		return sc[0]
	}
	return ""
}

// scenarioRowsOf is scenarioRows for another table of the experiment.
func (b *builder) scenarioRowsOf(rows []record.Verdict, name string) []record.Verdict {
	var variants []string
	if m := b.e.Meta; m != nil && m.Scenario.Name == name {
		variants = m.Scenario.Variants
	}
	return analysis.ScenarioRows(rows, variants)
}
