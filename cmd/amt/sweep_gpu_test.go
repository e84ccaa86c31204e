//go:build gpu

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/fakecuda"
	"github.com/amt-dev/amt/internal/sharedpath"
)

// TestSweepDevice is issue #17's acceptance sweep: the classification sweep
// of the first 20 CIFAR-10 images × 59 follow-ups with ResNet-20, once on
// the CPU and once with sut.device: cuda through the fake CUDA driver,
// gives byte-identical verdict tables; each image goes to the GPU with its
// follow-ups as one batch of 60 (one copy of the logits back per image).
// A third sweep, with sut.device: cuda,cpu and a kernel made to fail
// part-way, says so on stderr (a line per worker) and gives the same table
// (the failed batches and the images after them run on the CPU).
func TestSweepDevice(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	t.Setenv("AMT_ASSETS", assets)
	lib := fakecuda.Lib(t, fakecuda.Default)
	fakecuda.Set(t, lib, "reset", 0)
	t.Cleanup(func() { fakecuda.Set(t, lib, "reset", 0) })
	t.Setenv("AMT_CUDA_LIB", lib)
	const images = 20
	tables := map[string][]byte{}
	for _, device := range []string{"cpu", "cuda", "cuda,cpu"} {
		fakecuda.Set(t, lib, "reset", 0)
		if device == "cuda,cpu" {
			// ResNet-20 launches a few dozen kernels per batch: the
			// 300th falls a few images into the sweep.
			fakecuda.Set(t, lib, "fail_launch", 300)
		}
		dir := t.TempDir()
		out := filepath.Join(dir, "results")
		cfg := filepath.Join(dir, "sweep.yaml")
		doc := fmt.Sprintf(`name: sweep-%s
case_study: classification
mode: replay
data: {format: cifar10, path: cifar10/test_batch_first1017.bin, limit: %d}
sut: {model: models/cifar10_resnet20.onnx, input_size: 32, device: %q}
features: {kind: phash}
action_set: hierarchical
agents: [random]
seeds: 1
output: %s
cache: %s
`, device, images, device, out, filepath.Join(dir, "cache"))
		if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		d0 := fakecuda.Stat(t, lib, "dtoh_calls")
		stdout, stderr, err := runCmd(t, "sweep", "-config", cfg, "-workers", "2")
		if err != nil {
			t.Fatalf("sut.device %s: %v\n%s", device, err, stderr)
		}
		if want := fmt.Sprintf("%d images × ", images); !strings.Contains(stdout, want) {
			t.Errorf("sut.device %s: stdout %q does not say %q", device, stdout, want)
		}
		if device == "cuda" {
			// One copy per image's batch of follow-ups, and one for the
			// convention check, which classifies the first images in one
			// batch before the sweep.
			if n := fakecuda.Stat(t, lib, "dtoh_calls") - d0; n != images+1 {
				t.Errorf("%d copies from the GPU, want one per image (%d) and one for the convention check", n, images)
			}
			if strings.Contains(stderr, "CPU") {
				t.Errorf("stderr mentions the CPU: %s", stderr)
			}
		}
		if device == "cuda,cpu" {
			if fakecuda.Stat(t, lib, "dtoh_calls")-d0 == 0 {
				t.Error("no image ran on the GPU before the failure")
			}
			// The failure is sticky, as on a GPU: the context fails every
			// call after it, so each worker's model says so once.
			// (Progress lines, "sweep <name>: …", aside.)
			var lines []string
			for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
				if !strings.HasPrefix(l, "sweep sweep-") {
					lines = append(lines, l)
				}
			}
			if len(lines) == 0 || len(lines) > 2 {
				t.Errorf("stderr has %d lines, want one per worker (2 at most):\n%s", len(lines), stderr)
			}
			for _, l := range lines {
				if !strings.Contains(l, "CUDA_ERROR_LAUNCH_FAILED") || !strings.Contains(l, "running on the CPU from now on") {
					t.Errorf("stderr line %q: want it to say the launch failed and the model runs on the CPU from now on", l)
				}
			}
		}
		b, err := os.ReadFile(filepath.Join(out, "sweep.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if rows := bytes.Count(b, []byte("\n")); rows != 1+images*59 {
			t.Errorf("sut.device %s: the table has %d lines, want %d", device, rows, 1+images*59)
		}
		tables[device] = b
	}
	for _, device := range []string{"cuda", "cuda,cpu"} {
		if !bytes.Equal(tables["cpu"], tables[device]) {
			t.Errorf("the verdict tables of sut.device cpu and %s differ", device)
		}
	}
}
