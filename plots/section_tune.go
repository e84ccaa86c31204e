package plots

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/plots/analysis"
)

// tune shows how amt tune chose the agents' options: per tuned agent, every
// setting's mean violation rate on the tuning seeds with its interval
// (table and figure), and the chosen setting's rate on the tuning seeds
// beside its rate on the evaluation seeds it was never chosen on.
func (b *builder) tune() error {
	t := b.e.Tuning
	if t == nil {
		return nil
	}
	b.p("## Hyper-parameter tuning\n\n")
	b.p("`amt tune` chose the options of %d agent(s): every setting of an agent's grid ran on the %d tuning seeds (%s), ",
		len(t.Agents), len(t.TuneSeeds), seedList(t.TuneSeeds))
	b.p("and the setting with the highest mean %s over them was kept (the first in grid order on a tie). ", t.Metric)
	b.p("Every agent then ran with the chosen options on the %d evaluation seeds (%s), which the tuning never saw: ", len(t.EvalSeeds), seedList(t.EvalSeeds))
	b.p("the other sections report those runs, so the numbers one tunes on are not the numbers one reports. ")
	b.p("Intervals are 95 %% Student-t intervals over seeds.\n\n")

	held := Table{Name: "tune-held-out", Header: []string{"agent", "chosen", "tuning seeds (%)", "± (pp)", "evaluation seeds (%)", "± (pp)", "evaluation − tuning (pp)"},
		Caption: "The chosen setting of each tuned agent: its mean violation rate on the tuning seeds (where it won the selection, so optimistically biased) and on the evaluation seeds."}
	for _, a := range t.Agents {
		keys := slices.Sorted(maps.Keys(a.Grid))
		tt := Table{Name: "tune-" + a.ID, Header: append(slices.Clone(keys), "violation rate (%)", "± 95 % CI (pp)", "chosen")}
		tt.Caption = fmt.Sprintf("Agent `%s`: the grid's settings on the tuning seeds", a.ID)
		if a.Name != a.ID {
			tt.Caption = fmt.Sprintf("Agent `%s` (%s): the grid's settings on the tuning seeds", a.ID, a.Name)
		}
		if len(a.Fixed) > 0 {
			tt.Caption += fmt.Sprintf(" (fixed: %s)", optionList(a.Fixed))
		}
		tt.Caption += "."
		var rows []ciRow
		for j, s := range a.Settings {
			c := analysis.MeanCI(s.Rates, analysis.Level95)
			row := make([]string, 0, len(tt.Header))
			for _, k := range keys {
				row = append(row, s.Options[k])
			}
			mark := ""
			if j == a.Chosen {
				mark = "✓"
			}
			tt.Rows = append(tt.Rows, append(row, pct(c.Mean), pct(c.Half), mark))
			rows = append(rows, ciRow{Name: optionList(s.Options), Mean: 100 * c.Mean, Lo: 100 * c.Lo, Hi: 100 * c.Hi})
		}
		b.p("### Agent `%s`\n\n", a.ID)
		b.table(tt)
		f, err := ciChart("tune-"+a.ID, fmt.Sprintf("%s: tuning, mean and 95 %% CI over %s", a.ID, plural.Count(len(t.TuneSeeds), "seed")), "violation rate (%)", rows, nil)
		if err != nil {
			return err
		}
		b.figure(f, "tuning results of "+a.ID)

		tc := analysis.MeanCI(a.Settings[a.Chosen].Rates, analysis.Level95)
		row := []string{a.ID, optionList(a.Settings[a.Chosen].Options), pct(tc.Mean), pct(tc.Half), "–", "–", "–"}
		if ag := b.agent(a.ID); ag != nil {
			rates, err := analysis.SeedRates(ag.Summary.Runs)
			if err != nil {
				return fmt.Errorf("plots: agent %s: %w", a.ID, err)
			}
			ec := analysis.MeanCI(analysis.Values(rates), analysis.Level95)
			row[4], row[5], row[6] = pct(ec.Mean), pct(ec.Half), signedPct(ec.Mean-tc.Mean)
		} else {
			b.caveat("Tuned agent `%s` has no evaluation runs in this folder.", a.ID)
		}
		held.Rows = append(held.Rows, row)
	}
	b.p("### Held-out evaluation\n\n")
	b.table(held)
	return nil
}

// optionList writes options as sorted k=v pairs joined by ", ".
func optionList(o map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o)) {
		parts = append(parts, k+"="+o[k])
	}
	return strings.Join(parts, ", ")
}

// seedList writes seeds compactly: runs of consecutive seeds as ranges
// ("1-10, 15").
func seedList(seeds []uint64) string {
	s := slices.Sorted(slices.Values(seeds))
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		} else {
			parts = append(parts, fmt.Sprint(s[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
