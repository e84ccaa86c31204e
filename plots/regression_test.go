package plots

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
)

// A regression experiment's report: its own section list (no per-SUT
// sections), the rates table with the intervals of package analysis, both
// SUTs' oracles, the paired tests, and the windowed figure.
func TestRegressionSection(t *testing.T) {
	dir := t.TempDir()
	seeds := []uint64{1, 2, 3}
	synthExperiment(t, dir, 120, seeds, 20)
	// The synthetic agents stand in for the carried runs; copies for the
	// fresh ones.
	for _, a := range []string{"cover", "random"} {
		if err := os.Rename(filepath.Join(dir, a), filepath.Join(dir, a+"-carried")); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(filepath.Join(dir, a+"-fresh"), os.DirFS(filepath.Join(dir, a+"-carried"))); err != nil {
			t.Fatal(err)
		}
	}
	sweep, _ := os.ReadFile(filepath.Join(dir, record.VerdictsFile))
	if err := os.WriteFile(filepath.Join(dir, record.VerdictsAfterFile), sweep, 0o644); err != nil {
		t.Fatal(err)
	}
	runs := func(before, after, window []int) []record.RegressionRun {
		var out []record.RegressionRun
		for i, s := range seeds {
			out = append(out, record.RegressionRun{Seed: s, Before: record.Counts{Count: 60, Violations: before[i]},
				After: record.Counts{Count: 60, Violations: after[i]}, AfterWindow: record.Counts{Count: 10, Violations: window[i]}})
		}
		return out
	}
	reg := record.Regression{Switch: 60, Window: 10,
		SUTBefore: record.File{Path: "models/a.onnx", SHA256: "aa"}, SUTAfter: record.File{Path: "models/b.onnx", SHA256: "bb"},
		Agents: []record.RegressionAgent{
			{ID: "random-carried", Agent: "random", State: record.Carried, Runs: runs([]int{20, 21, 19}, []int{22, 20, 21}, []int{3, 4, 3})},
			{ID: "random-fresh", Agent: "random", State: record.Fresh, Runs: runs([]int{20, 21, 19}, []int{22, 20, 21}, []int{3, 4, 3})},
			{ID: "cover-carried", Agent: "cover", State: record.Carried, Runs: runs([]int{30, 32, 31}, []int{40, 38, 41}, []int{7, 8, 6})},
			{ID: "cover-fresh", Agent: "cover", State: record.Fresh, Runs: runs([]int{30, 32, 31}, []int{33, 30, 35}, []int{3, 4, 4})},
		}}
	if err := record.WriteRegression(filepath.Join(dir, record.RegressionFile), reg); err != nil {
		t.Fatal(err)
	}
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e.Regression == nil || len(e.VerdictsAfter) != len(e.Verdicts) {
		t.Fatalf("Load: regression %v, %d rows after the change", e.Regression, len(e.VerdictsAfter))
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	stats, err := analysis.RegressionStats(reg, analysis.Level95)
	if err != nil {
		t.Fatal(err)
	}
	rates := readCSV(t, dir, "regression-rates")
	if len(rates) != 5 {
		t.Fatalf("regression-rates: %v", rates)
	}
	for i, s := range stats {
		r := rates[i+1]
		if r[0] != s.ID || r[1] != s.State || r[3] != pct(s.BeforeCI.Mean) || r[5] != pct(s.AfterCI.Mean) || r[6] != pct(s.AfterCI.Half) || r[7] != pct(s.WindowCI.Mean) {
			t.Errorf("regression-rates row %v; want %s %s %s %s", r, s.ID, pct(s.BeforeCI.Mean), pct(s.AfterCI.Mean), pct(s.WindowCI.Mean))
		}
	}
	tests := readCSV(t, dir, "regression-tests")
	want := analysis.RegressionTests(stats, "random", analysis.Level95)
	if len(tests) != len(want)+1 || len(want) != 3 {
		t.Fatalf("regression-tests %v; want %d tests", tests, len(want))
	}
	for i, x := range want {
		if r := tests[i+1]; r[0] != x.Agent || r[1] != x.Reference || r[4] != signedPct(x.Diff.Mean) || r[8] != pValue(x.PHolm) {
			t.Errorf("regression-tests row %v; want %s vs %s Δ %s p(Holm) %s", r, x.Agent, x.Reference, signedPct(x.Diff.Mean), pValue(x.PHolm))
		}
	}
	if o := readCSV(t, dir, "regression-oracles"); len(o) != 3 || o[1][1] != "a.onnx" || o[2][1] != "b.onnx" || o[1][4] != o[2][4] {
		t.Errorf("regression-oracles %v", o)
	}
	report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
	for _, s := range []string{"## Regression testing: the SUT changes", "first 60 iterations on `a.onnx`", "figures/regression-windowed.png"} {
		if !bytes.Contains(report, []byte(s)) {
			t.Errorf("report lacks %q", s)
		}
	}
	var heads []string
	for _, l := range bytes.Split(report, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("## ")) {
			heads = append(heads, string(l[3:]))
		}
	}
	if got := strings.Join(heads, "; "); got != "Setup; Regression testing: the SUT changes; Caveats; Configuration" {
		t.Errorf("sections %s; want the regression report's own", got)
	}
	if _, err := os.Stat(filepath.Join(dir, record.FiguresDir, "regression-windowed.svg")); err != nil {
		t.Error(err)
	}
}
