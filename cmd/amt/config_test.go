package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments"
)

// amt config -ref prints the generated reference; amt config FILE checks
// configurations.
func TestConfigCommand(t *testing.T) {
	stdout, _, err := runCmd(t, "config", "-ref")
	if err != nil || stdout != experiments.ConfigReference() || !strings.Contains(stdout, "| `data.limit` |") {
		t.Fatalf("config -ref: %v\n%.200s", err, stdout)
	}
	ok, _ := smallConfig(t, "replay", 3, "")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	b, _ := os.ReadFile(ok)
	os.WriteFile(bad, []byte(strings.Replace(string(b), "seeds: 1-2", "seed: 1-2", 1)), 0o644)
	stdout, _, err = runCmd(t, "config", ok, bad)
	if !strings.Contains(stdout, ok+": ok: small, classification replay, scenario basic, agents cover, random, 2 seeds") {
		t.Errorf("stdout %q", stdout)
	}
	if err == nil || !strings.Contains(err.Error(), `bad.yaml:9:1: seed: unknown key; did you mean "seeds"?`) {
		t.Errorf("err %v", err)
	}
	if _, _, err := runCmd(t, "config"); err == nil {
		t.Error("config without arguments: no error")
	}
}
