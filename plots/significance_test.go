package plots

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
)

func readCSV(t *testing.T, dir, name string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(readTable(t, dir, name))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// The statistical comparison of a synthetic experiment: its numbers are
// those of package analysis on the agents' runs, the tests are made by
// seed, and cover's clear advantage over random is significant.
func TestSignificanceSection(t *testing.T) {
	dir := t.TempDir()
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	synthExperiment(t, dir, 300, seeds, 50)
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	rates := map[string][]float64{}
	for _, a := range e.Agents {
		for _, r := range a.Summary.Runs {
			rates[a.Name] = append(rates[a.Name], float64(r.Violations)/float64(r.Iterations))
		}
	}
	ci := readCSV(t, dir, "agent-ci")
	if len(ci) != 3 || ci[0][3] != "violation rate (%)" {
		t.Fatalf("agent-ci:\n%v", ci)
	}
	for _, row := range ci[1:] {
		want := analysis.MeanCI(rates[row[0]], 0.95)
		if row[2] != "8" || row[3] != pct(want.Mean) || row[4] != pct(want.Half) || row[5] != pct(want.Lo) || row[6] != pct(want.Hi) {
			t.Errorf("agent-ci row %v; want mean %v ± %v", row, pct(want.Mean), pct(want.Half))
		}
	}
	pt := readCSV(t, dir, "paired-tests")
	if len(pt) != 2 {
		t.Fatalf("paired-tests: want the one test cover vs random, got\n%v", pt)
	}
	row := pt[1]
	var d []float64
	for i := range rates["cover"] {
		d = append(d, rates["cover"][i]-rates["random"][i])
	}
	want := analysis.MeanCI(d, 0.95)
	if row[0] != "cover" || row[1] != "random" || row[2] != "8" || row[3] != signedPct(want.Mean) || row[4] != pct(want.Half) || row[11] != "yes" {
		t.Errorf("paired-tests row %v; want cover vs random, Δ %s ± %s, significant", row, signedPct(want.Mean), pct(want.Half))
	}
	// One test: Holm leaves its p as it is.
	if row[8] != row[9] {
		t.Errorf("one test: p %s, Holm p %s", row[8], row[9])
	}
	gaps := readCSV(t, dir, "oracle-gaps")
	if len(gaps) != 5 {
		t.Fatalf("oracle-gaps: want 2 agents × 2 oracles, got\n%v", gaps)
	}
	for _, g := range gaps[1:] {
		orc, _ := strconv.ParseFloat(g[2], 64)
		gap, _ := strconv.ParseFloat(g[3], 64)
		m := analysis.MeanCI(rates[g[0]], 0.95)
		if math.Abs(orc-100*m.Mean-gap) > 0.011 || g[4] != pct(m.Half) {
			t.Errorf("gap row %v: want oracle − mean = %.2f ± %s", g, orc-100*m.Mean, pct(m.Half))
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, record.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## Statistical comparison", "Student's t", "Holm", "Wilcoxon", "figures/agent-ci.png"} {
		if !bytes.Contains(report, []byte(s)) {
			t.Errorf("report lacks %q", s)
		}
	}
	for _, ext := range []string{".png", ".svg"} {
		if _, err := os.Stat(filepath.Join(dir, record.FiguresDir, "agent-ci"+ext)); err != nil {
			t.Error(err)
		}
	}
}

// With a single seed per agent there is nothing to estimate: no section.
func TestSignificanceNeedsSeeds(t *testing.T) {
	dir := t.TempDir()
	synthExperiment(t, dir, 60, []uint64{1}, 20)
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
	if bytes.Contains(report, []byte("## Statistical comparison")) {
		t.Error("a section for single-seed agents")
	}
}

func TestPValueFormat(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want string
	}{{math.NaN(), "–"}, {0, "0"}, {1, "1"}, {0.0312, "0.031"}, {0.5, "0.5"}, {2.07e-9, "2.1e-09"}} {
		if got := pValue(tc.p); got != tc.want {
			t.Errorf("pValue(%v) = %q; want %q", tc.p, got, tc.want)
		}
	}
}
