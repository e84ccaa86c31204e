package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
)

// TestCheckModelConfig: the configuration of amt check without one is
// deterministic (the same options, the same bytes), parses, resolves to
// the model's convention, and carries the options given; paths with
// characters YAML reads otherwise are quoted.
func TestCheckModelConfig(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	dir := filepath.Join(t.TempDir(), "my images: #1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	labels := filepath.Join(t.TempDir(), "classes.txt")
	if err := os.WriteFile(labels, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rate := 0.25
	o := CheckModelOptions{Model: conventionFixture(t, "nhwc_bgr_pixel.onnx"), Images: dir, Labels: labels, Budget: 7,
		FailRate: &rate, FailMR: map[string]float64{"rotation": 0.5, "blur": 0.1}}
	doc, out, err := CheckModelConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := CheckModelConfig(o)
	if err != nil || string(again) != string(doc) {
		t.Fatalf("a second call differs (%v):\n%s\n---\n%s", err, doc, again)
	}
	if out != filepath.Join("results", "check-nhwc_bgr_pixel") {
		t.Errorf("output %s", out)
	}
	cfg, err := parseConfig(doc, filepath.Join(t.TempDir(), "config.yaml"), assets)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	if cfg.Data.Path != dir || cfg.SUT.Layout != "nhwc" || cfg.SUT.InputWidth != 32 || cfg.SUT.Labels != labels || cfg.Agents[0].Name != CheckModelAgent ||
		cfg.Check.Budget != 7 || *cfg.Check.FailRate != 0.25 || cfg.Check.FailMR["blur"] != 0.1 || cfg.Timing || cfg.Scenario.Name != "hierarchical" {
		t.Errorf("parsed: %+v\n%s", cfg, doc)
	}
	for _, want := range []string{"# Input convention from the model's input [? 32 32 3]: layout nhwc, 3 channels (colour), input 32×32 (width×height); not inferred from the model: sut.channel_order, sut.scale, sut.mean, sut.std.",
		"  fail_on:\n    violation_rate: 0.25\n    mr:\n      blur: 0.1\n      rotation: 0.5\n", "features:\n  kind: [phash, sut]\n"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("config lacks %q:\n%s", want, doc)
		}
	}
	if _, _, err := CheckModelConfig(CheckModelOptions{Model: filepath.Join(assets, "models", "coco_yolov3-tiny.onnx"), Images: dir}); err == nil ||
		!strings.Contains(err.Error(), "want the logits [N, classes] of an image classifier") {
		t.Errorf("a detector: %v", err)
	}
}
