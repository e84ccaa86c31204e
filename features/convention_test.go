package features

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/nn/preprocess"
)

// TestModelConventions: a feature model in another input convention (the
// fixtures of sut/testdata/conventions, whose logits serve as features)
// gives the NCHW RGB twin's features when its options say the convention;
// an NHWC model's layout is read from its shape.
func TestModelConventions(t *testing.T) {
	dir := filepath.Join("..", "sut", "testdata", "conventions")
	imgs := cifarImages(t, 4)
	twin, err := LoadModel(filepath.Join(dir, "twin_nchw_rgb.onnx"), ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := twin.Extract(imgs)
	if err != nil {
		t.Fatal(err)
	}
	nhwc := preprocess.NHWC
	pixel := preprocess.Norm{Mean: [3]float32{123.675, 116.28, 103.53}, Std: [3]float32{1, 1, 1}, Scale: preprocess.ScalePixel}
	for _, tc := range []struct {
		file string
		opt  ModelOptions
	}{
		{"nhwc.onnx", ModelOptions{}},
		{"nhwc.onnx", ModelOptions{Layout: &nhwc}},
		{"nhwc_bgr_pixel.onnx", ModelOptions{BGR: true, Norm: &pixel}},
	} {
		m, err := LoadModel(filepath.Join(dir, tc.file), tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Extract(imgs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			for k := range got[i] {
				if d := got[i][k] - want[i][k]; d > 1e-5 || d < -1e-5 {
					t.Fatalf("%s: image %d feature %d: %v, the twin's %v", tc.file, i, k, got[i][k], want[i][k])
				}
			}
		}
	}
	nchw := preprocess.NCHW
	if _, err := LoadModel(filepath.Join(dir, "nhwc.onnx"), ModelOptions{Layout: &nchw}); err == nil || !strings.Contains(err.Error(), "want layout nhwc") {
		t.Errorf("nhwc model as nchw: %v", err)
	}
}
