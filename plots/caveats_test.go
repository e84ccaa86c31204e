package plots

import (
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// The features caveat says plainly when the context features come from
// the SUT itself, and names the tensor and model otherwise.
func TestFeaturesCaveat(t *testing.T) {
	sut := record.File{Path: "models/cifar10_squeezenet1_1.onnx", SHA256: paperSUTSHA256}
	f512 := &record.File{Path: "models/features512_squeezenet1_1.onnx", SHA256: features512SHA256}
	r56 := &record.File{Path: "models/cifar10_resnet56.onnx", SHA256: "abcdef0123456789"}
	meta := func(f record.FeaturesMeta) *record.Meta { return &record.Meta{SUT: sut, Features: f} }
	for _, c := range []struct {
		name      string
		m         *record.Meta
		detection bool
		want      string
	}{
		{"default", meta(record.FeaturesMeta{Kind: "model", Model: f512}), false, "come from the SUT itself"},
		{"default, detection", meta(record.FeaturesMeta{Kind: "model", Model: f512}), true, "not part of this SUT"},
		{"SUT tensor", meta(record.FeaturesMeta{Kind: "model", Model: &sut, Output: "/features/features.12/Concat_output_0"}), false,
			"tensor `/features/features.12/Concat_output_0` of the SUT's own model cifar10_squeezenet1_1.onnx: the agents see white-box"},
		{"independent", meta(record.FeaturesMeta{Kind: "model", Model: r56, Output: "/GlobalAveragePool_output_0"}), false,
			"tensor `/GlobalAveragePool_output_0` of cifar10_resnet56.onnx (sha256 abcdef012345…), a network other than the SUT"},
		{"phash", meta(record.FeaturesMeta{Kind: "phash"}), false, "perceptual hash"},
		{"none", meta(record.FeaturesMeta{Kind: "none"}), false, "no context features"},
	} {
		if got := featuresCaveat(c.m, c.detection); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want it to contain %q", c.name, got, c.want)
		}
	}
}

// The report says how the agents were seeded unless they ran with the
// original's fixed seed.
func TestSeedCaveat(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		want bool
	}{{nil, true}, {map[string]string{"seed": "run"}, true}, {map[string]string{"seed": "0"}, false}} {
		m := &record.Meta{Experiment: "x", CaseStudy: "classification", Mode: "replay",
			Scenario: record.ScenarioMeta{Name: "h", Variants: []string{"blur"}},
			Agents:   []record.AgentMeta{{ID: "cover", Name: "cover", Options: c.opts}, {ID: "random", Name: "random"}}}
		b := &builder{e: &Experiment{Meta: m}}
		if err := b.caveats(); err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(b.md.String(), "Agents `cover` seed their internal randomness")
		if got != c.want || strings.Contains(b.md.String(), "`random` seed") {
			t.Errorf("options %v: caveat present %v, want %v:\n%s", c.opts, got, c.want, b.md.String())
		}
	}
}
