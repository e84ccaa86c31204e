package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInferCheckConvention: amt infer -check prints the input convention
// inferred from a classifier's input shape, the keys it could not infer,
// and a sut snippet with the inferred values.
func TestInferCheckConvention(t *testing.T) {
	dir := filepath.Join("..", "..", "sut", "testdata", "conventions")
	for _, tc := range []struct {
		model string
		want  []string
	}{
		{"nhwc.onnx", []string{
			"input convention: layout nhwc, 3 channels (colour), input 32×32 (width×height); not inferred from the model: sut.channel_order, sut.scale, sut.mean, sut.std",
			"  input_size: 32                     # from the model's input [? 32 32 3]\n  layout: nhwc ",
			"  channel_order: rgb                 # NOT inferred: bgr for Caffe/OpenCV-trained models"}},
		{"twin_nchw_rgb.onnx", []string{"input convention: layout nchw, 3 channels", "  layout: nchw "}},
		{"gray.onnx", []string{"layout nchw, 1 channel (grey: fed the luma)", "not inferred from the model: sut.scale, sut.mean, sut.std", "  mean: [0.485] "}},
	} {
		out, err := runInfer(t, "-check", filepath.Join(dir, tc.model))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.model, w, out)
			}
		}
	}
}
