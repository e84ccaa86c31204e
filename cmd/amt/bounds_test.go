package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkExit is checkRejected for another exit status: one line on stderr
// containing want, no panic or trace, peak memory within maxRSS.
func checkExit(t *testing.T, p process, code int, want string) {
	t.Helper()
	if p.code != code {
		t.Errorf("exit status %d, want %d; stderr:\n%.2000s", p.code, code, p.stderr)
		return
	}
	msg := strings.TrimSuffix(p.stderr, "\n")
	if code == 2 {
		// A usage error prints the usage after its line; the line is last.
		lines := strings.Split(msg, "\n")
		msg = lines[len(lines)-1]
		if !strings.Contains(msg, want) {
			msg = lines[0]
		}
	} else if strings.Contains(msg, "\n") {
		t.Errorf("stderr is not one line:\n%.2000s", p.stderr)
	}
	if !strings.Contains(msg, want) || len(msg) > 500 {
		t.Errorf("stderr %.600q: want one short line containing %q", msg, want)
	}
	for _, bad := range []string{"panic:", "goroutine ", "fatal error"} {
		if strings.Contains(p.stderr, bad) {
			t.Errorf("stderr holds %q:\n%.2000s", bad, p.stderr)
		}
	}
	if p.maxRSS > maxRSS {
		t.Errorf("peak RSS %d MiB, want ≤ %d MiB", p.maxRSS>>20, maxRSS>>20)
	}
}

// TestOPEBounds runs amt ope, as a process, on the inputs of #34's class
// 1: a log line with arm 2,000,000,000, -arms 2e9, -model-hidden 1e8, a
// 2 GB sparse log and a FIFO: each ends in a one-line error within
// maxRSS.
func TestOPEBounds(t *testing.T) {
	dir := t.TempDir()
	armLog := filepath.Join(dir, "arm.jsonl")
	os.WriteFile(armLog, []byte(`{"context":[1,2],"arm":2000000000,"prob":0.5,"cost":1}`+"\n"), 0o644)
	good := writeOPELog(t, 20)
	big := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	wide := filepath.Join(dir, "wide.jsonl")
	os.WriteFile(wide, []byte(`{"context":[`+strings.Repeat("0,", 1<<20)+`0],"arm":0,"prob":1,"cost":1}`+"\n"), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"arm 2e9", []string{"-log", armLog}, 1, "line 1: arm 2000000000"},
		{"-arms 2e9", []string{"-log", good, "-arms", "2000000000"}, 2, "-arms 2000000000, want 0 (from the log) to 65536"},
		{"-model-hidden 1e8", []string{"-log", good, "-model-hidden", "100000000"}, 2, "-model-hidden 100000000, want 0 to 1024"},
		{"2 GB sparse log", []string{"-log", big}, 1, "larger than the limit"},
		{"context of 1M values", []string{"-log", wide}, 1, "more than the limit"},
		{"bank over the limit", []string{"-log", good, "-agents", "cover", "-agent-opts", "hidden=1024,policies=64", "-arms", "65536"}, 1, "more than the limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := runAmt(t, append([]string{"ope"}, c.args...)...)
			checkExit(t, p, c.code, c.want)
			t.Logf("exit %d, %.0f ms, peak RSS %d MiB: %s", p.code, p.elapsed.Seconds()*1000, p.maxRSS>>20, fmt.Sprintf("%.200s", p.stderr))
		})
	}
}

// TestCheckFlagErrors checks that each bad flag of amt check is named on
// its own, and that an explicit value is never silently ignored: -alpha 0
// is an error, not the configuration's level (#34, class 8).
func TestCheckFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-alpha", "0"}, "-alpha 0, want a significance level in (0, 1)"},
		{[]string{"-alpha", "1.5"}, "-alpha 1.5"},
		{[]string{"-margin", "200"}, "-margin 200, want percentage points in [0, 100]"},
		{[]string{"-budget", "-5"}, "-budget -5"},
		{[]string{"-time", "0s"}, "-time 0s"},
	} {
		p := runAmt(t, append([]string{"check", "-config", "missing.yaml"}, c.args...)...)
		checkExit(t, p, 2, c.want)
	}
}
