package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// amt's exit statuses: 0 success, 1 failure, 2 usage or configuration
// error, whatever the command.
func TestExitCodes(t *testing.T) {
	cfg, _ := smallConfig(t, "replay", 4, "")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: x\ncase_studdy: classification\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"version"}, 0},
		{[]string{"help"}, 0},
		{[]string{"sweep", "-h"}, 0},
		{nil, 2},
		{[]string{"nope"}, 2},
		{[]string{"version", "x"}, 2},
		{[]string{"sweep"}, 2},
		{[]string{"sweep", "-config", cfg, "-bogus"}, 2},
		{[]string{"sweep", "-config", cfg, "-shard", "4/4"}, 2},
		{[]string{"sweep", "-config", cfg, "-shard", "0/4", "-csv", "x.csv"}, 2},
		{[]string{"run", "-config", cfg, "-shard", "0/4", "-merge"}, 2},
		{[]string{"sweep", "-config", bad}, 2},
		{[]string{"sweep", "-config", filepath.Join(t.TempDir(), "missing.yaml")}, 2},
		{[]string{"replay", "-verdicts", "v.csv", "-features", "f.f32", "-scenario", "basic", "-agent", "cover", "-seeds", "1", "-out", t.TempDir(), "-passes", "0"}, 2},
		{[]string{"slurm", "-config", cfg}, 2},
		{[]string{"slurm", "-config", cfg, "-shards", "5"}, 2}, // more shards than images
		{[]string{"sweep", "-config", cfg, "-merge"}, 1},       // nothing to merge
		{[]string{"plot", "-dir", t.TempDir()}, 1},
	} {
		_, stderr, err := runCmd(t, tc.args...)
		if got := exitCode(err); got != tc.want {
			t.Errorf("amt %s: exit status %d, want %d (err %v, stderr %q)", strings.Join(tc.args, " "), got, tc.want, err, stderr)
		}
	}
}

// amt sweep -shard K/N in any order, then -merge, gives the table of a
// single-process sweep; a merge before every shard is done names the
// missing ones.
func TestSweepShardCommands(t *testing.T) {
	n := 14
	ref, refOut := smallConfig(t, "replay", n, "")
	refDir := filepath.Dir(ref)
	if _, _, err := runCmd(t, "sweep", "-config", ref, "-csv", filepath.Join(refDir, "t.csv"), "-features", filepath.Join(refDir, "f.f32")); err != nil {
		t.Fatal(err)
	}
	cfg, out := smallConfig(t, "replay", n, "")
	dir := filepath.Dir(cfg)
	for _, k := range []string{"2/3", "0/3"} {
		stdout, _, err := runCmd(t, "sweep", "-config", cfg, "-shard", k)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout, "small: sweep shard "+k+": ") || !strings.Contains(stdout, " cached, ") {
			t.Errorf("stdout %q", stdout)
		}
	}
	_, _, err := runCmd(t, "sweep", "-config", cfg, "-merge")
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "shard 1/3 is missing") || !strings.Contains(err.Error(), "(5 of 14 images)") {
		t.Fatalf("merge without shard 1/3: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "sweep.csv")); err == nil {
		t.Fatal("a failed merge wrote sweep.csv")
	}
	if _, _, err := runCmd(t, "sweep", "-config", cfg, "-shard", "1/3"); err != nil {
		t.Fatal(err)
	}
	// Rerunning a finished shard computes nothing.
	stdout, _, err := runCmd(t, "sweep", "-config", cfg, "-shard", "1/3")
	if err != nil || !strings.Contains(stdout, "5 images (5 cached, 0 computed)") {
		t.Fatalf("rerun of shard 1/3: %v, %q", err, stdout)
	}
	if _, _, err := runCmd(t, "sweep", "-config", cfg, "-merge", "-csv", filepath.Join(dir, "t.csv"), "-features", filepath.Join(dir, "f.f32")); err != nil {
		t.Fatal(err)
	}
	for _, f := range [][2]string{{filepath.Join(refOut, "sweep.csv"), filepath.Join(out, "sweep.csv")},
		{filepath.Join(refDir, "t.csv"), filepath.Join(dir, "t.csv")}, {filepath.Join(refDir, "f.f32"), filepath.Join(dir, "f.f32")}} {
		a, err1 := os.ReadFile(f[0])
		b, err2 := os.ReadFile(f[1])
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Errorf("%s differs from the single-process sweep's (%v, %v)", filepath.Base(f[1]), err1, err2)
		}
	}
}

