//go:build gpu

package main

import (
	"fmt"
	"math"
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
