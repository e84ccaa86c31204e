package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/internal/slurmtest"
)

// clusterConfig writes into dir a config over the first n CIFAR images
// with the hierarchical scenario (59 follow-ups per image, so that a shard
// takes a second or two), ResNet-20 and pHash features, and returns it
// with its results and cache folders.
func clusterConfig(t *testing.T, dir string, n int) (cfg, out, cache string) {
	t.Helper()
	t.Setenv("AMT_ASSETS", sharedpath.ForTest(t, "assets"))
	out, cache = filepath.Join(dir, "results"), filepath.Join(dir, "cache")
	doc := fmt.Sprintf(`name: small
case_study: classification
mode: replay
data: {format: cifar10, path: cifar10/test_batch_first1017.bin, limit: %d}
sut: {model: models/cifar10_resnet20.onnx, input_size: 32}
features: {kind: phash}
action_set: hierarchical
agents: [cover, random]
seeds: 1-2
output: %s
cache: %s
`, n, out, cache)
	cfg = filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, out, cache
}

var submitted = regexp.MustCompile(`array job (\S+) \(4 sweep shards\), merge job (\S+) `)

// amt slurm on a real one-node Slurm cluster: the array job of 4 sweep
// shards, then the merge, the agents and the figures, give the table of a
// local single-process sweep; a shard killed in the middle of its work,
// resubmitted, is the only one that computes again, and only what it had
// not finished.
func TestSlurmCluster(t *testing.T) {
	start := time.Now()
	cl := slurmtest.Start(t)
	t.Logf("cluster up in %v", time.Since(start).Round(time.Millisecond))
	t.Setenv("SLURM_CONF", cl.Conf) // for the sbatch that amt slurm -submit runs
	t.Setenv(runMainEnv, "1")       // the jobs run this test binary as amt
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const n = 48 // 12 images per shard
	refCfg, refOut, _ := clusterConfig(t, t.TempDir(), n)
	if _, _, err := runCmd(t, "sweep", "-config", refCfg); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(refOut, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	submit := func(cfg, dir string) (array, merge string) {
		t.Helper()
		stdout, _, err := runCmd(t, "slurm", "-config", cfg, "-shards", "4", "-dir", dir, "-amt", exe, "-submit")
		m := submitted.FindStringSubmatch(stdout)
		if err != nil || m == nil {
			t.Fatalf("amt slurm -submit: %v, %q", err, stdout)
		}
		return m[1], m[2]
	}
	logs := func(dir string) string {
		files, _ := filepath.Glob(filepath.Join(dir, "*.out"))
		var b strings.Builder
		for _, f := range files {
			c, _ := os.ReadFile(f)
			fmt.Fprintf(&b, "--- %s\n%s", filepath.Base(f), c)
		}
		return b.String()
	}
	wait := func(dir string, ids ...string) {
		t.Helper()
		if err := cl.Wait(5*time.Minute, ids...); err != nil {
			t.Fatalf("%v\n%s", err, logs(dir))
		}
	}

	// The whole job.
	t0 := time.Now()
	work := t.TempDir()
	cfg, out, _ := clusterConfig(t, work, n)
	jobs := filepath.Join(work, "slurm")
	array, merge := submit(cfg, jobs)
	wait(jobs, array, merge)
	got, err := os.ReadFile(filepath.Join(out, "sweep.csv"))
	if err != nil || string(got) != string(want) {
		t.Fatalf("the merged sweep.csv differs from a local sweep's (%v)\n%s", err, logs(jobs))
	}
	for _, f := range []string{"cover/summary.json", "random/seed-2.jsonl", "report.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the merge job's run and plot: %v", err)
		}
	}
	t.Logf("4 shards, merge, run and plot on Slurm in %v", time.Since(t0).Round(time.Millisecond))

	// Shard 2 killed after its first images.
	t0 = time.Now()
	work = t.TempDir()
	cfg, out, cache := clusterConfig(t, work, n)
	jobs = filepath.Join(work, "slurm")
	array, merge = submit(cfg, jobs)
	// checkpointed counts shard 2's images whose verdict and features
	// both have a complete line in its checkpoint files: the images a
	// resumed run finds cached (one killed between its two lines has its
	// verdict reused but counts as computed).
	checkpointed := func() int {
		images := func(ns string) map[int]bool {
			seen := map[int]bool{}
			parts, _ := filepath.Glob(filepath.Join(cache, ns+"-*", "part-2of4-*.jsonl"))
			for _, p := range parts {
				b, _ := os.ReadFile(p)
				for _, line := range strings.SplitAfter(string(b), "\n") {
					var row struct {
						Image *int `json:"image"`
					}
					if strings.HasSuffix(line, "\n") && json.Unmarshal([]byte(line), &row) == nil && row.Image != nil {
						seen[*row.Image] = true
					}
				}
			}
			return seen
		}
		verdicts, features := images("verdicts"), images("features")
		n := 0
		for i := range verdicts {
			if features[i] {
				n++
			}
		}
		return n
	}
	killed := false
	for deadline := time.Now().Add(5 * time.Minute); !killed && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if checkpointed() == 0 {
			continue
		}
		for _, pid := range slurmtest.PIDs("sweep", "-config", cfg, "-shard", "2/4") {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = true
			}
		}
	}
	if !killed {
		t.Fatalf("shard 2/4 never ran\n%s", logs(jobs))
	}
	wait(jobs, array, merge) // the merge is cancelled: its dependency failed
	vdirs, _ := filepath.Glob(filepath.Join(cache, "verdicts-*"))
	if len(vdirs) != 1 {
		t.Fatalf("verdict caches: %v", vdirs)
	}
	done := checkpointed()
	if _, err := os.Stat(filepath.Join(vdirs[0], "shard-2of4.jsonl")); err == nil || done >= 12 {
		t.Fatalf("shard 2/4 finished (%d images checkpointed) before it was killed", done)
	}
	if _, err := os.Stat(filepath.Join(out, "sweep.csv")); err == nil {
		t.Fatal("the merge ran although a shard failed")
	}
	before := map[int]os.FileInfo{}
	for _, k := range []int{0, 1, 3} {
		if before[k], err = os.Stat(filepath.Join(vdirs[0], fmt.Sprintf("shard-%dof4.jsonl", k))); err != nil {
			t.Fatalf("shard %d/4: %v\n%s", k, err, logs(jobs))
		}
	}

	// Resubmitted: only shard 2 computes, only its missing images.
	array, merge = submit(cfg, jobs)
	wait(jobs, array, merge)
	for k := 0; k < 4; k++ {
		b, err := os.ReadFile(filepath.Join(jobs, fmt.Sprintf("small-%s_%d.out", array, k)))
		want := "12 images (12 cached, 0 computed)"
		if k == 2 {
			want = fmt.Sprintf("12 images (%d cached, %d computed)", done, 12-done)
		}
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("resubmitted shard %d/4: want %q in its log (%v):\n%s", k, want, err, b)
		}
		if k == 2 {
			continue
		}
		if after, err := os.Stat(filepath.Join(vdirs[0], fmt.Sprintf("shard-%dof4.jsonl", k))); err != nil || !os.SameFile(before[k], after) {
			t.Errorf("shard %d/4's file was rewritten (%v)", k, err)
		}
	}
	got, err = os.ReadFile(filepath.Join(out, "sweep.csv"))
	if err != nil || string(got) != string(want) {
		t.Fatalf("after the resubmission, sweep.csv differs from a local sweep's (%v)\n%s", err, logs(jobs))
	}
	t.Logf("shard 2/4 killed after %d of 12 images, resubmitted: %v; whole test %v", done, time.Since(t0).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
