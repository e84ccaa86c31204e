package plots

import (
	"fmt"
	"sort"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/plots/analysis"
)

// claims checks the numbers the paper states in its text.
func (b *builder) claims() error {
	if !b.paper {
		b.p("## The paper's statements\n\nLeft out: the paper has no counterpart of these results (see the caveats).\n\n")
		return nil
	}
	if strings.HasPrefix(b.scenarioName(), "corruptions") {
		b.p("## The paper's statements\n\nLeft out: the paper tested none of the common corruptions; the corruption section above sets these results beside Hendrycks & Dietterich's measures instead.\n\n")
		return nil
	}
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
				ours = fmt.Sprintf("%s of %s (`%s`)", plural.Count(len(b.primary.Summary.Runs), "seed"), plural.Count(its, "iteration"), b.primary.Name)
			}
		case "variants":
			if b.e.Verdicts != nil {
				var s []string
				for _, k := range analysis.VariantsPerImage(b.e.Verdicts) {
					s = append(s, fmt.Sprint(k))
				}
				ours = strings.Join(s, ", ") + " variants per image"
			}
		case "flipud-over-50":
			if c, ok := base["flipud"]; ok {
				ours = pctUnit(analysis.Rate(c))
			}
		case "flipud-automobile":
			cells, ok := analysis.ClassEffects(b.e.Verdicts, []analysis.Selector{{MR: "flipud"}}, 10)
			if ok && cells[0][1].Count > 0 {
				ours = fmt.Sprintf("%s (%d automobile images)", pctUnit(analysis.Rate(cells[0][1])), cells[0][1].Count)
			}
		case "fliplr-least":
			least := ""
			for _, m := range paperMRs() {
				if c, ok := base[m]; ok && (least == "" || analysis.Rate(c) < analysis.Rate(base[least])) {
					least = m
				}
			}
			if least != "" {
				ours = fmt.Sprintf("least effective in the baseline: %s (%s)", displayName(least), pctUnit(analysis.Rate(base[least])))
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
					if analysis.Rate(a) > analysis.Rate(bl) {
						above = append(above, displayName(m))
					} else {
						below = append(below, fmt.Sprintf("%s (%s vs %s)", displayName(m), pct(analysis.Rate(a)), pct(analysis.Rate(bl))))
					}
				}
				ours = fmt.Sprintf("`%s` above the baseline for %s; not above for %s", b.primary.Name, listOrNone(above), listOrNone(below))
			}
		case "rotation-10deg":
			p := analysis.BaselineByParam(b.e.Verdicts, "rotation")
			c := p[10].Add(p[-10])
			if c.Count > 0 {
				ours = fmt.Sprintf("baseline at ±10°: %s; at ±5°: %s", pctUnit(analysis.Rate(c)), pctUnit(analysis.Rate(p[5].Add(p[-5]))))
			}
		case "detection-70":
			n := 0
			for _, m := range paperMRs() {
				if c, ok := base[m]; ok && analysis.Rate(c) > 0.7 {
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
			rs = append(rs, mrRate{m, analysis.Rate(c)})
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
