package plots

import (
	"fmt"
	"math"

	"github.com/amt-dev/amt/plots/analysis"
)

// comparison draws cumulative violations of every agent with their spread
// over seeds and tabulates the final rates against the two oracles.
func (b *builder) comparison() error {
	with := b.agentsWith(func(a Agent) bool { return len(a.Logs) > 0 || len(a.Summary.Runs) > 0 })
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
		pooled := analysis.Rate(analysis.Pooled(a.Summary.Runs))
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
