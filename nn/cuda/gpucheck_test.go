//go:build gpu

package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/fakecuda"
	"github.com/amt-dev/amt/internal/sharedpath"
)

// The real-GPU acceptance check runs here on the fake driver: make
// gpu-check-build builds the amt and test binaries (-tags gpu) into a
// bundle, and gpu-check.sh runs them from it — the GPU tests, the CPU/GPU
// verdict-table comparison and the timing, narrowed to a few tests and
// images — and must pass every step. This is the part of make gpu-check
// that needs no GPU; on a machine with one the same script runs with
// AMT_GPU=1 against libcuda.so.1 (docs/gpu.md).
func TestGPUCheckScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds five binaries and runs sweeps through the fake driver")
	}
	for _, tool := range []string{"make", "go", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s: %v", tool, err)
			}
			t.Skipf("%s: %v", tool, err)
		}
	}
	assets := sharedpath.ForTest(t, "assets")
	lib := fakecuda.Lib(t, fakecuda.Default)
	fakecuda.Set(t, lib, "reset", 0)
	t.Cleanup(func() { fakecuda.Set(t, lib, "reset", 0) })
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bundle := t.TempDir()
	build := exec.Command("make", "-C", repo, "gpu-check-build", "GPU_CHECK_DIR="+bundle)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make gpu-check-build: %v\n%s", err, out)
	}
	run := exec.Command("sh", filepath.Join(repo, "nn", "cuda", "gpu-check.sh"), bundle)
	run.Env = append(os.Environ(),
		"GPU_CHECK_FAKE=1", "AMT_CUDA_LIB="+lib, "AMT_ASSETS="+assets,
		"GPU_CHECK_RUN=^(TestUnary|TestDeviceErrors|TestModelDevice|TestInferDeviceErrors)$",
		"GPU_CHECK_IMAGES=3", "GPU_CHECK_TIMING_IMAGES=2",
		"GPU_CHECK_MODEL=models/cifar10_resnet20.onnx", "GPU_CHECK_INPUT_SIZE=32")
	out, err := run.CombinedOutput()
	t.Logf("gpu-check.sh:\n%s", out)
	if err != nil {
		t.Fatalf("gpu-check.sh: %v", err)
	}
	for _, want := range []string{
		"gpu-check: tests nn/cuda: PASS", "gpu-check: tests nn: PASS", "gpu-check: tests features: PASS", "gpu-check: tests cmd/amt: PASS",
		"gpu-check: verdict table: PASS (0 of 177 rows differ", "gpu-check: timing: PASS 118 follow-ups", "tables identical", "gpu-check: PASS",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}
