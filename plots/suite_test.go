package plots

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// TestRenderSuite draws a small suite's report twice: the same bytes, the
// recommended agent's claims in the report, every table and figure
// written.
func TestRenderSuite(t *testing.T) {
	s := record.Suite{Name: "tiny", Seeds: []uint64{1, 2, 3}, Reference: "random", Recommended: "hts",
		Agents: []record.SuiteAgent{{ID: "random", Name: "random"}, {ID: "hts", Name: "hts"}},
		SUTs:   []record.SuiteSUT{{Name: "m", CaseStudy: "classification", DataFormat: "fashion-mnist", Images: 10, Grey: true}}}
	for i, obj := range []string{"paper", "fault", "paper", "fault"} {
		e := record.SuiteEnv{Name: "m/s" + string(rune('0'+i)) + "/" + obj, SUT: "m", Scenario: "s", Objective: obj, Images: 10,
			Oracles: record.SuiteOracles{Random: 0.3, BestVariant: 0.5, BestVariantKey: "rotation:-90", PerImage: 0.9}}
		switch i {
		case 1: // headroom 2 points, hts beats the best variant
			e.Oracles.BestPerClass = 0.52
		case 3: // headroom 10 points, hts below the best variant
			e.Oracles.BestVariant, e.Oracles.BestPerClass = 0.75, 0.85
		}
		e.Runs = []record.SuiteRuns{
			{Agent: "random", Scores: []float64{0.3, 0.2, 0.4}, Violations: []int{3, 2, 4}, Iterations: []int{10, 10, 10}},
			{Agent: "hts", Scores: []float64{0.7, 0.6, 0.8}, Violations: []int{7, 6, 8}, Iterations: []int{10, 10, 10}},
		}
		s.Envs = append(s.Envs, e)
	}
	var first map[string][]byte
	for round := range 2 {
		dir := t.TempDir()
		if err := record.WriteSuite(filepath.Join(dir, record.SuiteFile), s); err != nil {
			t.Fatal(err)
		}
		_, claims, err := RenderSuite(dir)
		if err != nil {
			t.Fatal(err)
		}
		if claims.Agent != "hts" || claims.FaultEnvs != 2 || claims.FaultBeatsBest != 1 || claims.WorseThanRef != 0 || claims.LossFree != 1 {
			t.Fatalf("claims %+v", claims)
		}
		wantHeadroom := []HeadroomCount{{0.01, 2, 1}, {0.02, 2, 1}, {0.03, 1, 0}, {0.05, 1, 0}}
		if !slices.Equal(claims.ByHeadroom, wantHeadroom) {
			t.Fatalf("by headroom %+v, want %+v", claims.ByHeadroom, wantHeadroom)
		}
		files := map[string][]byte{}
		for _, f := range []string{suiteReport, suiteCD, suiteHeatMap, "tables/suite-agents.md", "tables/suite-win-tie-loss.csv", "tables/suite-environments.md", "tables/suite-suts.md"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			files[f] = b
		}
		md := string(files[suiteReport])
		for _, want := range []string{"mean normalised score over the environments: **0.667**", "beats the best single variant in hindsight on **1 of 2**",
			"by at least 1, 2, 3, 5 points (the headroom the system under test's answer leaves an agent): 1 of 2 (50 %), 1 of 2 (50 %), 0 of 1 (0 %), 0 of 1 (0 %)", "grayscale relation is the identity"} {
			if !strings.Contains(md, want) {
				t.Errorf("report lacks %q", want)
			}
		}
		if round == 0 {
			first = files
			continue
		}
		for f, b := range files {
			if !bytes.Equal(b, first[f]) {
				t.Errorf("%s differs between two renders", f)
			}
		}
	}
}
