//go:build gpu

package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/fakecuda"
	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/internal/sharedpath"
)

// TestInferDevice runs `amt infer -device cuda` through the fake CUDA
// driver (internal/fakecuda, named by $AMT_CUDA_LIB) on every shipped
// model and its golden inputs, in one batch, and compares the output file
// with `amt infer`'s on the CPU and with ONNX Runtime's outputs: every
// value within 1e-4·max(1,|want|). Short mode leaves out ResNet-56 and
// yolov3-tiny.
func TestInferDevice(t *testing.T) {
	golden := sharedpath.ForTest(t, "golden")
	assets := sharedpath.ForTest(t, "assets")
	lib := fakecuda.Lib(t, fakecuda.Default)
	fakecuda.Set(t, lib, "reset", 0)
	t.Setenv("AMT_CUDA_LIB", lib)
	cases := []struct {
		model, input, output, shape string
	}{
		{"cifar10_squeezenet1_1.onnx", "onnx/cifar10_squeezenet1_1_input.f32", "onnx/cifar10_squeezenet1_1_output.f32", "4,3,224,224"},
		{"features512_squeezenet1_1.onnx", "onnx/cifar10_squeezenet1_1_input.f32", "onnx/features512_squeezenet1_1_output.f32", "4,3,224,224"},
		{"cifar10_resnet20.onnx", "onnx/cifar10_resnet20_input.f32", "onnx/cifar10_resnet20_output.f32", "8,3,32,32"},
		{"cifar10_resnet56.onnx", "onnx/cifar10_resnet20_input.f32", "onnx/cifar10_resnet56_output.f32", "8,3,32,32"},
		{"coco_yolov3-tiny.onnx", "detection/img_802_input.f32", "detection/img_802_heads.f32", "1,3,416,416"},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			if testing.Short() && (strings.Contains(c.model, "resnet56") || strings.Contains(c.model, "yolo")) {
				t.Skip("short mode: no ResNet-56 or yolov3-tiny")
			}
			dir := t.TempDir()
			outs := map[string][]float32{}
			for _, device := range []string{"cpu", "cuda"} {
				out := filepath.Join(dir, device+".f32")
				stdout, err := runInfer(t, "-model", filepath.Join(assets, "models", c.model),
					"-input", filepath.Join(golden, c.input), "-shape", c.shape, "-out", out, "-device", device)
				if err != nil {
					t.Fatalf("-device %s: %v", device, err)
				}
				if want := "on " + device; !strings.Contains(stdout, want) {
					t.Errorf("-device %s: stdout %q does not say %q", device, stdout, want)
				}
				outs[device] = goldentest.ReadF32(t, out)
			}
			want := goldentest.ReadF32(t, filepath.Join(golden, c.output))
			for _, ref := range []struct {
				name string
				want []float32
			}{{"the CPU", outs["cpu"]}, {"ONNX Runtime", want}} {
				if err := within(outs["cuda"], ref.want, 1e-4); err != nil {
					t.Errorf("-device cuda vs %s: %v", ref.name, err)
				}
			}
		})
	}
}

// TestInferDeviceErrors runs `amt infer` on ResNet-20 with each failure
// the fake CUDA driver can inject — no driver, out of memory, a failed
// kernel — under -device cuda: a one-line error naming the cause and no
// output file; and under -device cuda,cpu: one line on stderr saying why
// the model runs on the CPU, and the CPU's output.
func TestInferDeviceErrors(t *testing.T) {
	golden := sharedpath.ForTest(t, "golden")
	assets := sharedpath.ForTest(t, "assets")
	lib := fakecuda.Lib(t, fakecuda.Default)
	fakecuda.Set(t, lib, "reset", 0)
	t.Cleanup(func() { fakecuda.Set(t, lib, "reset", 0) })
	dir := t.TempDir()
	in := filepath.Join(dir, "x.f32")
	x, err := os.ReadFile(filepath.Join(golden, "onnx", "cifar10_resnet20_input.f32"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, x[:2*3*32*32*4], 0o644); err != nil { // two images
		t.Fatal(err)
	}
	args := func(out, device string) []string {
		return []string{"infer", "-model", filepath.Join(assets, "models", "cifar10_resnet20.onnx"),
			"-input", in, "-shape", "2,3,32,32", "-out", out, "-device", device}
	}
	t.Setenv("AMT_CUDA_LIB", lib)
	cpuOut := filepath.Join(dir, "cpu.f32")
	if _, _, err := runCmd(t, args(cpuOut, "cpu")...); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(cpuOut)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, say string
		setup     func(t *testing.T)
	}{
		{"no driver", "is the NVIDIA driver installed?", func(t *testing.T) {
			t.Setenv("AMT_CUDA_LIB", filepath.Join(t.TempDir(), "libcuda.so.1"))
		}},
		{"out of memory", "CUDA_ERROR_OUT_OF_MEMORY", func(t *testing.T) { fakecuda.Set(t, lib, "mem_limit", 64<<10) }},
		{"launch failure", "CUDA_ERROR_LAUNCH_FAILED", func(t *testing.T) { fakecuda.Set(t, lib, "fail_launch", 5) }},
	} {
		for _, device := range []string{"cuda", "cuda,cpu"} {
			t.Run(c.name+"/"+device, func(t *testing.T) {
				fakecuda.Set(t, lib, "reset", 0)
				c.setup(t)
				out := filepath.Join(t.TempDir(), "y.f32")
				stdout, stderr, err := runCmd(t, args(out, device)...)
				if device == "cuda" {
					if err == nil {
						t.Fatalf("no error; stdout %q", stdout)
					}
					if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, c.say) {
						t.Errorf("error %q: want one line saying %q", msg, c.say)
					}
					if _, err := os.Stat(out); err == nil {
						t.Errorf("an output file was written despite the error")
					}
					return
				}
				if err != nil {
					t.Fatalf("%v\n%s", err, stderr)
				}
				lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
				if len(lines) != 1 || !strings.Contains(lines[0], c.say) || !strings.Contains(lines[0], "running on the CPU") {
					t.Errorf("stderr %q: want one line saying %q and that the model runs on the CPU", stderr, c.say)
				}
				if !strings.HasSuffix(strings.TrimSpace(stdout), " on cpu") {
					t.Errorf("stdout %q does not end in %q", stdout, "on cpu")
				}
				got, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Error("the output differs from -device cpu's")
				}
			})
		}
	}
}

// within checks |got-want| ≤ tol·max(1,|want|) for every value.
func within(got, want []float32, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d values, want %d", len(got), len(want))
	}
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= tol*math.Max(1, math.Abs(float64(want[i])))) {
			return fmt.Errorf("value %d: got %g, want %g", i, got[i], want[i])
		}
	}
	return nil
}
