package nn

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/sharedpath"
)

// closeTo reports the first element violating |got-want| ≤ tol·max(1,|want|).
func closeTo(got, want []float32, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d values, want %d", len(got), len(want))
	}
	worst, at := 0.0, -1
	for i := range got {
		d := math.Abs(float64(got[i])-float64(want[i])) / math.Max(1, math.Abs(float64(want[i])))
		if math.IsNaN(d) || d > worst {
			worst, at = d, i
			if math.IsNaN(d) {
				worst = math.Inf(1)
			}
		}
	}
	if worst > tol {
		return fmt.Errorf("element %d: got %g, want %g (relative error %.3g > %g)", at, got[at], want[at], worst, tol)
	}
	return nil
}

type goldenCase struct {
	name   string // benchmark-style short name
	model  string // file in assets/models
	input  string // relative to golden/
	output string // relative to golden/
	shape  []int  // of the whole golden input
}

var goldenCases = []goldenCase{
	{"squeezenet", "cifar10_squeezenet1_1.onnx", "onnx/cifar10_squeezenet1_1_input.f32", "onnx/cifar10_squeezenet1_1_output.f32", []int{4, 3, 224, 224}},
	{"features512", "features512_squeezenet1_1.onnx", "onnx/cifar10_squeezenet1_1_input.f32", "onnx/features512_squeezenet1_1_output.f32", []int{4, 3, 224, 224}},
	{"resnet20", "cifar10_resnet20.onnx", "onnx/cifar10_resnet20_input.f32", "onnx/cifar10_resnet20_output.f32", []int{8, 3, 32, 32}},
	{"resnet56", "cifar10_resnet56.onnx", "onnx/cifar10_resnet20_input.f32", "onnx/cifar10_resnet56_output.f32", []int{8, 3, 32, 32}},
	{"yolov3tiny/802", "coco_yolov3-tiny.onnx", "detection/img_802_input.f32", "detection/img_802_heads.f32", []int{1, 3, 416, 416}},
	{"yolov3tiny/92660", "coco_yolov3-tiny.onnx", "detection/img_92660_input.f32", "detection/img_92660_heads.f32", []int{1, 3, 416, 416}},
	{"yolov3tiny/22192", "coco_yolov3-tiny.onnx", "detection/img_22192_input.f32", "detection/img_22192_heads.f32", []int{1, 3, 416, 416}},
}

// TestGoldenModels checks every shipped model against ONNX Runtime's
// outputs (|got-want| ≤ 1e-4·max(1,|want|)): each image alone (batch 1) and
// all golden images in one batch, each run twice in one process. Short mode
// runs only the first image alone, one yolov3-tiny image and no ResNet-56.
func TestGoldenModels(t *testing.T) {
	golden := sharedpath.ForTest(t, "golden")
	assets := sharedpath.ForTest(t, "assets")
	models := map[string]*Model{}
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && (c.name == "yolov3tiny/92660" || c.name == "yolov3tiny/22192" || c.name == "resnet56") {
				t.Skip("short mode: one image of yolov3-tiny, no ResNet-56")
			}
			m := models[c.model]
			if m == nil {
				var err error
				if m, err = Load(filepath.Join(assets, "models", c.model)); err != nil {
					t.Fatal(err)
				}
				models[c.model] = m
			}
			in := goldentest.ReadF32(t, filepath.Join(golden, c.input))
			want := goldentest.ReadF32(t, filepath.Join(golden, c.output))
			n := c.shape[0]
			per := len(in) / n
			check := func(label string, x []float32, shape []int, want []float32, img0, imgs int) {
				t.Helper()
				for rep := 0; rep < 2; rep++ {
					outs, err := m.Run(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), x...))))
					if err != nil {
						t.Fatalf("%s: %v", label, err)
					}
					// Golden layout: each output for all N images, outputs concatenated.
					off := 0
					for k, o := range outs {
						got := o.Data().([]float32)
						size := len(got) / imgs
						var w []float32
						// Per image of this run, the golden slice of output k.
						totalK := size * n // output k over the whole golden batch
						for b := 0; b < imgs; b++ {
							s := off + (img0+b)*size
							w = append(w, want[s:s+size]...)
						}
						if err := closeTo(got, w, 1e-4); err != nil {
							t.Errorf("%s run %d output %d (%s): %v", label, rep+1, k, m.Outputs()[k].Name, err)
						}
						off += totalK
					}
				}
			}
			alone := n
			if testing.Short() {
				alone = 1 // short mode: the first image alone, then the whole batch
			}
			for b := 0; b < alone; b++ {
				shape := append([]int{1}, c.shape[1:]...)
				check(fmt.Sprintf("image %d alone", b), in[b*per:(b+1)*per], shape, want, b, 1)
			}
			if n > 1 {
				check("whole batch", in, c.shape, want, 0, n)
			}
		})
	}
}

// TestGoldenYoloBatch runs the three yolov3-tiny golden images as one batch
// of 3 through the fixed-batch ([1,3,416,416]) model, which runs them one by
// one, and checks both heads of each image.
func TestGoldenYoloBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: three yolov3-tiny inferences")
	}
	golden := sharedpath.ForTest(t, "golden")
	assets := sharedpath.ForTest(t, "assets")
	m, err := Load(filepath.Join(assets, "models", "coco_yolov3-tiny.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"802", "92660", "22192"}
	var in []float32
	for _, id := range ids {
		in = append(in, goldentest.ReadF32(t, filepath.Join(golden, "detection", "img_"+id+"_input.f32"))...)
	}
	outs, err := m.Run(tensor.New(tensor.WithShape(3, 3, 416, 416), tensor.WithBacking(in)))
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || !slices.Equal([]int(outs[0].Shape()), []int{3, 255, 13, 13}) || !slices.Equal([]int(outs[1].Shape()), []int{3, 255, 26, 26}) {
		t.Fatalf("outputs %v %v, want [3 255 13 13] and [3 255 26 26]", outs[0].Shape(), outs[1].Shape())
	}
	h0, h1 := outs[0].Data().([]float32), outs[1].Data().([]float32)
	n0, n1 := 255*13*13, 255*26*26
	for i, id := range ids {
		want := goldentest.ReadF32(t, filepath.Join(golden, "detection", "img_"+id+"_heads.f32"))
		got := append(append([]float32(nil), h0[i*n0:(i+1)*n0]...), h1[i*n1:(i+1)*n1]...)
		if err := closeTo(got, want, 1e-4); err != nil {
			t.Errorf("image %s: %v", id, err)
		}
	}
}
