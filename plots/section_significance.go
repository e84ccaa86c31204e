package plots

import (
	"fmt"
	"math"
	"strings"

	"github.com/amt-dev/amt/plots/analysis"
)

// significanceAlpha is the family-wise significance level of the reports'
// tests.
const significanceAlpha = 0.05

// significanceRefs are the reference agents every agent is tested against:
// the baseline and the paper's agent.
var significanceRefs = []string{"random", "cover"}

// significance compares the agents statistically: each agent's mean
// violation rate over seeds with its 95 % t interval (table and figure),
// the gaps to the two oracles with their intervals, and paired tests by
// seed against random and cover, Holm-adjusted over the report's family.
// It needs an agent with at least two seeds.
func (b *builder) significance() error {
	var runs []analysis.NamedRuns
	enough := false
	for _, a := range b.e.Agents {
		if len(a.Summary.Runs) == 0 {
			continue
		}
		runs = append(runs, analysis.NamedRuns{Name: a.Name, Runs: a.Summary.Runs})
		enough = enough || len(a.Summary.Runs) >= 2
	}
	if !enough {
		return nil
	}
	cmp, err := analysis.CompareAgents(runs, significanceRefs, analysis.Level95)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	scenarioOf := map[string]string{}
	for _, a := range b.e.Agents {
		scenarioOf[a.Name] = a.Summary.Scenario
	}
	b.p("## Statistical comparison\n\n")
	b.p("Each run's violation rate (violations / iterations) is one value per seed. The tables give each agent's mean over its seeds ")
	b.p("with a 95 %% confidence interval from Student's t distribution, mean ± t(0.975, n−1) · s/√n (s the standard deviation ")
	b.p("over seeds). A seed fixes the image order, so agents run with the same seed see the same images in the same order: ")
	b.p("comparisons are paired by seed.\n\n")

	t := Table{Name: "agent-ci", Header: []string{"agent", "scenario", "seeds", "violation rate (%)", "± 95 % CI (pp)", "CI low (%)", "CI high (%)"},
		Caption: "Mean violation rate over seeds with its 95 % confidence interval (Student's t; ± is the half-width)."}
	var rows []ciRow
	for _, a := range cmp.Agents {
		c := a.CI
		t.Rows = append(t.Rows, []string{a.Name, scenarioOf[a.Name], fmt.Sprint(c.N), pct(c.Mean), pct(c.Half), pct(c.Lo), pct(c.Hi)})
		rows = append(rows, ciRow{Name: a.Name, Mean: 100 * c.Mean, Lo: 100 * c.Lo, Hi: 100 * c.Hi})
	}
	b.table(t)

	// The oracles of the agents' scenario, from the table (one scenario:
	// the figure draws them).
	var refs []refLine
	if b.e.Verdicts != nil {
		gt := Table{Name: "oracle-gaps", Header: []string{"agent", "oracle", "oracle rate (%)", "gap (pp)", "± 95 % CI (pp)", "gap low (pp)", "gap high (pp)"},
			Caption: "Gap to each oracle (oracle rate − agent's rate, in percentage points; positive = below the oracle) with its 95 % confidence interval: the oracle's rate is fixed by the exhaustive table, so the gap's interval is the agent's mirrored."}
		sc := b.scenarios()
		for _, a := range cmp.Agents {
			s, err1 := analysis.BestSingleArm(b.scenarioRows(scenarioOf[a.Name]))
			p, err2 := analysis.PerImageBest(b.scenarioRows(scenarioOf[a.Name]))
			if err1 != nil || err2 != nil {
				continue
			}
			for _, o := range []analysis.Oracle{s, p} {
				g := a.CI.Shift(o.Rate())
				name := o.Name
				if o.Arm != "" {
					name += " (" + o.Arm + ")"
				}
				gt.Rows = append(gt.Rows, []string{a.Name, name, pct(o.Rate()), pct(g.Mean), pct(g.Half), pct(g.Lo), pct(g.Hi)})
			}
			if len(sc) == 1 && refs == nil {
				refs = []refLine{{"oracle: best single arm (" + s.Arm + ")", 100 * s.Rate()}, {"oracle: per-image best arm", 100 * p.Rate()}}
			}
		}
		if len(gt.Rows) > 0 {
			b.table(gt)
		}
	}
	title := fmt.Sprintf("%s: violation rate, mean and 95 %% CI over seeds", b.e.Name)
	f, err := ciChart("agent-ci", title, "violation rate (%)", rows, refs)
	if err != nil {
		return err
	}
	b.figure(f, "mean violation rate per agent with 95 % confidence intervals")

	if len(cmp.Tests) == 0 {
		b.p("No paired tests: the experiment has no agent named %s to compare with.\n\n", strings.Join(significanceRefs, " or "))
		return nil
	}
	b.p("Paired tests against %s. Δ is the mean over the common seeds of the per-seed difference (agent − reference), ", refNames(cmp))
	b.p("with its 95 %% t interval. The primary test is the paired t-test (two-sided); the per-seed rates average hundreds of ")
	b.p("verdicts, so their differences are close to normal, and it gives an interval for Δ in percentage points. The exact ")
	b.p("Wilcoxon signed-rank test (two-sided, zero differences dropped, mid-ranks for ties) is a check that assumes no ")
	b.p("normality; with n seeds its smallest p-value is 2/2ⁿ (0.002 for 10 seeds). The %d tests of this table are one family: ", len(cmp.Tests))
	b.p("both tests' p-values are adjusted with Holm's step-down method, which keeps the probability of any false positive ")
	b.p("in the family at 5 %%; \"significant\" means a Holm-adjusted t-test p below 0.05.\n\n")
	pt := Table{Name: "paired-tests", Header: []string{"agent", "vs", "seeds", "Δ (pp)", "± 95 % CI (pp)", "Δ low (pp)", "Δ high (pp)", "t", "p", "p (Holm)", "Wilcoxon p (Holm)", "significant"},
		Caption: "Paired comparisons by seed (agent − reference): mean difference of the violation rates with its 95 % t interval, paired t-test (t, two-sided p, Holm-adjusted p) and the Holm-adjusted p of the exact Wilcoxon signed-rank test."}
	for _, p := range cmp.Tests {
		sig := "no"
		if p.Significant(significanceAlpha) {
			sig = "yes"
		}
		if math.IsNaN(p.PHolm) {
			sig = "–"
		}
		d := p.Diff
		pt.Rows = append(pt.Rows, []string{p.Agent, p.Reference, fmt.Sprint(len(p.Seeds)), signedPct(d.Mean), pct(d.Half), signedPct(d.Lo), signedPct(d.Hi),
			tStat(p.T), pValue(p.P), pValue(p.PHolm), pValue(p.WilcoxonPHolm), sig})
	}
	b.table(pt)
	for _, a := range cmp.Agents {
		if n := a.CI.N; n > 0 && n < 5 {
			b.caveat("Agent `%s` ran %d seed(s): its confidence interval is wide and its tests have little power (10 or more seeds are usual).", a.Name, n)
		}
	}
	return nil
}

// refNames lists the references the comparison's tests use.
func refNames(c analysis.Comparison) string {
	var out []string
	for _, p := range c.Tests {
		if r := "`" + p.Reference + "`"; len(out) == 0 || out[len(out)-1] != r {
			out = append(out, r)
		}
	}
	return strings.Join(out, " and ")
}

// signedPct formats a difference of fractions in percentage points with a
// sign ("+12.34"), or "–" for NaN.
func signedPct(f float64) string { return signed(100 * f) }

// tStat formats a t statistic, "–" when there is none.
func tStat(t float64) string {
	switch {
	case math.IsNaN(t):
		return "–"
	case math.IsInf(t, 1):
		return "+∞"
	case math.IsInf(t, -1):
		return "-∞"
	}
	return fmt.Sprintf("%.2f", t)
}

// pValue formats a p-value with 2 significant digits ("0.031", "2.1e-09"),
// or "–" when there is none.
func pValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p == 0:
		return "0"
	case p >= 0.001:
		return fmt.Sprintf("%.2g", p)
	}
	return fmt.Sprintf("%.1e", p)
}
