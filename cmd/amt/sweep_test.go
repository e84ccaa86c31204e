package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSweepKillHelper is the child process of TestSweepKilledResumes: it
// runs a sweep until it is killed.
func TestSweepKillHelper(t *testing.T) {
	cfg := os.Getenv("AMT_SWEEP_KILL_CONFIG")
	if cfg == "" {
		t.Skip("helper process of TestSweepKilledResumes")
	}
	if _, _, err := runCmd(t, "sweep", "-config", cfg, "-workers", "1"); err != nil {
		t.Fatal(err)
	}
}

// Killing a sweep (SIGKILL, no chance to clean up) loses no finished row:
// the rerun computes only the missing images and ends with the same table
// as an uninterrupted sweep.
func TestSweepKilledResumes(t *testing.T) {
	n := 24
	if testing.Short() {
		n = 12
	}
	cfg, out := smallConfig(t, "replay", n, "")
	cache := filepath.Join(filepath.Dir(cfg), "cache")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSweepKillHelper$")
	cmd.Env = append(os.Environ(), "AMT_SWEEP_KILL_CONFIG="+cfg)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := func() int {
		parts, _ := filepath.Glob(filepath.Join(cache, "verdicts-*", "part-*.jsonl"))
		c := 0
		for _, p := range parts {
			b, _ := os.ReadFile(p)
			c += strings.Count(string(b), "\n")
		}
		return c
	}
	deadline := time.Now().Add(2 * time.Minute)
	for lines() < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	done := lines()
	if done < 3 || done >= n {
		t.Skipf("the child finished %d of %d images before the kill; cannot test the interruption", done, n)
	}
	if tables, _ := filepath.Glob(filepath.Join(cache, "verdicts-*", "table.jsonl")); len(tables) != 0 {
		t.Fatal("a killed sweep left a consolidated table")
	}
	stdout, _, err := runCmd(t, "sweep", "-config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := os.ReadFile(filepath.Join(out, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// An uninterrupted sweep in a fresh cache.
	cfg2, out2 := smallConfig(t, "replay", n, "")
	if _, _, err := runCmd(t, "sweep", "-config", cfg2); err != nil {
		t.Fatal(err)
	}
	fresh, _ := os.ReadFile(filepath.Join(out2, "sweep.csv"))
	if string(resumed) != string(fresh) || strings.Count(string(fresh), "\n") != 1+n*9 {
		t.Fatalf("resumed table differs from an uninterrupted one (%s)", stdout)
	}
	t.Logf("killed after %d of %d images; resumed", done, n)
}
