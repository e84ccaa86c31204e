package features

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/sharedpath"
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
	src, err := data.OpenCIFAR10(filepath.Join(assets, "cifar10", "test_batch_first1017.bin"))
	if err != nil {
		t.Fatal(err)
	}
	var imgs []rgb.Image
	for i := range 4 {
		c, err := src.Case(i)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, c.Image)
	}
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
