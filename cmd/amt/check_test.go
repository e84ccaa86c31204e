package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
		"all 22 operator types supported", "planned activation memory for a batch of 4: "} {
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
