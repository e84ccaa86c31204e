//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// TestCheckStateLocked runs amt check while another process holds the
// lock of its agent state (#34, class 5): the check must fail at once with
// exit status 2 and one line naming the lock file, leave the state as it
// was, and succeed, continuing from it, once the lock is released.
func TestCheckStateLocked(t *testing.T) {
	cfg, out := checkConfig(t, "")
	if p := runAmt(t, "check", "-config", cfg); p.code != exitPass {
		t.Fatalf("first check: exit status %d; stderr:\n%s", p.code, p.stderr)
	}
	c, err := record.ReadCheck(filepath.Join(out, record.CheckFile))
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(c.State.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Hold the lock as a concurrent amt would (flock on <state>.lock).
	lf, err := os.OpenFile(c.State.Path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	state := filepath.Dir(filepath.Dir(c.State.Path))
	out2 := filepath.Join(filepath.Dir(out), "second")
	p := runAmt(t, "check", "-config", cfg, "-out", out2, "-state", state)
	checkExit(t, p, 2, c.State.Path+".lock")
	if !strings.Contains(p.stderr, "is locked by") {
		t.Errorf("stderr %q does not say the state is locked", p.stderr)
	}
	if after, _ := os.ReadFile(c.State.Path); !bytes.Equal(before, after) {
		t.Error("the refused check changed the state file")
	}
	lf.Close() // releases the lock
	p = runAmt(t, "check", "-config", cfg, "-out", out2, "-state", state)
	if p.code != exitPass {
		t.Fatalf("after the release: exit status %d; stderr:\n%s", p.code, p.stderr)
	}
	if c2, err := record.ReadCheck(filepath.Join(out2, record.CheckFile)); err != nil || !c2.State.Loaded {
		t.Errorf("after the release: %+v, %v; want a check that continued from the state", c2.State, err)
	}
}