// amt run -shard K/N over the seeds, then -merge, gives the results of an
// unsharded run (but the measured times).
func TestRunShardCommands(t *testing.T) {
	ref, refOut := smallConfig(t, "online", 6, "timing: false\n")
	if _, _, err := runCmd(t, "run", "-config", ref); err != nil {
		t.Fatal(err)
	}
	cfg, out := smallConfig(t, "online", 6, "timing: false\n")
	for _, k := range []string{"1/2", "0/2"} {
		stdout, stderr, err := runCmd(t, "run", "-config", cfg, "-shard", k)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout, "small: run shard "+k+": 1 seed (0 cached, 1 run)") || !strings.Contains(stderr, "agents cover, random, online mode") {
			t.Errorf("stdout %q, stderr %q", stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "cover", "summary.json")); err == nil {
		t.Fatal("shards wrote summary.json before the merge")
	}
	_, stderr, err := runCmd(t, "run", "-config", cfg, "-merge")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "small: agent cover: ") {
		t.Errorf("merge stderr %q", stderr)
	}
	var files []string
	filepath.WalkDir(refOut, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(p) != "timing.json" {
			files = append(files, p[len(refOut):])
		}
		return nil
	})
	if len(files) < 7 { // run.json, config.yaml, 2 × (summary + 2 logs)
		t.Fatalf("reference results: %v", files)
	}
	for _, f := range files {
		a, _ := os.ReadFile(refOut + f)
		b, err := os.ReadFile(out + f)
		if f == "/config.yaml" { // the config names its own output and cache
			continue
		}
		// So the run identities (the config's sha256, the sweep's tables)
		// differ; amt plot checks below that the merged ones agree.
		if err != nil || withoutIdentity(a) != withoutIdentity(b) {
			t.Errorf("%s differs from the unsharded run's (%v)", f, err)
		}
	}
	if _, _, err := runCmd(t, "plot", "-dir", out); err != nil {
		t.Errorf("amt plot of the merged results: %v", err)
	}
	for _, agent := range []string{"cover", "random"} {
		if _, err := os.Stat(filepath.Join(out, agent, "timing.json")); err != nil {
			t.Error(err)
		}
	}
	// The merge can be repeated (a retried merge job); a shard of a
	// finished split runs nothing.
	if _, _, err := runCmd(t, "run", "-config", cfg, "-merge"); err != nil {
		t.Fatalf("second merge: %v", err)
	}
	if stdout, _, err := runCmd(t, "run", "-config", cfg, "-shard", "0/2"); err != nil || !strings.Contains(stdout, "(1 cached, 0 run)") {
		t.Fatalf("shard after the merge: %v, %q", err, stdout)
	}
}

func TestSbatchDirectives(t *testing.T) {
	got, err := sbatchDirectives([]string{"--partition=short", "-t", "1:00:00", "--exclusive", "--comment", "a b"})
	want := []string{"--partition=short", "-t 1:00:00", "--exclusive", "--comment a b"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"short"}, `unexpected argument "short": sbatch options start with -`},
		{[]string{"--array=0-3"}, "sets the array and the dependency itself"},
		{[]string{"-d", "afterok:3"}, "sets the array and the dependency itself"},
		{[]string{"--comment=a\nb"}, "a line break"},
	} {
		if _, err := sbatchDirectives(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// amt slurm writes a job script that bash reads, with the shard step and
// the merge step, the paths made absolute and the sbatch options given.
func TestSlurmScript(t *testing.T) {
	cfg, _ := smallConfig(t, "replay", 8, "")
	dir := filepath.Join(t.TempDir(), "jobs dir")
	stdout, _, err := runCmd(t, "slurm", "-config", cfg, "-shards", "4", "-dir", dir, "-amt", "/opt/amt/bin/amt", "--", "--partition=short", "-t", "10")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "small.sbatch")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	if !strings.Contains(stdout, "job script "+path+" (4 shards of the sweep)") || !strings.Contains(stdout, "jid=$(sbatch --parsable --array=0-3") {
		t.Errorf("stdout %q", stdout)
	}
	for _, want := range []string{
		"#!/bin/bash\n",
		"#SBATCH --job-name=amt-small\n#SBATCH --partition=short\n#SBATCH -t 10\nset -euo pipefail\n",
		"amt=/opt/amt/bin/amt\n",
		"config=" + shellQuote(cfg) + "\n",
		"export AMT_ASSETS=" + shellQuote(os.Getenv("AMT_ASSETS")) + "\n",
		"shards=4\n",
		`exec "$amt" sweep -config "$config" -shard "$SLURM_ARRAY_TASK_ID/$shards"`,
		"fi\n\"$amt\" sweep -config \"$config\" -merge\n\"$amt\" run -config \"$config\"\n\"$amt\" plot -config \"$config\"\n",
		`#  sbatch --parsable --dependency=afterok:"${jid%%;*}" '--output=` + dir + `/small-%j-merge.out' '` + path + "'\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the script lacks %q:\n%s", want, script)
		}
	}
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v: %s", err, out)
	}
	// Online mode shards the seeds.
	on, _ := smallConfig(t, "online", 8, "")
	if _, _, err := runCmd(t, "slurm", "-config", on, "-shards", "2", "-dir", dir); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if s := string(b); !strings.Contains(s, `exec "$amt" run -config "$config" -shard "$SLURM_ARRAY_TASK_ID/$shards"`) ||
		!strings.Contains(s, "fi\n\"$amt\" run -config \"$config\" -merge\n\"$amt\" plot") || strings.Contains(s, "sweep -config") {
		t.Errorf("online script:\n%s", s)
	}
	if _, _, err := runCmd(t, "slurm", "-config", on, "-shards", "3", "-dir", dir); err == nil || !strings.Contains(err.Error(), "-shards 3 is more than the 2 seeds") {
		t.Errorf("3 shards of 2 seeds: %v", err)
	}
	// Without sbatch, -submit says what to do.
	t.Setenv("PATH", t.TempDir())
	if _, _, err := runCmd(t, "slurm", "-config", cfg, "-shards", "2", "-dir", dir, "-submit"); err == nil || !strings.Contains(err.Error(), "sbatch not found") {
		t.Errorf("-submit without sbatch: %v", err)
	}
}

// withoutIdentity returns a result file's text without the lines of its
// run identity (record.Identity's config_sha256 and sweep_key).
func withoutIdentity(b []byte) string {
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `"config_sha256":`) && !strings.Contains(l, `"sweep_key":`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
