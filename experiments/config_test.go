package experiments

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
)

const baseConfig = `name: test
case_study: classification
mode: replay
data:
  format: cifar10
  path: cifar10/x.bin
  limit: 10
sut:
  model: models/m.onnx
  input_size: 224
features:
  kind: none
action_set: hierarchical
agents:
  - cover
  - name: cover
    id: cover-linear
    options:
      hidden: 0
seeds: 1-3
log_interval: 5
`

// fakeAssets makes an assets folder with the files baseConfig names.
func fakeAssets(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"cifar10/x.bin", "models/m.onnx", "models/f.onnx"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParseConfig(t *testing.T) {
	assets := fakeAssets(t)
	c, err := ParseConfig([]byte(baseConfig), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "test" || c.Mode != "replay" || c.Data.Path != filepath.Join(assets, "cifar10/x.bin") || c.Data.Limit != 10 ||
		c.SUT.InputWidth != 224 || c.SUT.InputHeight != 224 || c.SUT.Mean != imagenetMean || c.SUT.Std != imagenetStd ||
		c.Features.Kind != "none" || len(c.Scenario.Variants()) != 59 || len(c.Agents) != 2 || c.Agents[1].ID != "cover-linear" ||
		c.Agents[1].Options["hidden"] != "0" || !slices.Equal(c.Seeds, []uint64{1, 2, 3}) || c.Passes != 1 || c.LogInterval != 5 ||
		c.Timing || c.Output != filepath.Join("results", "test") || c.Cache != filepath.Join(".cache", "amt") {
		t.Fatalf("parsed %+v", c)
	}
	// A user-defined action set, a [w,h] size, seeds as a list, a path
	// beside the config file.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "local.bin"), []byte("x"), 0o644)
	doc := strings.NewReplacer(
		"action_set: hierarchical", "action_set:\n  name: mine\n  reward: halving\n  arms:\n    - mr: blur\n    - mr: rotation\n      params: -30:30:10\n    - mr: shear\n      params: [20]",
		"input_size: 224", "input_size: [224, 224]",
		"seeds: 1-3", "seeds: [4, 2]",
		"path: cifar10/x.bin", "path: local.bin",
		"mode: replay", "mode: online").Replace(baseConfig)
	c, err = ParseConfig([]byte(doc), filepath.Join(dir, "c.yaml"), assets)
	if err != nil {
		t.Fatal(err)
	}
	v := c.Scenario.Variants()
	if len(v) != 1+6+1 || v[1].Key() != "rotation:-30" || c.Scenario.Arms[2].Name != "shear:20" || c.Scenario.MainReward(2) != 1250 || c.Scenario.Objective.Name != "halving" ||
		!slices.Equal(c.Seeds, []uint64{4, 2}) || c.Data.Path != filepath.Join(dir, "local.bin") || !c.Timing {
		t.Fatalf("parsed %+v", c)
	}
}

// Bad configurations fail with the file, line and key.
func TestConfigErrors(t *testing.T) {
	assets := fakeAssets(t)
	for _, tc := range []struct{ name, old, new, want string }{
		{"typo", "sut:", "sutt:", `exp/test.yaml:8:1: sutt: unknown key; did you mean "sut"?`},
		{"nested typo", "  limit: 10", "  limt: 10", `exp/test.yaml:7:3: data.limt: unknown key; did you mean "limit"?`},
		{"missing", "seeds: 1-3\n", "", `exp/test.yaml:1:1: seeds: missing required key`},
		{"missing nested", "  model: models/m.onnx\n", "", `exp/test.yaml:8:1: sut.model: missing required key`},
		{"unknown agent", "  - cover\n", "  - covr\n", `exp/test.yaml:15:5: agents[0].name: unknown agent "covr" (known: random, cover,`},
		{"unknown option", "hidden: 0", "hiden: 0", `exp/test.yaml:16:5: agents[1].options: agent cover: unknown option "hiden"`},
		{"bad option", "hidden: 0", "hidden: many", `agents[1].options: agent cover: option hidden="many"`},
		{"duplicate id", "    id: cover-linear\n", "", `agents[1]: agent id "cover" used twice`},
		{"missing model", "models/m.onnx", "models/nope.onnx", `exp/test.yaml:9:10: sut.model: file "models/nope.onnx" not found (looked at exp/models/nope.onnx, ` + assets},
		{"bad size", "input_size: 224", "input_size: big", `exp/test.yaml:10:15: sut.input_size: want a positive integer or [width, height], got "big"`},
		{"bad mode", "mode: replay", "mode: offline", `exp/test.yaml:3:7: mode: "offline" is not one of online, replay`},
		{"bad limit", "limit: 10", "limit: -2", `exp/test.yaml:7:10: data.limit: "-2" is not an integer in [0,`},
		{"bad seeds", "seeds: 1-3", "seeds: 3-1", `exp/test.yaml:20:8: seeds: seeds "3-1": "3-1" is not a seed or an ascending range`},
		{"bad action set", "action_set: hierarchical", "action_set: rotations", `exp/test.yaml:13:13: action_set: mr: unknown scenario "rotations"`},
		{"features model", "kind: none", "kind: model", `features.model: missing required key (features.kind is model)`},
		{"detection without coco", "case_study: classification", "case_study: detection", `data.format: "cifar10": a detection experiment needs ground-truth boxes`},
		{"std", "  input_size: 224\n", "  input_size: 224\n  std: [1, 0, 1]\n", `sut.std: "0" is not a positive number`},
		{"iterations", "log_interval: 5", "log_interval: 5\niterations: 11", `iterations: 11 is more than passes × data.limit = 10`},
		{"twice", "mode: replay\n", "mode: replay\nmode: online\n", `exp/test.yaml:4:1: mode: key given twice`},
		{"not a mapping", "options:\n      hidden: 0", "options: 7", `exp/test.yaml:18:14: agents[1].options: want a mapping of option: value, got "7"`},
	} {
		doc := strings.Replace(baseConfig, tc.old, tc.new, 1)
		if doc == baseConfig {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := ParseConfig([]byte(doc), "exp/test.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseConfig([]byte(baseConfig+"---\nname: two\n"), "two.yaml", assets); err == nil || !strings.Contains(err.Error(), "two.yaml:22: a second YAML document") {
		t.Errorf("two documents: %v", err)
	}
	if _, err := ParseConfig([]byte("name: [unclosed"), "bad.yaml", assets); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("syntax error: %v", err)
	}
}

// Prepare checks the model against the config before any work.
func TestPrepareChecksModel(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	doc := strings.NewReplacer("path: cifar10/x.bin", "path: cifar10/test_batch_first1017.bin",
		"models/m.onnx", "models/cifar10_squeezenet1_1.onnx", "input_size: 224", "input_size: 32").Replace(baseConfig)
	cfg, err := ParseConfig([]byte(doc), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(context.Background(), cfg)
	want := "exp/test.yaml:10:15: sut.input_size: the model cifar10_squeezenet1_1.onnx takes 224×224 (width×height) images, but the config says 32×32"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	cfg.Data.Limit = 2000
	cfg.SUT.InputWidth, cfg.SUT.InputHeight = 224, 224
	if _, err = Prepare(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "data.limit: 2000 is more than the 1017 images") {
		t.Fatalf("limit: %v", err)
	}
}

func TestParseSeeds(t *testing.T) {
	for in, want := range map[string][]uint64{"1-3": {1, 2, 3}, "5": {5}, "1-2, 7": {1, 2, 7}} {
		got, err := ParseSeeds(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "a", "3-1", "1,1", "-1"} {
		if _, err := ParseSeeds(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
