package plots

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// corruptionExperiment writes a synthetic corruption report to dir: two
// corruptions × severities 1-5 over images, a reference table (errs made
// more often), and an agent "random" whose runs spend budget follow-ups
// uniformly, counting errors as a corruption report's runs do.
func corruptionExperiment(t *testing.T, dir string, images, budget int, seeds []uint64) []record.Verdict {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	table := func(p float64) []record.Verdict {
		var rows []record.Verdict
		for i := range images {
			label := i % 10
			for _, mr := range []string{"gaussian_noise", "fog"} {
				for s := 1; s <= 5; s++ {
					v := record.Verdict{Image: i, MR: mr, Param: float64(s), Label: label, PredOriginal: label, PredTransformed: label,
						MapOriginal: math.NaN(), MapTransformed: math.NaN()}
					if rng.Float64() < p*float64(s) {
						v.PredTransformed, v.Violation = (label+1)%10, true
					}
					rows = append(rows, v)
				}
			}
		}
		return rows
	}
	rows, ref := table(0.05), table(0.1)
	if err := record.WriteVerdictsCSV(filepath.Join(dir, record.VerdictsFile), rows, false); err != nil {
		t.Fatal(err)
	}
	rp := filepath.Join(dir, record.VerdictsReferenceFile)
	if err := record.WriteVerdictsCSV(rp, ref, false); err != nil {
		t.Fatal(err)
	}
	sum, err := record.FileSHA256(rp)
	if err != nil {
		t.Fatal(err)
	}
	if err := record.WriteCorruption(filepath.Join(dir, record.CorruptionFile), record.Corruption{Identity: synthID,
		Reference: record.File{Path: "models/ref.onnx", SHA256: "ab"}, VerdictsSHA256: sum}); err != nil {
		t.Fatal(err)
	}
	folder, err := record.CreateAgentFolder(filepath.Join(dir, "random"), synthID)
	if err != nil {
		t.Fatal(err)
	}
	s := record.Summary{Agent: "random", Scenario: "corruptions", Mode: "replay"}
	for _, seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 9))
		run := record.Run{Seed: seed, Arms: map[string]record.Counts{}, Params: map[string]record.Counts{}, ParamErrors: map[string]int{}}
		for range budget {
			row := rows[r.IntN(len(rows))]
			c := record.Counts{Count: 1}
			if row.Violation {
				c.Violations = 1
			}
			run.Iterations++
			run.Violations += c.Violations
			run.Arms[row.MR] = run.Arms[row.MR].Add(c)
			run.Params[row.ParamKey()] = run.Params[row.ParamKey()].Add(c)
			if row.PredTransformed != row.Label {
				run.ParamErrors[row.ParamKey()]++
			}
		}
		s.Runs = append(s.Runs, run)
		if err := folder.WriteLog(seed, []record.LogLine{{Agent: "random", Scenario: "corruptions", Seed: seed, Iteration: budget,
			Violations: run.Violations, Arms: cloneCounts(run.Arms)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := folder.Stage(s, record.Timing{Agent: "random"}); err != nil {
		t.Fatal(err)
	}
	if err := folder.Commit(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// The corruption section of a synthetic report: the error table is the
// table's, CE is against the reference, the estimate table has the agent
// and the stratified yardstick; a reference table that is not the one
// corruption.json records is refused.
func TestCorruptionSection(t *testing.T) {
	dir := t.TempDir()
	corruptionExperiment(t, dir, 200, 400, []uint64{1, 2, 3})
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e.Corruption == nil || len(e.VerdictsReference) != len(e.Verdicts) {
		t.Fatalf("Load: corruption %v, %d reference rows", e.Corruption, len(e.VerdictsReference))
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	errs := readCSV(t, dir, "corruption-error")
	if len(errs) != 4 || errs[0][1] != "s1" || errs[1][0] != "gaussian_noise" || errs[3][0] != "mean" {
		t.Errorf("corruption-error: %v", errs)
	}
	ce := readCSV(t, dir, "corruption-ce")
	last := ce[len(ce)-1]
	if last[0] != "mCE / relative mCE" || last[5] != "100.00" {
		t.Errorf("corruption-ce last row %v: want the reference's mCE 100.00", last)
	}
	est := readCSV(t, dir, "corruption-estimate")
	if len(est) != 3 || est[1][0] != "random" || est[2][0] != "stratified (simulated)" || est[1][1] != "400" || est[2][1] != "400" {
		t.Errorf("corruption-estimate: %v", est)
	}
	report, err := os.ReadFile(filepath.Join(dir, record.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Common corruptions", "### Corruption errors against `ref.onnx`", "### Estimating the profile at a budget"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// A reference table edited after the run is refused.
	rp := filepath.Join(dir, record.VerdictsReferenceFile)
	b, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rp, append(b, b[len(b)-30:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "verdicts_sha256") {
		t.Errorf("edited reference table: %v", err)
	}
}
