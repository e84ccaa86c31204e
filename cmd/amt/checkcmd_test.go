package main

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/experiments/record"
)

// checkConfig writes a check configuration over the first 40 CIFAR images
// with the cheap ResNet-20, phash features and a budget of 30 follow-ups.
func checkConfig(t *testing.T, extra string) (path, out string) {
	t.Helper()
	path, out = smallConfig(t, "online", 40, "check: {budget: 30}\n"+extra)
	return path, out
}

// TestCheckExitStatus runs amt check as a process: 0 when it passes, 1
// when a condition fails, 2 for a bad configuration, an unreadable model
// or a bad flag, each error on one line of stderr. A second check
// continues the agent from the state the first saved, and says so.
func TestCheckExitStatus(t *testing.T) {
	if testing.Short() {
		t.Log("short mode: 3 checks of 30 follow-ups")
	}
	cfg, out := checkConfig(t, "")
	p := runAmt(t, "check", "-config", cfg)
	if p.code != exitPass {
		t.Fatalf("no conditions: exit status %d, want 0; stderr:\n%s", p.code, p.stderr)
	}
	c, err := record.ReadCheck(filepath.Join(out, record.CheckFile))
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != record.VerdictPass || c.Iterations != 30 || c.State == nil || c.State.Loaded {
		t.Fatalf("first check: %+v", c)
	}
	if _, err := os.Stat(c.State.Path); err != nil {
		t.Fatalf("state not saved: %v", err)
	}
	if c.Violations == 0 {
		t.Fatal("30 follow-ups of ResNet-20 and no violation: the fail case below would not fail")
	}

	// Every follow-up violating is too many: fail, exit status 1. The
	// session continues from the first check's state.
	out2 := filepath.Join(filepath.Dir(out), "second")
	p = runAmt(t, "check", "-config", cfg, "-out", out2, "-state", filepath.Dir(filepath.Dir(c.State.Path)), "-fail-rate", "0")
	if p.code != exitFail {
		t.Fatalf("-fail-rate 0: exit status %d, want 1; stderr:\n%s", p.code, p.stderr)
	}
	if !strings.Contains(p.stderr, "check failed") {
		t.Errorf("stderr %q", p.stderr)
	}
	c2, err := record.ReadCheck(filepath.Join(out2, record.CheckFile))
	if err != nil {
		t.Fatal(err)
	}
	if c2.Verdict != record.VerdictFail || !c2.State.Loaded || c2.State.Path != c.State.Path {
		t.Errorf("second check: %+v, state %+v", c2, c2.State)
	}
	sum, err := os.ReadFile(filepath.Join(out2, record.CheckSummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(sum), "# ❌ amt check small: **FAIL**") || !strings.Contains(string(sum), "Agent state: **continued** from `"+c.State.Path+"`") {
		t.Errorf("summary.md:\n%s", sum)
	}
	// junit.xml fails too.
	var suites struct {
		Failures int `xml:"failures,attr"`
	}
	b, err := os.ReadFile(filepath.Join(out2, record.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, &suites); err != nil || suites.Failures == 0 {
		t.Errorf("junit.xml: %v, %d failures", err, suites.Failures)
	}

	// Errors: exit status 2 and one line.
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	doc, _ := os.ReadFile(cfg)
	os.WriteFile(badYAML, []byte(strings.Replace(string(doc), "check: {budget: 30}", "check: {budgte: 30}", 1)), 0o644)
	badModel := filepath.Join(dir, "model.onnx")
	os.WriteFile(badModel, []byte("not a model"), 0o644)
	modelYAML := filepath.Join(dir, "model.yaml")
	os.WriteFile(modelYAML, []byte(strings.Replace(string(doc), "models/cifar10_resnet20.onnx", badModel, 1)), 0o644)
	for _, e := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", []string{"-config", badYAML}, `bad.yaml:13:9: check.budgte: unknown key; did you mean "budget"?`},
		{"unreadable model", []string{"-config", modelYAML}, "invalid model " + badModel},
		{"unknown relation", []string{"-config", cfg, "-fail-mr", "flipup=0.5"}, `"flipup" is not a relation`},
		{"bad flag", []string{"-config", cfg, "-fail-rate", "2"}, "want a rate in [0, 1]"},
		{"no baseline", []string{"-config", cfg, "-baseline", dir}, "no run.json"},
		{"budget too large", []string{"-config", cfg, "-budget", "41"}, "more than passes × images"},
	} {
		p := runAmt(t, append([]string{"check"}, e.args...)...)
		if p.code != exitError || !strings.Contains(p.stderr, e.want) || strings.Contains(p.stderr, "panic") {
			t.Errorf("%s: exit status %d, want 2; stderr %q, want %q", e.name, p.code, p.stderr, e.want)
		}
	}
}

// amt check -h documents the exit statuses.
func TestCheckHelp(t *testing.T) {
	_, stderr, err := runCmd(t, "check", "-h")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Exit status: 0 the check passed, 1 a condition failed, 2 an error", "-budget", "-baseline", "-fail-mr"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("amt check -h lacks %q:\n%s", want, stderr)
		}
	}
}

