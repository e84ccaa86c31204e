package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const corruptionDoc = `corruption:
  reference:
    model: models/m2.onnx
    input_size: 32
`

// The corruption section reads a second SUT with sut's keys and checks,
// and needs a classification experiment on a corruptions scenario.
func TestCorruptionConfig(t *testing.T) {
	assets := fakeAssets(t)
	if err := os.WriteFile(filepath.Join(assets, "models/m2.onnx"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(baseConfig, "action_set: hierarchical", "action_set: corruptions", 1)
	if base == baseConfig {
		t.Fatal("baseConfig has no action_set: hierarchical")
	}
	c, err := parseConfig([]byte(base+corruptionDoc), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Corruption.Reference
	if !c.CorruptionReport() || r.Model != filepath.Join(assets, "models/m2.onnx") || r.InputWidth != 32 || c.SUT.Model != filepath.Join(assets, "models/m.onnx") || c.SUT.InputWidth != 224 {
		t.Fatalf("reference %+v, sut %+v", r, c.SUT)
	}
	if c2, err := parseConfig([]byte(base), "exp/test.yaml", assets); err != nil || c2.CorruptionReport() {
		t.Errorf("no corruption section: CorruptionReport() true or %v", err)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"key typo", "    model: models/m2.onnx", "    modl: models/m2.onnx", `corruption.reference.modl: unknown key; did you mean "model"?`},
		{"missing model file", "models/m2.onnx", "models/m3.onnx", `corruption.reference.model: file "models/m3.onnx" not found`},
		{"no reference", "  reference:\n    model: models/m2.onnx\n    input_size: 32\n", "", `corruption: want a mapping of keys, got nothing`},
		{"unknown key", "  reference:\n", "  bogus: 1\n  reference:\n", `corruption.bogus: unknown key`},
		{"not a corruptions scenario", "action_set: corruptions", "action_set: hierarchical", `corruption: a corruption report needs a corruptions scenario`},
	} {
		doc := strings.Replace(base+corruptionDoc, tc.old, tc.new, 1)
		if doc == base+corruptionDoc {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := parseConfig([]byte(doc), "exp/test.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.name, err, tc.want)
		}
	}
}
