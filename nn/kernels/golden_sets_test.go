package kernels_test

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/nn/kernels"
)

// TestGoldenModelsPerKernelSet runs the shipped models with every kernel
// set and compares their outputs with ONNX Runtime's (the goldens of
// nn.TestGoldenModels, |got-want| ≤ 1e-4·max(1,|want|)): the first golden
// image of each model at batch 1, and in full mode every golden image and
// ResNet-56 too. A set this CPU cannot run is a skipped subtest naming
// what it needs.
func TestGoldenModelsPerKernelSet(t *testing.T) {
	golden := sharedpath.ForTest(t, "golden")
	assets := sharedpath.ForTest(t, "assets")
	cases := []struct {
		name, model, input, output string
		images                     int
		chw                        []int
		full                       bool // full mode only
	}{
		{"squeezenet", "cifar10_squeezenet1_1.onnx", "onnx/cifar10_squeezenet1_1_input.f32", "onnx/cifar10_squeezenet1_1_output.f32", 4, []int{3, 224, 224}, false},
		{"features512", "features512_squeezenet1_1.onnx", "onnx/cifar10_squeezenet1_1_input.f32", "onnx/features512_squeezenet1_1_output.f32", 4, []int{3, 224, 224}, false},
		{"resnet20", "cifar10_resnet20.onnx", "onnx/cifar10_resnet20_input.f32", "onnx/cifar10_resnet20_output.f32", 8, []int{3, 32, 32}, false},
		{"resnet56", "cifar10_resnet56.onnx", "onnx/cifar10_resnet20_input.f32", "onnx/cifar10_resnet56_output.f32", 8, []int{3, 32, 32}, true},
		{"yolov3tiny/802", "coco_yolov3-tiny.onnx", "detection/img_802_input.f32", "detection/img_802_heads.f32", 1, []int{3, 416, 416}, false},
		{"yolov3tiny/92660", "coco_yolov3-tiny.onnx", "detection/img_92660_input.f32", "detection/img_92660_heads.f32", 1, []int{3, 416, 416}, true},
	}
	prev := kernels.KernelSet()
	if prev == "reference" {
		t.Skip("refkernels build: the naive implementation replaces every kernel set (nn's golden tests check it)")
	}
	defer func() {
		if err := kernels.Use(prev); err != nil {
			t.Fatal(err)
		}
	}()
	for _, set := range kernels.KernelSets() {
		t.Run(set.Name, func(t *testing.T) {
			if !set.Available {
				t.Skipf("kernel set %s not available here: %s", set.Name, set.Reason)
			}
			if err := kernels.Use(set.Name); err != nil {
				t.Fatal(err)
			}
			defer kernels.Use(prev)
			models := map[string]*nn.Model{} // loaded with this set: a Conv keeps the set it was prepared with
			for _, c := range cases {
				if c.full && testing.Short() {
					continue
				}
				m := models[c.model]
				if m == nil {
					var err error
					if m, err = nn.Load(filepath.Join(assets, "models", c.model)); err != nil {
						t.Fatal(err)
					}
					models[c.model] = m
				}
				in := goldentest.ReadF32(t, filepath.Join(golden, c.input))
				want := goldentest.ReadF32(t, filepath.Join(golden, c.output))
				per := len(in) / c.images
				images := c.images
				if testing.Short() {
					images = 1
				}
				for b := 0; b < images; b++ {
					outs, err := m.Run(tensor.New(tensor.WithShape(append([]int{1}, c.chw...)...), tensor.WithBacking(append([]float32(nil), in[b*per:(b+1)*per]...))))
					if err != nil {
						t.Fatalf("%s image %d: %v", c.name, b, err)
					}
					// Golden layout: each output for all images, outputs concatenated.
					off := 0
					for k, o := range outs {
						got := o.Data().([]float32)
						w := want[off+b*len(got) : off+(b+1)*len(got)]
						if err := closeTo(got, w, 1e-4); err != nil {
							t.Errorf("%s image %d output %d: %v", c.name, b, k, err)
						}
						off += len(got) * c.images
					}
				}
			}
		})
	}
}

// closeTo reports the first element violating |got-want| ≤ tol·max(1,|want|).
func closeTo(got, want []float32, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	worst, at := 0.0, -1
	for i := range got {
		d := math.Abs(float64(got[i])-float64(want[i])) / math.Max(1, math.Abs(float64(want[i])))
		if !(d <= worst) {
			worst, at = d, i
		}
	}
	if worst > tol {
		return fmt.Errorf("element %d: got %g, want %g (relative error %.3g > %g)", at, got[at], want[at], worst, tol)
	}
	return nil
}
