package results_test

import (
	"bytes"
	"context"
	"errors"
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

// gatePowerDir is the committed gate power study (make gate-power): its
// inputs study.json and outcomes.csv (one line per replayed CI cycle), and
// what plots.WriteGatePower draws from them.
const gatePowerDir = "gate-power"

// The gate power study's report and figures are what the committed
// outcomes give (-update rewrites them).
func TestGatePowerReport(t *testing.T) {
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
		if err == nil && bytes.Equal(got, want) {
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
// study's configuration, on three of its cycle seeds, from the models'
// cached sweeps (skipped when the assets or the cache lack them: the study
// never runs the models here).
func TestGatePowerSample(t *testing.T) {
	cfg, err := experiments.LoadConfig(filepath.Join("..", "experiments", "gate-power.yaml"), "")
	if err != nil {
		t.Skipf("the study's configuration does not load here (assets?): %v", err)
	}
	committed, err := record.ReadGatePowerOutcomes(filepath.Join(gatePowerDir, record.GatePowerOutcomesFile))
	if err != nil {
		t.Fatal(err)
	}
	all := cfg.Power.Cycles
	sample := []uint64{all[0], all[len(all)/2], all[len(all)-1]}
	cfg.Power.Cycles, cfg.Output = sample, t.TempDir()
	_, got, err := experiments.GatePower(context.Background(), cfg, io.Discard, nil, true)
	if errors.Is(err, experiments.ErrNotCached) {
		t.Skipf("the models' sweeps are not all in the cache %s: %v", cfg.Cache, err)
	}
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
