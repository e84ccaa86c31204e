package plots

import (
	"fmt"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
)

// table1Of computes Table 1 of a classification verdict table: the effects
// of table1Selectors per CIFAR-10 class, with the paper's averages. It
// returns nil and the reason when the table has no labels, or labels that
// are not CIFAR-10 classes.
func table1Of(rows []record.Verdict) (*analysis.Effects, string) {
	classes := CIFAR10Classes()
	for _, v := range rows {
		if v.Label >= len(classes) {
			return nil, fmt.Sprintf("the table's labels go beyond the %d CIFAR-10 classes (label %d)", len(classes), v.Label)
		}
	}
	eff, ok := analysis.EffectsOf(rows, table1Selectors(), len(classes), len(PaperTable1()))
	if !ok {
		return nil, "the verdict table has no labels"
	}
	return &eff, ""
}

// table1 writes the per-class effects table beside the paper's Table 1.
func (b *builder) table1() error {
	if b.detection || b.e.Verdicts == nil || !b.wantsPerMR() {
		return nil
	}
	if b.t1 == nil {
		b.p("## Effects per class (Table 1)\n\nLeft out: %s.\n\n", b.t1Missing)
		return nil
	}
	classes, sel, eff := CIFAR10Classes(), table1Selectors(), b.t1
	b.p("## Effects per class (Table 1)\n\n")
	b.p("Share (%%) of each class's follow-ups whose predicted class differs from the source's, from the exhaustive table. ")
	b.p("As the original's numbers (original-implementation.md §9), Rotation is ±30° and Shear ±20° although the paper's ")
	b.p("caption says 30° for both; the extra row Shear ±30° is not in the paper and not part of the averages. ")
	b.p("Avg. (column) is the mean over classes, Avg. (row) the mean over the seven MRs, as in the paper.\n\n")
	header := append([]string{"MR"}, classes...)
	header = append(header, "Avg.")
	ours := Table{Name: "table1-effects-per-class", Header: header,
		Caption: "Ours: effects of MRs by the true class of the image (%)."}
	avg, ov := eff.RowMean, eff.Overall
	for i, s := range sel {
		row := []string{s.Name}
		for c := range classes {
			row = append(row, pct(analysis.Rate(eff.Cells[i][c])))
		}
		ours.Rows = append(ours.Rows, append(row, pct(avg[i])))
	}
	avgRow := []string{"Avg."}
	for _, v := range eff.ClassMean {
		avgRow = append(avgRow, pct(v))
	}
	// Keep the extra row last, after the Avg. row of the seven.
	extra := ours.Rows[7:]
	ours.Rows = append(append(ours.Rows[:7:7], append(avgRow, pct(ov))), extra...)
	b.table(ours)

	paper := Table{Name: "table1-paper", Header: header, Caption: "The paper's Table 1 (tex lines 626–635)."}
	for _, r := range PaperTable1() {
		row := []string{r.Label}
		for _, v := range r.Classes {
			row = append(row, num(v))
		}
		paper.Rows = append(paper.Rows, append(row, num(r.Avg)))
	}
	pc, po := PaperTable1AvgRow()
	row := []string{"Avg."}
	for _, v := range pc {
		row = append(row, num(v))
	}
	paper.Rows = append(paper.Rows, append(row, num(po)))
	b.table(paper)

	cmp := Table{Name: "table1-avg-vs-paper", Header: []string{"MR", "ours", "paper", "ours − paper"},
		Caption: "Table 1's Avg. column, ours beside the paper's (%)."}
	for i, r := range PaperTable1() {
		cmp.Rows = append(cmp.Rows, []string{sel[i].Name, pct(avg[i]), num(r.Avg), signed(100*avg[i] - r.Avg)})
	}
	cmp.Rows = append(cmp.Rows, []string{"Avg.", pct(ov), num(po), signed(100*ov - po)})
	b.table(cmp)
	return nil
}
