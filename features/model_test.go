package features

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/rgb"
)

// TestModelGolden runs the default feature model on CIFAR-10 images 0..3
// (through this package's preprocessing) and compares with ONNX Runtime's
// features in golden/onnx/features512_squeezenet1_1_output.f32.
func TestModelGolden(t *testing.T) {
	golden := sharedpath.ForTest(t, "golden/onnx")
	assets := sharedpath.ForTest(t, "assets")
	t.Setenv(data.AssetsEnvVar, assets)
	path, err := DefaultModelPath()
	if err != nil {
		t.Fatal(err)
	}
	// Batches of 3 so that the 4 images take two forward passes.
	x, err := LoadModel(path, ModelOptions{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if x.Dim() != 512 {
		t.Fatalf("Dim = %d, want 512", x.Dim())
	}
	imgs := cifarImages(t, 4)
	got, err := x.Extract(imgs)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(golden, "features512_squeezenet1_1_output.f32"))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 4*512*4 || len(got) != 4 {
		t.Fatalf("golden has %d bytes, got %d rows", len(raw), len(got))
	}
	worst := 0.0
	for i := range 4 {
		if len(got[i]) != 512 {
			t.Fatalf("row %d has %d features", i, len(got[i]))
		}
		for j := range 512 {
			want := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[(i*512+j)*4:])))
			d := math.Abs(float64(got[i][j]) - want)
			worst = max(worst, d/max(1, math.Abs(want)))
			if d > 1e-4*max(1, math.Abs(want)) {
				t.Errorf("image %d feature %d = %v, ONNX Runtime %v", i, j, got[i][j], want)
			}
		}
	}
	t.Logf("max relative difference from ONNX Runtime: %.3g", worst)

	// A clone gives the same features; so does one image at a time.
	one, err := x.Clone().Extract(imgs[3:])
	if err != nil {
		t.Fatal(err)
	}
	if !equalRows(one[0], got[3]) {
		t.Error("a clone's single-image features differ from the batch's")
	}
	// Non-CIFAR sizes are resized to the model's input.
	if _, err := x.Extract([]rgb.Image{rgb.New(50, 20)}); err != nil {
		t.Errorf("50×20 image: %v", err)
	}
	if _, err := x.Extract([]rgb.Image{{W: 2, H: 2}}); err == nil || !strings.Contains(err.Error(), "image 0") {
		t.Errorf("invalid image: error %v", err)
	}
	if out, err := x.Extract(nil); err != nil || len(out) != 0 {
		t.Errorf("no images: %v, %v", out, err)
	}
}

func TestModelErrors(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	if _, err := LoadModel(filepath.Join(t.TempDir(), "none.onnx"), ModelOptions{}); err == nil || !strings.Contains(err.Error(), "none.onnx") {
		t.Errorf("missing model: error %v", err)
	}
	p := filepath.Join(assets, "models", "features512_squeezenet1_1.onnx")
	if _, err := LoadModel(p, ModelOptions{BatchSize: -1}); err == nil || !strings.Contains(err.Error(), "batch size") {
		t.Errorf("negative batch: error %v", err)
	}
	if _, err := LoadModel(p, ModelOptions{Norm: &preprocess.Norm{}}); err == nil {
		t.Error("zero std accepted")
	}
	// yolov3-tiny has two outputs: not a feature model.
	if testing.Short() {
		return
	}
	if _, err := LoadModel(filepath.Join(assets, "models", "coco_yolov3-tiny.onnx"), ModelOptions{}); err == nil || !strings.Contains(err.Error(), "2 outputs") {
		t.Errorf("yolov3-tiny: error %v", err)
	}
}

// The shipped feature model is the trunk of the SUT: the 512-channel map
// of the SqueezeNet SUT's last Fire module, read with
// ModelOptions.Output and globally average-pooled, gives the default
// model's features bit for bit. A tensor of another network (the 64-d
// global pool of ResNet-56) gives features of its own width; a misspelt
// tensor name is an error listing the model's tensors.
func TestModelOutputTensor(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	models := filepath.Join(assets, "models")
	def, err := LoadModel(filepath.Join(models, DefaultModelFile), ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	trunk, err := LoadModel(filepath.Join(models, "cifar10_squeezenet1_1.onnx"), ModelOptions{Output: "/features/features.12/Concat_output_0"})
	if err != nil {
		t.Fatal(err)
	}
	if trunk.Dim() != 512 {
		t.Fatalf("SUT trunk: Dim %d, want 512", trunk.Dim())
	}
	imgs := cifarImages(t, 3)
	want, err := def.Extract(imgs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := trunk.Extract(imgs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !equalRows(got[i], want[i]) {
			t.Errorf("image %d: the SUT's pooled trunk differs from the default feature model", i)
		}
	}

	r56, err := LoadModel(filepath.Join(models, "cifar10_resnet56.onnx"), ModelOptions{Output: "/GlobalAveragePool_output_0"})
	if err != nil {
		t.Fatal(err)
	}
	// The same features from the 4-D map before pooling, pooled here.
	r56map, err := LoadModel(filepath.Join(models, "cifar10_resnet56.onnx"), ModelOptions{Output: "/layer3/layer3.8/Relu_1_output_0"})
	if err != nil {
		t.Fatal(err)
	}
	if r56.Dim() != 64 || r56map.Dim() != 64 {
		t.Fatalf("ResNet-56: Dim %d and %d, want 64", r56.Dim(), r56map.Dim())
	}
	a, err := r56.Extract(imgs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r56map.Extract(imgs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !equalRows(a[i], b[i]) {
			t.Errorf("image %d: pooling the map differs from the model's own pooling", i)
		}
	}

	_, err = LoadModel(filepath.Join(models, "cifar10_resnet56.onnx"), ModelOptions{Output: "/GlobalAveragePool"})
	var unknown *nn.UnknownTensorError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), `no tensor "/GlobalAveragePool"`) ||
		!slices.ContainsFunc(unknown.Tensors, func(t nn.TensorInfo) bool { return t.Name == "/GlobalAveragePool_output_0" }) {
		t.Errorf("misspelt tensor: %v", err)
	}
	if _, err := LoadModel(filepath.Join(models, "cifar10_resnet56.onnx"), ModelOptions{Output: "/Flatten_output_0"}); err != nil {
		t.Errorf("a 2-D tensor: %v", err)
	}
}

// features.output works on any tensor of any shipped model: for each, its
// first, middle and last tensor give finite features of the tensor's
// channel count for CIFAR images.
func TestModelAnyTensor(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	files, err := filepath.Glob(filepath.Join(assets, "models", "*.onnx"))
	if err != nil || len(files) < 5 {
		t.Fatalf("shipped models: %v %v", files, err)
	}
	imgs := cifarImages(t, 2)
	for _, path := range files {
		m, err := nn.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := m.Tensors()
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range []nn.TensorInfo{ts[0], ts[len(ts)/2], ts[len(ts)-1]} {
			x, err := LoadModel(path, ModelOptions{Output: ti.Name})
			if err != nil {
				t.Errorf("%s, %s: %v", filepath.Base(path), ti.Name, err)
				continue
			}
			if x.Dim() != ti.Shape[1] {
				t.Errorf("%s, %s %v: Dim %d", filepath.Base(path), ti.Name, ti.Shape, x.Dim())
			}
			f, err := x.Extract(imgs)
			if err != nil {
				t.Fatalf("%s, %s: %v", filepath.Base(path), ti.Name, err)
			}
			for _, row := range f {
				for _, v := range row {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						t.Fatalf("%s, %s: feature %v", filepath.Base(path), ti.Name, v)
					}
				}
			}
		}
	}
}
