package plots

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
)

// Files of a suite's report, beside suite.json.
const (
	suiteReport  = record.ReportFile
	suiteCD      = record.FiguresDir + "/cd-diagram.png"
	suiteHeatMap = record.FiguresDir + "/normalised-scores.png"
)

// SuiteClaims are the checks the report makes of the recommended agent.
type SuiteClaims struct {
	Agent string
	// MeanNorm is its mean normalised score; TopGroup whether its mean
	// rank is within the critical difference of the best.
	MeanNorm float64
	TopGroup bool
	// WorseThanRef counts the environments where it is significantly
	// worse than the reference (Holm over the environments).
	WorseThanRef int
	// LossFree is the share of environments without a significant loss
	// against any other agent.
	LossFree float64
	// FaultEnvs counts the fault-objective environments, FaultBeatsBest
	// those where it beats the best single variant in hindsight.
	FaultEnvs, FaultBeatsBest int
	// ByHeadroom counts the same over the fault environments of
	// classifiers whose best variant per class leads the best variant by
	// at least each of suiteHeadroom: the headroom the system under
	// test's answer leaves an adaptive agent.
	ByHeadroom []HeadroomCount
}

// HeadroomCount is an agent's wins over the best variant on the fault
// environments of at least Min headroom (best per class − best variant).
type HeadroomCount struct {
	Min         float64
	Envs, Beats int
}

// suiteHeadroom are the headroom thresholds of SuiteClaims.ByHeadroom, in
// the objective's units (violation rate: 0.01 is one point). A headroom
// counts as reaching a threshold within 1e-9: both are rates rounded in
// float64 (0.52 − 0.5 is 0.020000000000000018, 0.3 − 0.28 is
// 0.019999999999999962).
var suiteHeadroom = []float64{0.01, 0.02, 0.03, 0.05}

