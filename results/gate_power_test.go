package results_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots"
)

// gatePowerStudies are the committed gate power studies (make
// gate-power): their folders hold study.json and outcomes.csv (one line
// per replayed CI cycle) and what plots.WriteGatePower draws from them;
// sample is how many cycle seeds TestGatePowerSample replays (the first,
// the middle, the last; only the first for cover, whose cycles cost several
// times hts's, to keep the test short).
var gatePowerStudies = []struct {
	dir, config string
	sample      int
}{
	{"gate-power", "gate-power.yaml", 3},
	{"gate-power-cover", "gate-power-cover.yaml", 1},
}

// The gate power study's report and figures are what the committed
// outcomes give (-update rewrites them).
func TestGatePowerReport(t *testing.T) {
	for _, g := range gatePowerStudies {
		t.Run(g.dir, func(t *testing.T) { checkGatePowerReport(t, g.dir) })
	}
}

func checkGatePowerReport(t *testing.T, gatePowerDir string) {
	tmp := t.TempDir()
	for _, f := range []string{record.GatePowerFile, record.GatePowerOutcomesFile} {
		copyFile(t, filepath.Join(gatePowerDir, f), filepath.Join(tmp, f))
	}
	s, err := plots.WriteGatePower(tmp)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"report.md"}
	for _, p := range s.Study.Pairs {
		files = append(files, "figures/power-"+p.Name+".png", "figures/power-"+p.Name+".svg")
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(gatePowerDir, f))
		if err == nil && sameDrawing(f, got, want) {
			continue
		}
		if *update {
			writeFile(t, filepath.Join(gatePowerDir, f), got)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v (run go test ./results -run GatePower -update)", f, err)
			continue
		}
		t.Errorf("%s differs from what the committed outcomes give (run go test ./results -run GatePower -update):\n%s", f, firstDifference(got, want, "drawn", "committed"))
	}
}

// A sample of the committed outcomes replays to the same decisions: the
// study's configuration, on some of its cycle seeds, from the models'
// sweeps (computed into the cache when it lacks them: four Fashion-MNIST
// models on 2,000 images, about a minute on two cores; read from it
// afterwards). Debian's dataset-fashion-mnist must be installed (.ci/run
// installs it).
func TestGatePowerSample(t *testing.T) {
	for _, g := range gatePowerStudies {
		t.Run(g.dir, func(t *testing.T) { checkGatePowerSample(t, g.dir, g.config, g.sample) })
	}
}

func checkGatePowerSample(t *testing.T, gatePowerDir, config string, n int) {
	cfg, err := experiments.LoadConfig(filepath.Join("..", "experiments", "configs", config), "")
	if err != nil {
		t.Fatalf("the study's configuration does not load (assets, or Debian's dataset-fashion-mnist?): %v", err)
	}
	committed, err := record.ReadGatePowerOutcomes(filepath.Join(gatePowerDir, record.GatePowerOutcomesFile))
	if err != nil {
		t.Fatal(err)
	}
	all := cfg.Power.Cycles
	sample := []uint64{all[len(all)-1]}
	if n > 1 {
		sample = []uint64{all[0], all[len(all)/2], all[len(all)-1]}[3-min(n, 3):]
	}
	cfg.Power.Cycles, cfg.Output = sample, t.TempDir()
	_, got, err := experiments.GatePower(context.Background(), cfg, io.Discard, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var want []record.GatePowerOutcome
	for _, o := range committed {
		if slices.Contains(sample, o.Cycle) {
			want = append(want, o)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d outcomes replayed, %d committed for cycles %v", len(got), len(want), sample)
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("replayed %+v, committed %+v", got[i], want[i])
		}
	}
}
