//go:build gpu

package features

import (
	"math"
	"testing"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/fakecuda"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/nn/cuda"
)

// TestModelDevice extracts the features of two CIFAR-10 images with the
// default model on the fake GPU (ModelOptions.Load) and on the CPU: every
// feature within 1e-4·max(1,|cpu|).
func TestModelDevice(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	t.Setenv(data.AssetsEnvVar, assets)
	path, err := DefaultModelPath()
	if err != nil {
		t.Fatal(err)
	}
	lib := fakecuda.Lib(t, fakecuda.Default)
	fakecuda.Set(t, lib, "reset", 0)
	cpu, err := LoadModel(path, ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := LoadModel(path, ModelOptions{Load: nn.LoadOptions{Device: "cuda", CUDA: cuda.Config{Lib: lib}}})
	if err != nil {
		t.Fatal(err)
	}
	if gpu.Device() == "cpu" {
		t.Fatal("the model runs on the CPU")
	}
	imgs := cifarImages(t, 2)
	want, err := cpu.Extract(imgs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.Extract(imgs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		for k := range want[i] {
			if d := math.Abs(float64(got[i][k] - want[i][k])); d > 1e-4*math.Max(1, math.Abs(float64(want[i][k]))) {
				t.Fatalf("image %d feature %d: %g on the GPU, %g on the CPU", i, k, got[i][k], want[i][k])
			}
		}
	}
}