// RenderSuite draws a suite's report from its folder's suite.json:
// report.md, the critical-difference diagram, the heat map of normalised
// scores and the tables (tables/*.md and .csv). It returns the analysis and
// the recommended agent's claims (zero without one).
//
// Every file it writes is listed in the report, and only those are
// replaced: nothing else in dir is touched.
func RenderSuite(dir string) (analysis.SuiteComparison, SuiteClaims, error) {
	s, err := record.ReadSuite(filepath.Join(dir, record.SuiteFile))
	if err != nil {
		return analysis.SuiteComparison{}, SuiteClaims{}, err
	}
	c, err := analysis.CompareSuite(s)
	if err != nil {
		return c, SuiteClaims{}, err
	}
	ids := make([]string, len(s.Agents))
	for k, a := range s.Agents {
		ids[k] = a.ID
	}
	claims := suiteClaims(c)
	var tables []Table
	var summary Table
	var md bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&md, format, a...) }
	datasets := map[string]bool{}
	for _, u := range s.SUTs {
		datasets[u.DataFormat] = true
	}
	p("# Agent benchmark: %s\n\n", s.Name)
	if s.Description != "" {
		p("%s\n\n", s.Description)
	}
	p("%d environments: %d systems under test (%d data formats) × %s × %s; %d agents × %d seeds (%s), one pass over each table's images per run.\n\n",
		len(s.Envs), len(s.SUTs), len(datasets), scenariosOf(s), objectivesOf(s), len(s.Agents), len(s.Seeds), "seeds "+seedRange(s.Seeds))
	p("A run's **score** is its total reward per iteration under the environment's objective: the violation rate under `fault`, and under `paper` on the hierarchical and basic scenarios (their main arms earn 1 per violation); the mean halving reward 10000/2^(|deg|/5−1) per iteration on the rotation and shear scenarios under `paper`. ")
	p("The **normalised score** is s = (agent − random) / (per-image oracle − random): 0 is uniform random selection (its exact expectation), 1 the oracle that picks every image's best follow-up. ")
	p("The **best variant** is the single follow-up (relation and value) with the best score over the table, chosen in hindsight: what a practitioner would apply without an agent. ")
	p("The **best per class** (classifiers only) applies to each image the follow-up that scores best, in hindsight, over the images the classifier puts in the same class: its lead over the best variant is what the system under test's own answer, which the grey-box context shows an agent, can gain over the best fixed choice.\n\n")
	if claims.Agent != "" {
		p("## The recommended agent: `%s`\n\n", claims.Agent)
		p("- mean normalised score over the environments: **%.3f**\n", claims.MeanNorm)
		p("- in the top group of the critical-difference diagram (mean rank within CD = %.3f of the best): **%s**\n", c.CD, yesNo(claims.TopGroup))
		p("- significantly worse than `%s` (paired t-test over seeds, Holm over environments, α = %.2f): on **%d** of %d environments\n", s.Reference, analysis.SuiteAlpha, claims.WorseThanRef, len(s.Envs))
		p("- no significant loss against any other agent on **%.1f %%** of the environments\n", 100*claims.LossFree)
		p("- under the fault objective it beats the best single variant in hindsight on **%d of %d** environments (%.1f %%)\n", claims.FaultBeatsBest, claims.FaultEnvs, 100*float64(claims.FaultBeatsBest)/float64(max(claims.FaultEnvs, 1)))
		var mins, counts []string
		for _, h := range claims.ByHeadroom {
			if h.Envs > 0 {
				mins = append(mins, fmt.Sprintf("%g", 100*h.Min))
				counts = append(counts, fmt.Sprintf("%d of %d (%.0f %%)", h.Beats, h.Envs, 100*float64(h.Beats)/float64(h.Envs)))
			}
		}
		if len(mins) > 0 {
			p("- the same on the fault environments of classifiers whose best variant per class leads the best variant by at least %s points (the headroom the system under test's answer leaves an agent): %s\n",
				strings.Join(mins, ", "), strings.Join(counts, ", "))
		}
		p("\n")
	}
	for _, tu := range s.Tuning {
		p("## Tuning `%s` on the suite\n\n", tu.Agent)
		tt := Table{Name: "suite-tuning-" + tu.Agent, Caption: fmt.Sprintf("Every setting of %s's grid on every environment with the tuning seeds %s (never the evaluation seeds): mean normalised score over the environments", tu.Agent, seedRange(tu.Seeds)),
			Header: []string{"options", "mean normalised score", "chosen"}}
		for i, st := range tu.Settings {
			chosen := ""
			if i == tu.Chosen {
				chosen = "yes"
			}
			tt.Rows = append(tt.Rows, []string{optionsList(st.Options), fmt.Sprintf("%.4f", st.MeanNorm), chosen})
		}
		tables = append(tables, tt)
		p("%s.\n\n%s\n", tt.Caption, tt.Markdown())
	}
	p("## Ranks\n\n")
	p("Friedman test over %d environments and %d agents (mean scores, rank 1 = best): χ²_F = %.2f (p = %.3g), Iman–Davenport F_F = %.2f (p = %.3g). Nemenyi critical difference at α = %.2f: CD = %.3f.\n\n",
		c.Friedman.N, c.Friedman.K, c.Friedman.ChiSq, c.Friedman.PChiSq, c.Friedman.F, c.Friedman.PF, analysis.SuiteAlpha, c.CD)
	if err := CDDiagram(filepath.Join(dir, suiteCD), "Mean rank over "+fmt.Sprint(len(s.Envs))+" environments (CD at α = 0.05)", ids, c.Friedman.MeanRanks, c.CD); err != nil {
		return c, claims, err
	}
	p("![critical-difference diagram](%s)\n\n", suiteCD)
	summary = Table{Name: "suite-agents", Caption: "Agents over all environments", Header: []string{"agent", "mean rank", "mean normalised score", "wins", "ties", "losses", "worse than " + s.Reference, "beats best variant (fault)", "beats best variant (all)"}}
	order := make([]int, len(ids))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(c.Friedman.MeanRanks[a], c.Friedman.MeanRanks[b]) })
	for _, k := range order {
		var w, t, l int
		for b := range ids {
			if b != k {
				w, t, l = w+c.Pairs[k][b].Win, t+c.Pairs[k][b].Tie, l+c.Pairs[k][b].Loss
			}
		}
		cl := agentClaims(c, k)
		summary.Rows = append(summary.Rows, []string{ids[k], fmt.Sprintf("%.2f", c.Friedman.MeanRanks[k]), fmtNorm(c.MeanNorm[k]),
			fmt.Sprint(w), fmt.Sprint(t), fmt.Sprint(l), fmt.Sprint(cl.WorseThanRef), fmt.Sprintf("%d / %d", cl.FaultBeatsBest, cl.FaultEnvs), fmt.Sprintf("%d / %d", c.BeatsBestVariant[k], len(s.Envs))})
	}
	tables = append(tables, summary)
	p("%s\n", summary.Markdown())
	p("*Wins, ties and losses are summed over the other agents and the environments (a win: a higher mean and p < %.2f, two-sided paired t-test over the seeds, Holm-adjusted over the environments of the pair).*\n\n", analysis.SuiteAlpha)

	wtl := Table{Name: "suite-win-tie-loss", Caption: "Wins/ties/losses of the row agent against the column agent over the environments", Header: append([]string{"agent"}, ids...)}
	for a := range ids {
		row := []string{ids[a]}
		for b := range ids {
			if a == b {
				row = append(row, "–")
				continue
			}
			x := c.Pairs[a][b]
			row = append(row, fmt.Sprintf("%d/%d/%d", x.Win, x.Tie, x.Loss))
		}
		wtl.Rows = append(wtl.Rows, row)
	}
	tables = append(tables, wtl)
	p("## Win / tie / loss\n\n%s\n\n%s\n", wtl.Caption+" (row's wins/ties/losses):", wtl.Markdown())

	envNames := make([]string, len(s.Envs))
	norm := make([][]float64, len(ids))
	for k := range ids {
		norm[k] = make([]float64, len(s.Envs))
		for i := range s.Envs {
			norm[k][i] = c.Cells[i][k].Norm
		}
	}
	for i, e := range s.Envs {
		envNames[i] = e.Name
	}
	if err := HeatMap(filepath.Join(dir, suiteHeatMap), "Normalised score (0 = random, 1 = per-image oracle)", ids, envNames, norm, -1, 1); err != nil {
		return c, claims, err
	}
	p("## Normalised scores\n\n![normalised scores, agents × environments](%s)\n\n", suiteHeatMap)

	envs := Table{Name: "suite-environments", Caption: "Mean score per environment (± half-width of the 95 % t interval over the seeds) and the oracles", Header: append([]string{"environment", "random (exact)", "best variant", "best per class", "per-image oracle"}, ids...)}
	classifier := classifiers(s)
	for i, e := range s.Envs {
		o := e.Oracles
		perClass := "–"
		if classifier[e.SUT] {
			perClass = fmtScore(o.BestPerClass)
		}
		row := []string{e.Name, fmtScore(o.Random), fmtScore(o.BestVariant) + " (" + o.BestVariantKey + ")", perClass, fmtScore(o.PerImage)}
		for k := range ids {
			sc := c.Cells[i][k].Score
			row = append(row, fmtScore(sc.Mean)+" ±"+fmtScore(sc.Half))
		}
		envs.Rows = append(envs.Rows, row)
	}
	tables = append(tables, envs)
	p("## Environments\n\n%s.\n\n%s\n", envs.Caption, envs.Markdown())

	var grey []string
	for _, u := range s.SUTs {
		if u.Grey {
			grey = append(grey, u.Name)
		}
	}
	p("## Systems under test\n\n")
	sutTable := Table{Name: "suite-suts", Caption: "Systems under test", Header: []string{"name", "case study", "model", "data", "images"}}
	for _, u := range s.SUTs {
		sutTable.Rows = append(sutTable.Rows, []string{u.Name, u.CaseStudy, u.Model.Path, u.DataFormat + ": " + u.Data.Path, fmt.Sprint(u.Images)})
	}
	tables = append(tables, sutTable)
	p("%s\n", sutTable.Markdown())
	if len(grey) > 0 {
		p("On the grey images of %s (R = G = B) the grayscale relation is the identity: it never violates, and it stays in the scenarios as an arm an agent must learn to avoid.\n", strings.Join(grey, ", "))
	}
	for _, t := range tables {
		for ext, b := range map[string][]byte{".md": t.Markdown(), ".csv": t.CSV()} {
			if err := record.WriteFileAtomic(filepath.Join(dir, record.TablesDir, t.Name+ext), b); err != nil {
				return c, claims, err
			}
		}
	}
	return c, claims, record.WriteFileAtomic(filepath.Join(dir, suiteReport), md.Bytes())
}

