package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer a child process writes while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSignalStops: SIGTERM or SIGINT sent to amt while it sweeps or while
// an agent runs ends the process promptly (amt gives itself stopGrace; the
// loops check between images and iterations) with one line saying what
// was interrupted, what was kept and how to go on, and the shell's status
// for the signal (128+n).
func TestSignalStops(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		mode     string
		images   int
		extra    string
		sig      syscall.Signal
		waitFor  string // the stderr line after which the signal is sent
		want     string
		wantCode int
	}{
		{"sweep", "replay", 400, "", syscall.SIGTERM, "sweep small: 400 images, 0 cached, 400 to go\n",
			"amt: sweep interrupted after ", 143},
		{"agent", "online", 400, "", syscall.SIGINT, "agent cover: 800 iterations to go\n",
			"amt: agent cover interrupted in seed ", 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := smallConfig(t, tc.mode, tc.images, tc.extra)
			cmd := exec.Command(exe, "run", "-config", cfg)
			cmd.Env = append(os.Environ(), runMainEnv+"=1")
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			deadline := time.After(3 * time.Minute)
		wait:
			for !strings.Contains(stderr.String(), tc.waitFor) {
				select {
				case err := <-done:
					t.Fatalf("amt ended before the signal (%v):\n%s", err, stderr.String())
				case <-deadline:
					cmd.Process.Kill()
					t.Fatalf("no %q after 3 minutes:\n%s", tc.waitFor, stderr.String())
				case <-time.After(20 * time.Millisecond):
					continue wait
				}
			}
			sent := time.Now()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(stopGrace + 5*time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running %s after %v:\n%s", time.Since(sent), tc.sig, stderr.String())
			}
			took := time.Since(sent)
			out := stderr.String()
			last := out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:]
			if code := cmd.ProcessState.ExitCode(); code != tc.wantCode {
				t.Errorf("exit status %d, want %d", code, tc.wantCode)
			}
			if !strings.HasPrefix(last, tc.want) || !strings.HasSuffix(last, ": "+tc.sig.String()+" signal received\n") {
				t.Errorf("last line %q: want %q… %q", last, tc.want, tc.sig.String()+" signal received")
			}
			for _, bad := range []string{"panic:", "goroutine ", "still not stopped", "context canceled"} {
				if strings.Contains(out, bad) {
					t.Errorf("stderr holds %q:\n%s", bad, out)
				}
			}
			// Prompt: well within the grace, which would have said so.
			t.Logf("%v: stopped %v after the signal; %s", tc.sig, took.Round(time.Millisecond), strings.TrimSpace(last))
		})
	}
}
