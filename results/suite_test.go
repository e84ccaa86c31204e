package results_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/plots"
	"github.com/amt-dev/amt/scenario"
)

// TestCommittedSuite checks results/suite/ (make suite) against the code.
// Its report, figures and tables are what amt suite -dir draws from its
// suite.json, byte for byte. Its runs are what the code
// produces where the tables are committed (results/sweeps/: the CIFAR-10
// SqueezeNet and the COCO detector of rq1, whose inputs suite.json must
// name): there every environment's oracles are recomputed exactly, and
// every agent's run with the first seed is replayed and must give the
// committed score and counts. (The other SUTs' tables are not committed;
// make suite recomputes them.)
func TestCommittedSuite(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("the committed results were made on amd64; %s computes other last bits", runtime.GOARCH)
	}
	checkCommittedSuite(t, "suite")
}

// checkCommittedSuite is TestCommittedSuite on the results folder suiteDir.
func checkCommittedSuite(t *testing.T, suiteDir string) {
	s, err := record.ReadSuite(filepath.Join(suiteDir, record.SuiteFile))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), suiteDir)
	copyFile(t, filepath.Join(suiteDir, record.SuiteFile), filepath.Join(tmp, record.SuiteFile))
	if _, _, err := plots.RenderSuite(tmp); err != nil {
		t.Fatal(err)
	}
	for _, f := range drawnFiles(t, tmp) {
		got, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(suiteDir, f))
		if err != nil {
			t.Fatalf("%s is not committed: %v", f, err)
		}
		if !sameDrawing(f, got, want) {
			if *update {
				writeFile(t, filepath.Join(suiteDir, f), got)
				continue
			}
			t.Errorf("%s differs from what amt suite -dir draws (%s); make suite, or go test ./results -update to redraw", f, firstDifference(got, want, "drawn", "committed"))
		}
	}
	replayed := 0
	for _, study := range []string{"classification", "detection"} {
		meta, err := record.ReadMeta(filepath.Join("rq1-"+study, record.MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		var sut *record.SuiteSUT
		for i, u := range s.SUTs {
			if u.Model.SHA256 == meta.SUT.SHA256 && u.Data.SHA256 == meta.Data.SHA256 && u.Images == meta.Data.Images &&
				meta.Features.Model != nil && u.Features.SHA256 == meta.Features.Model.SHA256 {
				sut = &s.SUTs[i]
			}
		}
		if sut == nil {
			t.Fatalf("suite.json has no SUT on rq1-%s's inputs %s, whose table is committed", study, inputs(meta))
		}
		tab := loadTables(t)[study]
		for _, e := range s.Envs {
			if e.SUT != sut.Name {
				continue
			}
			sc, err := mr.Builtin(e.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			if e.Objective == "fault" {
				sc.Objective = scenario.Fault
			}
			rows := dense(scenarioRows(t, tab.rows, sc))
			if got := experiments.SuiteOracles(rows, sc, e.Images); got != e.Oracles {
				t.Errorf("%s: oracles %+v, committed %+v", e.Name, got, e.Oracles)
			}
			feats, layout := tab.features, bandit.Layout{Dim: tab.dim}
			if sut.SutContext {
				if tab.sut == nil {
					t.Fatalf("the suite's context has the grey-box block, but results/sweeps/%s-sut.f32.gz is not committed", study)
				}
				feats = experiments.ConcatRows(tab.features, tab.dim, tab.sut, tab.sutDim, e.Images)
				layout = bandit.Layout{Dim: tab.dim + tab.sutDim, Grey: tab.sutDim}
			}
			env, err := experiments.NewReplayEnv(rows, feats, layout, sc)
			if err != nil {
				t.Fatal(err)
			}
			for k, a := range s.Agents {
				spec := experiments.AgentSpec{ID: a.ID, Name: a.Name, Options: bandit.Options(a.Options)}
				score, viol, iter, err := experiments.SuiteRun(context.Background(), env, sc, spec, s.Seeds[0])
				if err != nil {
					t.Fatal(err)
				}
				r := e.Runs[k]
				if score != r.Scores[0] || viol != r.Violations[0] || iter != r.Iterations[0] {
					t.Errorf("%s, %s, seed %d: score %v, %d violations in %d iterations; committed %v, %d in %d",
						e.Name, a.ID, s.Seeds[0], score, viol, iter, r.Scores[0], r.Violations[0], r.Iterations[0])
				}
				replayed++
			}
		}
	}
	if replayed == 0 {
		t.Fatal("no run replayed")
	}
	t.Logf("%d runs replayed", replayed)
}