// suiteClaims checks the recommended agent's claims.
func suiteClaims(c analysis.SuiteComparison) SuiteClaims {
	k := slices.IndexFunc(c.Suite.Agents, func(a record.SuiteAgent) bool { return a.ID == c.Suite.Recommended })
	if k < 0 {
		return SuiteClaims{}
	}
	return agentClaims(c, k)
}

// agentClaims checks the claims of agent k.
func agentClaims(c analysis.SuiteComparison, k int) SuiteClaims {
	s := c.Suite
	classifier := classifiers(s)
	cl := SuiteClaims{Agent: s.Agents[k].ID, MeanNorm: c.MeanNorm[k], TopGroup: slices.Contains(c.TopGroup(), k), LossFree: c.LossFree(k),
		ByHeadroom: make([]HeadroomCount, len(suiteHeadroom))}
	for j, t := range suiteHeadroom {
		cl.ByHeadroom[j].Min = t
	}
	for i, e := range s.Envs {
		cell := c.Cells[i][k]
		if cell.VsReferenceHolm < analysis.SuiteAlpha && cell.VsReference.Diff.Mean < 0 {
			cl.WorseThanRef++
		}
		if e.Objective != "fault" {
			continue
		}
		beats := cell.Score.Mean > e.Oracles.BestVariant
		cl.FaultEnvs++
		if beats {
			cl.FaultBeatsBest++
		}
		if !classifier[e.SUT] {
			continue // a detector: no classes
		}
		for j, t := range suiteHeadroom {
			if e.Oracles.BestPerClass-e.Oracles.BestVariant >= t-1e-9 {
				cl.ByHeadroom[j].Envs++
				if beats {
					cl.ByHeadroom[j].Beats++
				}
			}
		}
	}
	return cl
}

// classifiers reports, by name, which of the suite's systems under test
// are classifiers: those with a best variant per class.
func classifiers(s record.Suite) map[string]bool {
	m := map[string]bool{}
	for _, u := range s.SUTs {
		m[u.Name] = u.CaseStudy == "classification"
	}
	return m
}

func scenariosOf(s record.Suite) string {
	return listOf(s, func(e record.SuiteEnv) string { return e.Scenario }, "scenario")
}
func objectivesOf(s record.Suite) string {
	return listOf(s, func(e record.SuiteEnv) string { return e.Objective }, "objective")
}

// listOf names the distinct values of f over the environments.
func listOf(s record.Suite, f func(record.SuiteEnv) string, what string) string {
	var vs []string
	for _, e := range s.Envs {
		if v := f(e); !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return fmt.Sprintf("%d %ss (%s)", len(vs), what, strings.Join(vs, ", "))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fmtScore formats a score: rates as they are, halving rewards (> 1) with
// one decimal.
func fmtScore(v float64) string {
	if math.Abs(v) >= 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.4f", v)
}

func fmtNorm(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.3f", v)
}

// SuiteExists reports whether dir holds a suite's results.
func SuiteExists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, record.SuiteFile))
	return err == nil
}
