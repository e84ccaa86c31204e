package main

import (
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
)

// TestInferCheck checks amt infer -check on a supported model (the
// operator table, all supported, the planned memory for the batch) and on
// one using operators amt does not implement (listed, exit with an error).
func TestInferCheck(t *testing.T) {
	vit := filepath.Join("..", "..", "nn", "testdata", "models", "arch", "vit_small_o17.onnx")
	out, err := runInfer(t, "-check", vit, "-batch", "4")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"opset 17", "input  input [? 3 32 32]", "output logits [? 10]",
		"all 22 operator types supported", "planned memory for a batch of 4: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^LayerNormalization\s+5\s+/encoder/layers/encoder_layer_0/ln_1/LayerNormalization\s+yes$`).MatchString(out) {
		t.Errorf("no LayerNormalization row with its count and first node:\n%s", out)
	}

	bad := filepath.Join("testdata", "unsupported.onnx")
	out, err = runInfer(t, "-check", bad)
	if err == nil || !strings.Contains(err.Error(), "GridSample, com.microsoft.FusedConv") || !strings.Contains(err.Error(), "opset 16") {
		t.Errorf("error %v, want one naming GridSample and com.microsoft.FusedConv at opset 16", err)
	}
	for _, want := range []string{"output y (shape not declared)", "2 of 3 operator types not supported"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, row := range []string{`(?m)^GridSample\s+1\s+sample\s+NO$`, `(?m)^Relu\s+2\s+relu\s+yes$`, `(?m)^com\.microsoft\.FusedConv\s+1\s+fused\s+NO$`} {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("output has no row matching %s:\n%s", row, out)
		}
	}
	if strings.Contains(out, "planned") {
		t.Errorf("planned memory printed for a model that cannot load:\n%s", out)
	}
}

// TestInferZoo runs models of issue #18's zoo through amt infer at batch 1
// and 4 and compares the outputs with ONNX Runtime's (the fixtures of
// nn/testdata/models; tolerance 1e-4 of the largest logit, as there).
func TestInferZoo(t *testing.T) {
	dir := filepath.Join("..", "..", "nn", "testdata", "models", "arch")
	for _, c := range []struct{ model, input, shape string }{
		{"vit_small_o17", "input_3x32x32", "4,3,32,32"},
		{"swin_small_o17", "input_3x56x72", "4,3,56,72"},
		{"convnext_small_o11", "input_3x64x64", "4,3,64,64"},
	} {
		want := goldentest.ReadF32(t, filepath.Join(dir, c.model+".out.logits.f32"))
		limit := 0.0
		for _, v := range want {
			limit = math.Max(limit, math.Abs(float64(v)))
		}
		limit = 1e-4 * math.Max(1, limit)
		for _, batch := range []string{"1", "4"} {
			out := filepath.Join(t.TempDir(), "y.f32")
			if _, err := runInfer(t, "-model", filepath.Join(dir, c.model+".onnx"), "-input", filepath.Join(dir, c.input+".f32"),
				"-shape", c.shape, "-out", out, "-batch", batch); err != nil {
				t.Fatal(err)
			}
			got := goldentest.ReadF32(t, out)
			if len(got) != len(want) {
				t.Fatalf("%s batch %s: %d values, want %d", c.model, batch, len(got), len(want))
			}
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > limit {
					t.Fatalf("%s batch %s: value %d is %g, ONNX Runtime %g", c.model, batch, i, got[i], want[i])
				}
			}
		}
	}
}
