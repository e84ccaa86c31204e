package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runPlot(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := dispatch(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, append([]string{"plot"}, args...))
	return out.String(), errb.String(), err
}

// tinyResults copies the plots package's hand-made experiment folder.
func tinyResults(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "tiny")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "plots", "testdata", "tiny"))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestPlotDir(t *testing.T) {
	dir := tinyResults(t)
	out, _, err := runPlot(t, "-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "tiny: wrote "+filepath.Join(dir, "report.md")) {
		t.Errorf("stdout %q", out)
	}
	for _, f := range []string{"report.md", "figures/violation-rate-per-mr.png", "figures/cumulative-violations.svg", "tables/table1-effects-per-class.tex"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	first, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if _, _, err := runPlot(t, "-dir", dir, "-primary", "random"); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !bytes.Contains(second, []byte("compared with the baseline in the figures: `random`")) || bytes.Equal(first, second) {
		t.Error("-primary random did not change the report")
	}
}

func TestPlotErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give -config FILE or -dir"},
		{[]string{"-dir", filepath.Join(t.TempDir(), "nope")}, "nope"},
		{[]string{"-dir", t.TempDir()}, "holds no results"},
		{[]string{"-config", filepath.Join(t.TempDir(), "missing.yaml")}, "missing.yaml"},
		{[]string{"-dir", "x", "extra"}, "unexpected arguments"},
		{[]string{"-bogus"}, "bogus"},
	} {
		_, _, err := runPlot(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want error containing %q", tc.args, err, tc.want)
		}
	}
	dir := tinyResults(t)
	if _, _, err := runPlot(t, "-dir", dir, "-primary", "nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown primary: %v", err)
	}
}

// -config reads the results folder from the experiment's config; the
// report quotes the folder's snapshot config.yaml (what the results were
// made with), and plot says so when the file given has changed since.
func TestPlotConfig(t *testing.T) {
	cfg := filepath.Join("..", "..", "experiments", "configs", "rq1-classification.yaml")
	if _, err := os.Stat(cfg); err != nil {
		t.Fatal(err)
	}
	dir := tinyResults(t)
	_, stderr, err := runPlot(t, "-config", cfg, "-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	snapshot, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	now, _ := os.ReadFile(cfg)
	got, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !bytes.Contains(got, snapshot) || bytes.Contains(got, now) {
		t.Error("report does not quote the folder's snapshot config.yaml (or quotes the -config file)")
	}
	if !strings.Contains(stderr, cfg+" has changed since the results were made") {
		t.Errorf("no note about the changed configuration: %q", stderr)
	}
	// The snapshot is the file given: no note. (The hand-made folder has
	// no run.json to check its config.yaml against.)
	os.WriteFile(filepath.Join(dir, "config.yaml"), now, 0o644)
	if _, stderr, err := runPlot(t, "-config", cfg, "-dir", dir); err != nil || stderr != "" {
		t.Errorf("unchanged configuration: %v, stderr %q", err, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "report.md")); !bytes.Contains(got, now) {
		t.Error("report does not quote the snapshot")
	}
}
