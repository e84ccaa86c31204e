package main

import (
	"strings"
	"testing"
)

// -workers is checked against the range of the configuration's workers by
// every command that takes it, before anything runs.
func TestWorkersFlagRange(t *testing.T) {
	for _, tc := range []struct {
		cmd, config, workers string
	}{
		{"sweep", "../../experiments/configs/rq1-classification.yaml", "5000"},
		{"sweep", "../../experiments/configs/rq1-classification.yaml", "-3"},
		{"suite", "../../experiments/configs/suite.yaml", "1025"},
		{"suite", "../../experiments/configs/suite.yaml", "-2"},
	} {
		_, _, err := runCmd(t, tc.cmd, "-config", tc.config, "-workers", tc.workers)
		want := tc.cmd + ": -workers " + tc.workers + ": want 0 (one per core) to 1024"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("amt %s -workers %s: error %v, want %q", tc.cmd, tc.workers, err, want)
		}
	}
}
