package plots

import (
	"fmt"

	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/plots/analysis"
)

// progress draws each agent's cumulative accuracy and failure-rate curves
// (the original's progress plot).
func (b *builder) progress() error {
	with := b.agentsWith(func(a Agent) bool { return len(a.Logs) > 0 })
	if len(with) == 0 {
		return nil
	}
	b.p("## Progress over iterations (RQ3)\n\n")
	if b.labelled {
		b.p("The original evaluation's progress plot: seed-averaged cumulative accuracy on the source images, accuracy on the ")
		b.p("follow-ups and failure (violation) rate against the iteration; dashed lines are the exhaustive baseline's follow-up ")
		b.p("accuracy and failure rate over all of the scenario's rows. Not a figure of the paper.\n\n")
	} else {
		b.p("The original evaluation's progress plot without its accuracy curves (the data have no labels): the seed-averaged ")
		b.p("cumulative failure (violation) rate against the iteration; the dashed line is the exhaustive baseline's failure rate ")
		b.p("over all of the scenario's rows. Not a figure of the paper.\n\n")
	}
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
		// Dashed baselines take the colours of their solid counterparts.
		accCol, failCol := seriesColor(1), seriesColor(2)
		var series []lineSeries
		if b.labelled {
			series = append(series,
				lineSeries{Name: "accuracy (orig.)", X: xs, Y: scale(pr.OriginalAccuracy)},
				lineSeries{Name: "accuracy (MR)", X: xs, Y: scale(pr.ModifiedAccuracy)})
		}
		series = append(series, lineSeries{Name: "failure rate", X: xs, Y: scale(pr.FailureRate), Color: &failCol})
		rows := b.scenarioRows(a.Summary.Scenario)
		flat := func(v float64) []float64 {
			out := make([]float64, len(xs))
			for i := range out {
				out[i] = 100 * v
			}
			return out
		}
		if _, mod, ok := analysis.BaselineAccuracy(rows); ok {
			series = append(series, lineSeries{Name: "accuracy (MR), baseline", X: xs, Y: flat(mod), Dashed: true, Color: &accCol})
		}
		if len(rows) > 0 {
			series = append(series, lineSeries{Name: "failure rate, baseline", X: xs, Y: flat(analysis.BaselineOverall(rows).Rate()), Dashed: true, Color: &failCol})
		}
		f, err := lineChart("progress-"+a.Name, fmt.Sprintf("%s: %s, %s", b.e.Name, a.Name, plural.Count(pr.Seeds, "seed")), "iteration", "%", series, 0, 100, false, halfWidth)
		if err != nil {
			return err
		}
		b.p("### %s\n\n", a.Name)
		b.figure(f, a.Name+" progress")
	}
	return nil
}