// examples/ci/amt-check.sh keeps the agent state and the last passing
// results between runs: the first check starts afresh without a baseline,
// the second continues the state and compares with the first, a failing
// third keeps the second as the baseline. The workflow beside it parses
// and runs it with the Actions cache around it.
func TestCIExample(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := checkConfig(t, "")
	cache := filepath.Join(t.TempDir(), "ci")
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "ci", "amt-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		cmd := exec.Command("sh", append([]string{script, cfg, cache}, args...)...)
		cmd.Env = append(os.Environ(), "AMT="+exe, runMainEnv+"=1", "GITHUB_STEP_SUMMARY="+filepath.Join(cache, "..", "step-summary.md"))
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	read := func(dir string) record.Check {
		t.Helper()
		c, err := record.ReadCheck(filepath.Join(cache, dir, record.CheckFile))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if code, out := run(); code != 0 {
		t.Fatalf("first run: exit status %d\n%s", code, out)
	}
	if c := read("previous"); c.State.Loaded || c.Baseline != nil {
		t.Errorf("first run: state %+v, baseline %+v", c.State, c.Baseline)
	}
	if code, out := run(); code != 0 {
		t.Fatalf("second run: exit status %d\n%s", code, out)
	}
	second := read("previous")
	if !second.State.Loaded || second.Baseline == nil || second.Baseline.Dir != filepath.Join(cache, "previous") {
		t.Errorf("second run: state %+v, baseline %+v", second.State, second.Baseline)
	}
	code, out := run("-fail-rate", "0")
	if code != 1 || !strings.Contains(out, "FAILED") {
		t.Fatalf("failing run: exit status %d\n%s", code, out)
	}
	if c := read("current"); c.Verdict != record.VerdictFail {
		t.Errorf("current: %+v", c)
	}
	if c := read("previous"); c.Verdict != record.VerdictPass || c.Iterations != second.Iterations || !c.State.Loaded || c.Baseline == nil {
		t.Errorf("a failing run replaced the baseline: %+v", c)
	}
	if b, err := os.ReadFile(filepath.Join(cache, "..", "step-summary.md")); err != nil || strings.Count(string(b), "# ") < 3 {
		t.Errorf("job summary: %v\n%s", err, b)
	}

	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string
				Run  string
				With map[string]string
			}
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "ci", "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	var uses, runs []string
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			uses, runs = append(uses, s.Uses), append(runs, s.Run)
			if strings.HasPrefix(s.Uses, "actions/cache/") && s.With["path"] != ".amt-ci" {
				t.Errorf("%s caches %q", s.Uses, s.With["path"])
			}
		}
	}
	all := strings.Join(uses, " ") + strings.Join(runs, " ")
	for _, want := range []string{"actions/cache/restore@", "actions/cache/save@", "amt-check.sh model.onnx test-images .amt-ci"} {
		if !strings.Contains(all, want) {
			t.Errorf("workflow lacks %q", want)
		}
	}
}
