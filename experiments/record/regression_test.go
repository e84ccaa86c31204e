package record

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// regression.json round-trips, and counts that cannot come from a run are
// refused with the agent and seed named.
func TestRegressionRoundTripAndChecks(t *testing.T) {
	good := func() Regression {
		return Regression{Switch: 10, Window: 4, SUTBefore: File{Path: "a.onnx", SHA256: "aa"}, SUTAfter: File{Path: "b.onnx", SHA256: "bb"},
			Agents: []RegressionAgent{{ID: "cover-carried", Agent: "cover", State: Carried, Runs: []RegressionRun{
				{Seed: 1, Before: Counts{Count: 10, Violations: 3}, After: Counts{Count: 10, Violations: 6}, AfterWindow: Counts{Count: 4, Violations: 2}}}}}}
	}
	path := filepath.Join(t.TempDir(), RegressionFile)
	r := good()
	if err := WriteRegression(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRegression(path)
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(*Regression)
		want  string
	}{
		{"zero switch", func(r *Regression) { r.Switch = 0 }, "switch_iteration 0 and window 4 must be positive"},
		{"state", func(r *Regression) { r.Agents[0].State = "kept" }, `agent cover-carried: state "kept", want carried or fresh`},
		{"before count", func(r *Regression) { r.Agents[0].Runs[0].Before.Count = 9 }, "agent cover-carried, seed 1: inconsistent counts"},
		{"window longer", func(r *Regression) { r.Agents[0].Runs[0].AfterWindow.Count = 5 }, "inconsistent counts"},
		{"violations", func(r *Regression) { r.Agents[0].Runs[0].After.Violations = 11 }, "inconsistent counts"},
	} {
		r := good()
		tc.spoil(&r)
		if err := WriteRegression(path, r); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadRegression(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}
