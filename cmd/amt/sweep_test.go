package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	var childOut bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestSweepKillHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "AMT_SWEEP_KILL_CONFIG="+cfg)
	cmd.Stdout, cmd.Stderr = &childOut, &childOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	lines := func() int {
		parts, _ := filepath.Glob(filepath.Join(cache, "verdicts-*", "part-*.jsonl"))
		c := 0
		for _, p := range parts {
			b, _ := os.ReadFile(p)
			c += strings.Count(string(b), "\n")
		}
		return c
	}
	// Kill the child once it has checkpointed 3 images. It must still be
	// running then: a child that exits on its own has crashed (or, at
	// ~1 s per image, finished 12 images in the poll's 20 ms), and either
	// is a failure, not a skip.
	deadline := time.Now().Add(3 * time.Minute)
	var waitErr error
	running := true
	for running && lines() < 3 && time.Now().Before(deadline) {
		select {
		case waitErr = <-exited:
			running = false
		case <-time.After(20 * time.Millisecond):
		}
	}
	if !running {
		t.Fatalf("the sweep exited by itself (%v) after %d of %d images, before it could be killed:\n%s", waitErr, lines(), n, childOut.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitErr = <-exited
	var exit *exec.ExitError
	if !errors.As(waitErr, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the sweep was not killed by the kill (wait: %v):\n%s", waitErr, childOut.String())
	}
	done := lines()
	if done < 3 || done >= n {
		t.Fatalf("the killed sweep had finished %d of %d images (want 3 ≤ done < %d):\n%s", done, n, n, childOut.String())
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
