package plots

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
)

// The tuning section shows every setting's mean on the tuning seeds, marks
// the chosen one, and sets its tuning mean beside the agent's evaluation
// runs.
func TestTuneSection(t *testing.T) {
	dir := t.TempDir()
	synthExperiment(t, dir, 120, []uint64{1, 2, 3}, 20)
	tu := record.Tuning{TuneSeeds: []uint64{101, 102, 103, 105}, EvalSeeds: []uint64{1, 2, 3}, Metric: "violation rate",
		Agents: []record.TunedAgent{{ID: "cover", Name: "cover", Fixed: map[string]string{"hidden": "0"},
			Grid: map[string][]string{"psi": {"0.1", "1"}},
			Settings: []record.TuneSetting{
				{Options: map[string]string{"psi": "0.1"}, Rates: []float64{0.40, 0.42, 0.41, 0.45}},
				{Options: map[string]string{"psi": "1"}, Rates: []float64{0.50, 0.46, 0.47, 0.49}},
			}, Chosen: 1}}}
	if err := record.WriteTuning(filepath.Join(dir, record.TuneFile), tu); err != nil {
		t.Fatal(err)
	}
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	c0 := analysis.MeanCI(tu.Agents[0].Settings[0].Rates, 0.95)
	c1 := analysis.MeanCI(tu.Agents[0].Settings[1].Rates, 0.95)
	want := "psi,violation rate (%),± 95 % CI (pp),chosen\n" +
		"0.1," + pct(c0.Mean) + "," + pct(c0.Half) + ",\n" +
		"1," + pct(c1.Mean) + "," + pct(c1.Half) + ",✓\n"
	if got := readTable(t, dir, "tune-cover"); got != want {
		t.Errorf("tune-cover:\n%s\nwant\n%s", got, want)
	}
	var rates []float64
	for _, r := range e.Agents[0].Summary.Runs {
		rates = append(rates, float64(r.Violations)/float64(r.Iterations))
	}
	ev := analysis.MeanCI(rates, 0.95)
	held := readCSV(t, dir, "tune-held-out")
	if len(held) != 2 || held[1][0] != "cover" || held[1][1] != "psi=1" || held[1][2] != pct(c1.Mean) || held[1][4] != pct(ev.Mean) || held[1][6] != signedPct(ev.Mean-c1.Mean) {
		t.Errorf("tune-held-out %v; want cover psi=1 %s → %s", held, pct(c1.Mean), pct(ev.Mean))
	}
	report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
	for _, s := range []string{"## Hyper-parameter tuning", "4 tuning seeds (101-103, 105)", "3 evaluation seeds (1-3)", "(fixed: hidden=0)", "figures/tune-cover.png"} {
		if !bytes.Contains(report, []byte(s)) {
			t.Errorf("report lacks %q", s)
		}
	}
	// A tune.json whose seed sets overlap is refused.
	tu.TuneSeeds = append(tu.TuneSeeds, 2)
	for i := range tu.Agents[0].Settings {
		tu.Agents[0].Settings[i].Rates = append(tu.Agents[0].Settings[i].Rates, 0.5)
	}
	record.WriteTuning(filepath.Join(dir, record.TuneFile), tu)
	if _, err := Load(dir); err == nil || !bytes.Contains([]byte(err.Error()), []byte("seed 2 is both a tuning and an evaluation seed")) {
		t.Errorf("overlapping tune.json: %v", err)
	}
}

func TestSeedList(t *testing.T) {
	if got := seedList([]uint64{5, 1, 2, 3, 9, 10}); got != "1-3, 5, 9-10" {
		t.Errorf("seedList = %q", got)
	}
}
