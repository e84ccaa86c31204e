package sut

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/rgb"
)

// fashionMNISTTest returns Debian's Fashion-MNIST test images (package
// dataset-fashion-mnist, which .ci/run installs; under CI a missing
// package fails the test).
func fashionMNISTTest(t *testing.T) data.Source {
	t.Helper()
	p := "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install Debian's dataset-fashion-mnist: %v", err)
		}
		t.Skipf("Debian's dataset-fashion-mnist is not installed: %v", err)
	}
	src, err := data.Open(data.Spec{Format: "fashion-mnist", Path: p})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// readF32 reads a raw little-endian float32 file of n values.
func readF32(t *testing.T, path string, n int) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4*n {
		t.Fatalf("%s holds %d bytes, want %d", path, len(b), 4*n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// TestFashionMNISTZooGolden runs the Fashion-MNIST zoo
// (assets/models/fashion-mnist, see its MANIFEST) as systems under test on
// the first 1,000 IDX test images, the way a sweep does: the grey images
// enter as RGB with R = G = B, the single-channel classifier takes their
// luma and normalises it with the zoo's mean 0.2860 and std 0.3530. The
// model input must equal the zoo's fm_input_1000.f32 (PyTorch's) exactly,
// and every model's logits its golden ones within 1e-4 relative.
func TestFashionMNISTZooGolden(t *testing.T) {
	src := fashionMNISTTest(t)
	dir := sharedpath.ForTest(t, "assets/models/fashion-mnist")
	const n, plane = 1000, 28 * 28
	imgs := make([]rgb.Image, n)
	for i := range imgs {
		c, err := src.Case(i)
		if err != nil {
			t.Fatal(err)
		}
		imgs[i] = c.Image
	}
	wantIn := readF32(t, filepath.Join(dir, "fm_input_1000.f32"), n*plane)
	cfg := ClassifierConfig{Width: 28, Height: 28, Mean: [3]float64{0.2860, 0.2860, 0.2860}, Std: [3]float64{0.3530, 0.3530, 0.3530}, BatchSize: 250}
	for _, name := range []string{"fm-mlp", "fm-lenet", "fm-cnn", "fm-cnn-seed2", "fm-cnn-flip", "fm-cnn-rot"} {
		t.Run(name, func(t *testing.T) {
			c, err := LoadClassifier(filepath.Join(dir, name+".onnx"), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if c.Config().Channels != 1 {
				t.Fatalf("channels %d, want 1 (from the model's input)", c.Config().Channels)
			}
			in, err := c.Input(imgs)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range in.Data().([]float32) {
				if v != wantIn[i] {
					t.Fatalf("input value %d (image %d) = %v, want the zoo's %v", i, i/plane, v, wantIn[i])
				}
			}
			preds, err := c.Classify(imgs)
			if err != nil {
				t.Fatal(err)
			}
			want := readF32(t, filepath.Join(dir, name+"_logits_1000.f32"), n*10)
			worst := 0.0
			for i, p := range preds {
				for k, v := range p.Logits {
					w := float64(want[i*10+k])
					worst = max(worst, math.Abs(float64(v)-w)/max(1, math.Abs(w)))
				}
			}
			if worst > 1e-4 {
				t.Fatalf("largest relative logit error %.3g, want ≤ 1e-4", worst)
			}
			t.Logf("largest relative logit error %.3g", worst)
		})
	}
}
