package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

const tuneDoc = `tune:
  seeds: 11-13
  grid:
    - agent: cover
      options: {psi: [0.1, 1], lr: [0.5, 2]}
`

// amt tune chooses cover's options on seeds 11-13, runs both agents on
// seeds 1-2 and writes tune.json; amt plot reports both; the same config
// gives the same files; amt run refuses a configuration that tunes.
func TestTuneCommand(t *testing.T) {
	cfg, out := smallConfig(t, "replay", 6, tuneDoc)
	stdout, _, err := runCmd(t, "tune", "-config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "tuning and evaluation results in") {
		t.Errorf("stdout %q", stdout)
	}
	tu, err := record.ReadTuning(filepath.Join(out, record.TuneFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(tu.Agents) != 1 || len(tu.Agents[0].Settings) != 4 || len(tu.TuneSeeds) != 3 || len(tu.EvalSeeds) != 2 {
		t.Fatalf("tuning %+v", tu)
	}
	meta, err := record.ReadMeta(filepath.Join(out, record.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	chosen := tu.Agents[0].Settings[tu.Agents[0].Chosen].Options
	if meta.Agents[0].ID != "cover" || meta.Agents[0].Options["psi"] != chosen["psi"] || meta.Agents[0].Options["lr"] != chosen["lr"] {
		t.Errorf("run.json agents %+v; want cover with %v", meta.Agents, chosen)
	}
	for _, a := range []string{"cover", "random"} {
		s, err := record.ReadSummary(filepath.Join(out, a, record.SummaryFile))
		if err != nil || len(s.Runs) != 2 || s.Runs[0].Seed != 1 {
			t.Errorf("%s: evaluation runs %v %+v", a, err, s)
		}
	}
	files := func() map[string][]byte {
		m := map[string][]byte{}
		for _, f := range []string{record.TuneFile, record.MetaFile, "cover/summary.json", "cover/seed-2.jsonl", "random/summary.json"} {
			b, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			m[f] = b
		}
		return m
	}
	first := files()
	if _, _, err := runCmd(t, "tune", "-config", cfg); err != nil {
		t.Fatal(err)
	}
	for f, b := range files() {
		if !bytes.Equal(b, first[f]) {
			t.Errorf("%s differs between two identical tunings", f)
		}
	}
	if _, _, err := runCmd(t, "plot", "-config", cfg); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, record.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## Hyper-parameter tuning", "3 tuning seeds (11-13)", "2 evaluation seeds (1-2)", "tables/tune-cover.md", "tables/tune-held-out.md", "## Statistical comparison"} {
		if !bytes.Contains(report, []byte(s)) {
			t.Errorf("report lacks %q", s)
		}
	}
	if _, _, err := runCmd(t, "run", "-config", cfg); err == nil || !strings.Contains(err.Error(), "tune: this experiment tunes its agents first: run amt tune -config") {
		t.Errorf("amt run of a tuning config: %v", err)
	}
}

func TestTuneCommandErrors(t *testing.T) {
	cfg, _ := smallConfig(t, "replay", 3, strings.Replace(tuneDoc, "11-13", "2-4", 1))
	if _, _, err := runCmd(t, "tune", "-config", cfg); err == nil || !strings.Contains(err.Error(), "tune.seeds: seed 2 is also in seeds, the evaluation seeds") {
		t.Errorf("overlapping seeds: %v", err)
	}
	plain, _ := smallConfig(t, "replay", 3, "")
	if _, _, err := runCmd(t, "tune", "-config", plain); err == nil || !strings.Contains(err.Error(), "has no tune section") {
		t.Errorf("no tune section: %v", err)
	}
}
