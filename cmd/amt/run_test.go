package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/sharedpath"
)

// smallConfig writes a config over the first n CIFAR images with the cheap
// ResNet-20 and no context features.
func smallConfig(t *testing.T, mode string, n int, extra string) (path, out string) {
	t.Helper()
	assets := sharedpath.ForTest(t, "assets")
	t.Setenv("AMT_ASSETS", assets)
	dir := t.TempDir()
	out = filepath.Join(dir, "results")
	doc := fmt.Sprintf(`name: small
case_study: classification
mode: %s
data: {format: cifar10, path: cifar10/test_batch_first1017.bin, limit: %d}
sut: {model: models/cifar10_resnet20.onnx, input_size: 32}
features: {kind: phash}
action_set: basic
agents: [cover, random]
seeds: 1-2
log_interval: 1
output: %s
cache: %s
%s`, mode, n, out, filepath.Join(dir, "cache"), extra)
	path = filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, out
}

func TestSweepAndRunCommands(t *testing.T) {
	cfg, out := smallConfig(t, "replay", 3, "")
	dir := filepath.Dir(cfg)
	csvPath, featPath := filepath.Join(dir, "t.csv"), filepath.Join(dir, "f.f32")
	stdout, _, err := runCmd(t, "sweep", "-config", cfg, "-csv", csvPath, "-features", featPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "small: 3 images × 9 follow-ups") {
		t.Errorf("stdout %q", stdout)
	}
	rows, err := record.ReadVerdictsCSV(csvPath)
	if err != nil || len(rows) != 27 || rows[0].Label != 3 {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	b, _ := os.ReadFile(filepath.Join(out, "sweep.csv"))
	c, _ := os.ReadFile(csvPath)
	if string(b) != string(c) {
		t.Error("-csv and results/sweep.csv differ")
	}
	if st, err := os.Stat(featPath); err != nil || st.Size() != 3*256*4 {
		t.Fatalf("features: %v", err)
	}
	if _, _, err := runCmd(t, "run", "-config", cfg); err != nil {
		t.Fatal(err)
	}
	replayed, err := record.ReadSummary(filepath.Join(out, "cover", "summary.json"))
	if err != nil || len(replayed.Runs) != 2 || replayed.Runs[0].Iterations != 3 || replayed.Mode != "replay" {
		t.Fatalf("summary: %v %+v", err, replayed)
	}
	// The same agent through amt replay on the exported files gives the
	// same runs.
	rdir := filepath.Join(dir, "replay")
	if _, _, err := runCmd(t, "replay", "-verdicts", csvPath, "-features", featPath, "-scenario", "basic", "-agent", "cover",
		"-seeds", "1-2", "-log-interval", "1", "-out", rdir); err != nil {
		t.Fatal(err)
	}
	viaCLI, err := record.ReadSummary(filepath.Join(rdir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range viaCLI.Runs {
		a, b := viaCLI.Runs[i], replayed.Runs[i]
		if a.Violations != b.Violations || fmt.Sprint(a.Arms) != fmt.Sprint(b.Arms) {
			t.Errorf("seed %d: amt replay %+v, amt run %+v", a.Seed, a, b)
		}
	}
	// Online mode with the same seeds makes the same choices.
	cfgOnline, outOnline := smallConfig(t, "online", 3, "")
	if _, _, err := runCmd(t, "run", "-config", cfgOnline); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"cover", "random"} {
		for _, f := range []string{"seed-1.jsonl", "seed-2.jsonl"} {
			b1, err1 := os.ReadFile(filepath.Join(out, agent, f))
			b2, err2 := os.ReadFile(filepath.Join(outOnline, agent, f))
			if err1 != nil || err2 != nil || string(b1) != string(b2) {
				t.Errorf("%s/%s: online and replay logs differ (%v %v)\n%s\n%s", agent, f, err1, err2, b1, b2)
			}
		}
	}
	online, err := record.ReadSummary(filepath.Join(outOnline, "cover", "summary.json"))
	if err != nil || online.Mode != "online" || online.MeanDecisionUS <= 0 || online.Runs[0].MeanIterationMS <= 0 {
		t.Errorf("online summary (timing on by default): %v %+v", err, online)
	}
}

func TestRunCommandErrors(t *testing.T) {
	cfg, _ := smallConfig(t, "replay", 3, "passes: 1\n")
	b, _ := os.ReadFile(cfg)
	for _, tc := range []struct{ old, new, want string }{
		{"passes: 1", "pases: 1", `small.yaml:13:1: pases: unknown key; did you mean "passes"?`},
		{"agents: [cover, random]", "agents: [cover, randm]", `small.yaml:8:17: agents[1].name: unknown agent "randm"`},
		{"cifar10_resnet20.onnx", "cifar10_resnet21.onnx", `small.yaml:5:14: sut.model: file "models/cifar10_resnet21.onnx" not found`},
		{"input_size: 32", "input_size: 224", `small.yaml:5:56: sut.input_size: the model cifar10_resnet20.onnx takes 32×32 (width×height) images, but the config says 224×224`},
	} {
		p := filepath.Join(t.TempDir(), "small.yaml")
		os.WriteFile(p, []byte(strings.Replace(string(b), tc.old, tc.new, 1)), 0o644)
		for _, cmd := range []string{"run", "sweep"} {
			_, _, err := runCmd(t, cmd, "-config", p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s with %s: got %v\nwant %q", cmd, tc.new, err, tc.want)
			}
		}
	}
	if _, _, err := runCmd(t, "run"); err == nil || !strings.Contains(err.Error(), "-config") {
		t.Errorf("no config: %v", err)
	}
}

// With the grey-box block (features.kind [phash, sut]), amt run in replay
// and online mode and amt replay on the exported files give the same
// runs of hts.
func TestSutFeaturesEndToEnd(t *testing.T) {
	sutConfig := func(mode string) (string, string) {
		cfg, out := smallConfig(t, mode, 12, "")
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		doc := strings.Replace(string(b), "features: {kind: phash}", "features: {kind: [phash, sut]}", 1)
		doc = strings.Replace(doc, "agents: [cover, random]", "agents: [hts]", 1)
		if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return cfg, out
	}
	cfg, out := sutConfig("replay")
	dir := filepath.Dir(cfg)
	csvPath, featPath, sutPath := filepath.Join(dir, "t.csv"), filepath.Join(dir, "f.f32"), filepath.Join(dir, "s.f32")
	if _, _, err := runCmd(t, "sweep", "-config", cfg, "-csv", csvPath, "-features", featPath, "-sut-features", sutPath); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(sutPath); err != nil || st.Size() != 12*11*4 {
		t.Fatalf("sut features: %v", err)
	}
	if _, _, err := runCmd(t, "run", "-config", cfg); err != nil {
		t.Fatal(err)
	}
	cfgOnline, outOnline := sutConfig("online")
	if _, _, err := runCmd(t, "run", "-config", cfgOnline); err != nil {
		t.Fatal(err)
	}
	rdir := filepath.Join(dir, "replay")
	if _, _, err := runCmd(t, "replay", "-verdicts", csvPath, "-features", featPath, "-sut-features", sutPath, "-scenario", "basic",
		"-agent", "hts", "-seeds", "1-2", "-log-interval", "1", "-out", rdir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"seed-1.jsonl", "seed-2.jsonl"} {
		b1, err1 := os.ReadFile(filepath.Join(out, "hts", f))
		b2, err2 := os.ReadFile(filepath.Join(outOnline, "hts", f))
		b3, err3 := os.ReadFile(filepath.Join(rdir, f))
		if err1 != nil || err2 != nil || err3 != nil || string(b1) != string(b2) || string(b1) != string(b3) {
			t.Errorf("%s: replay, online and amt replay logs differ (%v %v %v)\n%s\n%s\n%s", f, err1, err2, err3, b1, b2, b3)
		}
	}
	m, err := record.ReadMeta(filepath.Join(out, record.MetaFile))
	if err != nil || m.Features.Kind != "phash+sut" {
		t.Errorf("run.json features %+v, %v", m.Features, err)
	}
}

// TestRunProgressLines: with its output going to a file or pipe, amt run
// writes plain progress lines: the sweep's start (with what was cached)
// and end, and each agent's.
func TestRunProgressLines(t *testing.T) {
	cfg, out := smallConfig(t, "replay", 3, "")
	_, stderr, err := runCmd(t, "run", "-config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"sweep small: 3 images, 0 cached, 3 to go\n",
		"sweep small: 3/3 images (100.0%) in ",
		"agent cover: 6 iterations to go\n",
		"agent cover: 6/6 iterations (100.0%) in ",
		"agent random: 6 iterations to go\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Run again: its results are there, up to date, and it says so.
	_, stderr, err = runCmd(t, "run", "-config", cfg)
	if err != nil || !strings.Contains(stderr, "small: the results in "+out+" are up to date") || strings.Contains(stderr, "sweep small") {
		t.Errorf("up-to-date run: %v\n%s", err, stderr)
	}
	// Without the run stamp it runs again: the sweep is cached, and says so.
	if err := os.Remove(filepath.Join(out, record.RunStampFile)); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = runCmd(t, "run", "-config", cfg)
	if err != nil || !strings.Contains(stderr, "sweep small: 3 images, 3 cached, 0 to go\n") || strings.Contains(stderr, "sweep small: 3/3") {
		t.Errorf("cached run: %v\n%s", err, stderr)
	}
}
