package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// agentFiles lists an agent folder's files.
func agentFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestResultsCannotMix: the stale-file scenarios of runs into one results
// folder. A run with fewer seeds than the last one leaves no log of the
// earlier seeds; a sweep of another configuration into the folder makes
// amt plot refuse it, naming the file of the other run; the run of that
// configuration then removes the agent it no longer has and an online
// run the sweep table of another run, and the folder plots again.
func TestResultsCannotMix(t *testing.T) {
	cfg, out := smallConfig(t, "replay", 3, "")
	doc, _ := os.ReadFile(cfg)
	setConfig := func(path string, old, new string) {
		t.Helper()
		s := string(doc)
		for _, r := range strings.Split(old, "|") {
			if !strings.Contains(s, r) {
				t.Fatalf("%q not in the config", r)
			}
		}
		olds, news := strings.Split(old, "|"), strings.Split(new, "|")
		for i := range olds {
			s = strings.Replace(s, olds[i], news[i], 1)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, string) {
		t.Helper()
		stdout, stderr, err := runCmd(t, args...)
		if err != nil {
			t.Fatalf("amt %s: %v", strings.Join(args, " "), err)
		}
		return stdout, stderr
	}

	// Ten seeds, then three.
	setConfig(cfg, "seeds: 1-2", "seeds: 1-10")
	run("run", "-config", cfg)
	if n := len(agentFiles(t, filepath.Join(out, "cover"))); n != 12 {
		t.Fatalf("10 seeds: %d files", n)
	}
	setConfig(cfg, "seeds: 1-2", "seeds: 1-3")
	run("run", "-config", cfg)
	want := []string{"seed-1.jsonl", "seed-2.jsonl", "seed-3.jsonl", "summary.json", "timing.json"}
	for _, agent := range []string{"cover", "random"} {
		if got := agentFiles(t, filepath.Join(out, agent)); !slices.Equal(got, want) {
			t.Errorf("%s after a run of 3 seeds: %v", agent, got)
		}
		s, err := record.ReadSummary(filepath.Join(out, agent, record.SummaryFile))
		if err != nil || len(s.Runs) != 3 || len(s.Logs) != 3 || s.Identity.IsZero() {
			t.Errorf("%s summary: %v, %d runs, logs %v, identity %v", agent, err, len(s.Runs), s.Logs, s.Identity)
		}
	}
	run("plot", "-dir", out)
	report, _ := os.ReadFile(filepath.Join(out, record.ReportFile))
	if !strings.Contains(string(report), "seeds: 1-3") || strings.Contains(string(report), "seeds: 1-10") {
		t.Error("the report does not quote the configuration of the last run")
	}

	// A second configuration into the same folder: another data limit,
	// one agent. Its sweep alone leaves the agents of the first.
	other := filepath.Join(filepath.Dir(cfg), "other.yaml")
	setConfig(other, "limit: 3|agents: [cover, random]", "limit: 2|agents: [cover]")
	run("sweep", "-config", other)
	_, _, err := runCmd(t, "plot", "-dir", out)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(out, "cover", record.SummaryFile)+" belongs to another run") ||
		strings.Contains(err.Error(), "\n") {
		t.Fatalf("plot of a folder mixing two configurations: %v", err)
	}
	// Its run replaces cover and removes random.
	_, stderr := run("run", "-config", other)
	if !strings.Contains(stderr, "removed "+filepath.Join(out, "random")+", an earlier run's") {
		t.Errorf("no line about the removed agent folder:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "random")); !os.IsNotExist(err) {
		t.Errorf("random is still there: %v", err)
	}
	run("plot", "-dir", out)

	// An online run of yet another configuration: the sweep table of the
	// previous run goes (it is not this run's baseline).
	online := filepath.Join(filepath.Dir(cfg), "online.yaml")
	setConfig(online, "mode: replay|limit: 3", "mode: online|limit: 2")
	run("run", "-config", online)
	if _, err := os.Stat(filepath.Join(out, record.VerdictsFile)); !os.IsNotExist(err) {
		t.Errorf("the sweep table of another run is still there: %v", err)
	}
	run("plot", "-dir", out)
	// Its own sweep table, made after the run, is kept by the next run.
	run("sweep", "-config", online)
	run("run", "-config", online)
	if _, err := os.Stat(filepath.Join(out, record.VerdictsFile)); err != nil {
		t.Errorf("the run's own sweep table was removed: %v", err)
	}
	run("plot", "-dir", out)
}

// TestReplaysPlotTogether: amt replay of two agents on one table into
// sibling folders gives one run (they plot together); a replay with other
// seeds into one of them makes amt plot refuse the folder, naming it.
func TestReplaysPlotTogether(t *testing.T) {
	table, feats, _, _ := replayFixture(t, 12)
	out := filepath.Join(t.TempDir(), "x")
	replay := func(agent, seeds string) {
		t.Helper()
		if _, _, err := runCmd(t, "replay", "-verdicts", table, "-features", feats, "-agent", agent, "-seeds", seeds,
			"-out", filepath.Join(out, agent)); err != nil {
			t.Fatal(err)
		}
	}
	replay("cover", "1-3")
	replay("random", "1-3")
	if _, _, err := runCmd(t, "plot", "-dir", out); err != nil {
		t.Fatalf("two agents replayed on one table: %v", err)
	}
	replay("random", "1-2")
	_, _, err := runCmd(t, "plot", "-dir", out)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(out, "random", record.SummaryFile)+" belongs to another run") {
		t.Fatalf("agents replayed with other seeds: %v", err)
	}
}
