package experiments

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/scenario"
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
	c, err := parseConfig([]byte(baseConfig), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "test" || c.Mode != "replay" || c.Data.Path != filepath.Join(assets, "cifar10/x.bin") || c.Data.Limit != 10 ||
		c.SUT.InputWidth != 224 || c.SUT.InputHeight != 224 || c.SUT.Mean != [3]float64{0.485, 0.456, 0.406} || c.SUT.Std != [3]float64{0.229, 0.224, 0.225} ||
		!slices.Equal(c.Features.Kinds, []string{"none"}) || c.Objective != "paper" || len(c.Scenario.Variants()) != 59 || len(c.Agents) != 2 || c.Agents[1].ID != "cover-linear" ||
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
	c, err = parseConfig([]byte(doc), filepath.Join(dir, "c.yaml"), assets)
	if err != nil {
		t.Fatal(err)
	}
	v := c.Scenario.Variants()
	if len(v) != 1+6+1 || v[1].Key() != "rotation:-30" || c.Scenario.Arms[2].Name != "shear:20" || c.Scenario.MainReward(2) != 1250 || c.Scenario.Objective.Name != "halving" ||
		!slices.Equal(c.Seeds, []uint64{4, 2}) || c.Data.Path != filepath.Join(dir, "local.bin") || !c.Timing {
		t.Fatalf("parsed %+v", c)
	}
}

// features.kind takes a list ending with sut, and objective fault
// replaces the action set's rewards (flat arms included) with 1 per
// violation on both levels.
func TestParseContextAndObjective(t *testing.T) {
	assets := fakeAssets(t)
	doc := strings.Replace(baseConfig, "kind: none", "kind: [model, sut]\n  model: models/f.onnx", 1)
	c, err := parseConfig([]byte(doc), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Features.Kinds, []string{"model", "sut"}) || c.Features.extractor() != "model" || !c.Features.sut() ||
		c.Features.kind() != "model+sut" || c.Objective != "paper" || c.Scenario.Objective.Name != scenario.Paper.Name {
		t.Fatalf("parsed features %+v, objective %q (%s)", c.Features, c.Objective, c.Scenario.Objective.Name)
	}
	doc = strings.Replace(baseConfig, "kind: none", "kind: sut", 1)
	doc = strings.Replace(doc, "action_set: hierarchical", "action_set: rotation\nobjective: fault", 1)
	if c, err = parseConfig([]byte(doc), "exp/test.yaml", assets); err != nil {
		t.Fatal(err)
	}
	if c.Features.extractor() != "" || !c.Features.sut() || c.Objective != "fault" || c.Scenario.Objective.Name != "fault" {
		t.Fatalf("parsed features %+v, objective %q (%s)", c.Features, c.Objective, c.Scenario.Objective.Name)
	}
	for i := range c.Scenario.Arms {
		if c.Scenario.MainReward(i) != 1 {
			t.Fatalf("fault objective: arm %s earns %v", c.Scenario.Arms[i].Name, c.Scenario.MainReward(i))
		}
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
		{"unknown option", "hidden: 0", "hiden: 0", `exp/test.yaml:19:7: agents[1].options.hiden: agent cover has no option "hiden"; did you mean "hidden"? (its options: epsilon, estimator, hidden,`},
		{"bad option", "hidden: 0", "hidden: many", `exp/test.yaml:19:15: agents[1].options.hidden: agent cover: option hidden="many": want an integer in [0, 1024]`},
		{"duplicate id", "    id: cover-linear\n", "", `agents[1]: agent id "cover" used twice`},
		{"missing model", "models/m.onnx", "models/nope.onnx", `exp/test.yaml:9:10: sut.model: file "models/nope.onnx" not found (looked at exp/models/nope.onnx, ` + assets},
		{"bad size", "input_size: 224", "input_size: big", `exp/test.yaml:10:15: sut.input_size: want a positive integer or [width, height], got "big"`},
		{"bad mode", "mode: replay", "mode: offline", `exp/test.yaml:3:7: mode: "offline" is not one of online, replay`},
		{"bad limit", "limit: 10", "limit: -2", `exp/test.yaml:7:10: data.limit: "-2" is not an integer in [0,`},
		{"bad seeds", "seeds: 1-3", "seeds: 3-1", `exp/test.yaml:20:8: seeds: seeds "3-1": "3-1" is not a seed or an ascending range`},
		{"bad action set", "action_set: hierarchical", "action_set: rotations", `exp/test.yaml:13:13: action_set: mr: unknown scenario "rotations"`},
		{"bad reward", "action_set: hierarchical", "action_set:\n  name: mine\n  reward: haling\n  arms:\n    - mr: blur", `exp/test.yaml:15:11: action_set.reward: "haling" is not one of unit, halving, fault; did you mean "halving"?`},
		{"features model", "kind: none", "kind: model", `features.model: missing required key (features.kind has model)`},
		{"detection without coco", "case_study: classification", "case_study: detection", `data.format: "cifar10": a detection experiment needs ground-truth boxes`},
		{"std", "  input_size: 224\n", "  input_size: 224\n  std: [1, 0, 1]\n", `sut.std: "0" is not a positive number`},
		{"iterations", "log_interval: 5", "log_interval: 5\niterations: 11", `iterations: 11 is more than passes × data.limit = 10`},
		{"twice", "mode: replay\n", "mode: replay\nmode: online\n", `exp/test.yaml:4:1: mode: key given twice`},
		{"not a mapping", "options:\n      hidden: 0", "options: 7", `exp/test.yaml:18:14: agents[1].options: want a mapping of option: value, got "7"`},
		{"bad kind", "kind: none", "kind: [model, sutt]\n  model: models/f.onnx", `exp/test.yaml:12:17: features.kind: "sutt" is not one of model, phash, none, sut; did you mean "sut"?`},
		{"sut first", "kind: none", "kind: [sut, phash]", `exp/test.yaml:12:10: features.kind: sut must come last`},
		{"two extractors", "kind: none", "kind: [phash, model]", `features.kind: model after phash: the context has one of model, phash and none, then optionally sut`},
		{"none combined", "kind: none", "kind: [none, sut]", `features.kind: none is a context of its own`},
		{"kind twice", "kind: none", "kind: [sut, sut]", `features.kind: sut given twice`},
		{"no kind", "kind: none", "kind: []", `features.kind: want at least one kind`},
		{"bad objective", "seeds: 1-3", "objective: faults\nseeds: 1-3", `objective: "faults" is not one of paper, fault; did you mean "fault"?`},
		{"bad device", "  input_size: 224\n", "  input_size: 224\n  device: gpu\n", `exp/test.yaml:11:11: sut.device: "gpu" is not one of cpu, cuda, cuda,cpu`},
		{"features device", "kind: none", "kind: none\n  device: cuda", `exp/test.yaml:13:11: features.device: only when features.kind has model`},
	} {
		doc := strings.Replace(baseConfig, tc.old, tc.new, 1)
		if doc == baseConfig {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := parseConfig([]byte(doc), "exp/test.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := parseConfig([]byte(baseConfig+"---\nname: two\n"), "two.yaml", assets); err == nil || !strings.Contains(err.Error(), "two.yaml:22: a second YAML document") {
		t.Errorf("two documents: %v", err)
	}
	if _, err := parseConfig([]byte("name: [unclosed"), "bad.yaml", assets); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("syntax error: %v", err)
	}
}

// Prepare checks the model against the config before any work.
func TestPrepareChecksModel(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	doc := strings.NewReplacer("path: cifar10/x.bin", "path: cifar10/test_batch_first1017.bin",
		"models/m.onnx", "models/cifar10_squeezenet1_1.onnx", "input_size: 224", "input_size: 32").Replace(baseConfig)
	cfg, err := parseConfig([]byte(doc), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(context.Background(), cfg)
	want := "exp/test.yaml:10:15: sut.input_size: the model cifar10_squeezenet1_1.onnx takes 224×224 (width×height) images, but the config says 32×32; want [224, 224]"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	cfg.Data.Limit = 2000
	cfg.SUT.InputWidth, cfg.SUT.InputHeight = 224, 224
	if _, err = Prepare(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "data.limit: 2000 is more than the 1017 images") {
		t.Fatalf("limit: %v", err)
	}
	// Cancelled, it stops (while hashing the inputs).
	cfg.Data.Limit = 10
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err = Prepare(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// features.output takes any tensor of the feature model; a misspelt one
// is an error at the key, with the closest name and the list of tensors
// with their shapes, before any work.
func TestPrepareFeaturesOutput(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	doc := strings.NewReplacer("path: cifar10/x.bin", "path: cifar10/test_batch_first1017.bin",
		"models/m.onnx", "models/cifar10_squeezenet1_1.onnx",
		"kind: none", "kind: model\n  model: models/cifar10_resnet56.onnx\n  output: /GlobalAveragePool_output").Replace(baseConfig)
	cfg, err := parseConfig([]byte(doc), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(context.Background(), cfg)
	for _, want := range []string{`exp/test.yaml:14:11: features.output: cifar10_resnet56.onnx computes no tensor "/GlobalAveragePool_output"; did you mean "/GlobalAveragePool_output_0"?`,
		"/GlobalAveragePool_output_0 [-1 64 1 1], /Flatten_output_0 [-1 64], logits [-1 10]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v\nwant it to contain %s", err, want)
		}
	}
	cfg.Features.Output = "/GlobalAveragePool_output_0"
	e, err := Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := e.newExt()
	if err != nil {
		t.Fatal(err)
	}
	if ext.Dim() != 64 {
		t.Errorf("features of ResNet-56's global pool: Dim %d, want 64", ext.Dim())
	}
	if m := e.meta(); m.Features.Output != cfg.Features.Output {
		t.Errorf("run.json features %+v", m.Features)
	}
}

func TestParseSeeds(t *testing.T) {
	for in, want := range map[string][]uint64{
		"1-3": {1, 2, 3}, "5": {5}, "1-2, 7": {1, 2, 7}, "7,1-2": {7, 1, 2},
		"18446744073709551615":                      {math.MaxUint64},
		"18446744073709551614-18446744073709551615": {math.MaxUint64 - 1, math.MaxUint64},
		"0": {0},
	} {
		got, err := ParseSeeds(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for in, want := range map[string]string{
		"":                        `"" is not a seed`,
		"a":                       `"a" is not a seed`,
		"3-1":                     `"3-1" is not a seed or an ascending range`,
		"1,1":                     "seed 1 given twice",
		"1-5,9,3-4":               "seed 3 given twice",
		"-1":                      `"-1" is not a seed`,
		"18446744073709551616":    `"18446744073709551616" is not a seed`,
		"1-1000001":               "more than 1000000 seeds",
		"0-18446744073709551615":  "more than 1000000 seeds",
		"1-600000,700000-1300000": "more than 1000000 seeds",
	} {
		if _, err := ParseSeeds(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", in, err, want)
		}
	}
	// The limit itself is accepted, in linear time (a quadratic duplicate
	// check would take minutes here).
	got, err := ParseSeeds("1-500000,500001-1000000")
	if err != nil || len(got) != maxSeeds || got[maxSeeds-1] != maxSeeds {
		t.Fatalf("the limit: %d seeds, %v", len(got), err)
	}
}

// An agent is a name, a name with its options, or a mapping of name, id
// and options.
func TestAgentForms(t *testing.T) {
	assets := fakeAssets(t)
	agents := func(yaml string) string {
		i := strings.Index(baseConfig, "agents:\n")
		j := strings.Index(baseConfig, "seeds:")
		return baseConfig[:i] + "agents:\n" + yaml + baseConfig[j:]
	}
	c, err := parseConfig([]byte(agents("  - cover: {hidden: 0, psi: 2}\n  - random:\n  - linucb: {}\n  - {name: cover, id: c2}\n")), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	want := []AgentSpec{
		{ID: "cover", Name: "cover", Options: bandit.Options{"hidden": "0", "psi": "2"}},
		{ID: "random", Name: "random"},
		{ID: "linucb", Name: "linucb", Options: bandit.Options{}},
		{ID: "c2", Name: "cover"},
	}
	if !reflect.DeepEqual(c.Agents, want) {
		t.Fatalf("agents %+v\nwant %+v", c.Agents, want)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"  - cover: {hiden: 0}\n", `exp/test.yaml:15:13: agents[0].options.hiden: agent cover has no option "hiden"; did you mean "hidden"?`},
		{"  - cover: {hidden: -1}\n", `exp/test.yaml:15:21: agents[0].options.hidden: agent cover: option hidden="-1": want an integer in [0, 1024]`},
		{"  - covr: {hidden: 0}\n", `exp/test.yaml:15:5: agents[0].name: unknown agent "covr" (known: random, cover,`},
		{"  - cover: 3\n", `exp/test.yaml:15:12: agents[0].options: want a mapping of option: value, got "3"`},
		{"  - nme: cover\n", `exp/test.yaml:15:5: agents[0].nme: unknown key; did you mean "name"?`},
		{"  - cover: {hidden: 0}\n  - cover\n", `exp/test.yaml:16:5: agents[1]: agent id "cover" used twice`},
		{"  - cover: {hidden: [1]}\n", `agents[0].options.hidden: want a single value, got a list`},
		{"  - {name: cover, id: a/b}\n", `agents[0].id: "a/b" must not be empty or contain slashes or spaces`},
	} {
		_, err := parseConfig([]byte(agents(tc.yaml)), "exp/test.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v\nwant an error containing %q", tc.yaml, err, tc.want)
		}
	}
}

// Configuration errors are *ConfigError values; documents that are empty,
// not YAML or not a mapping say so with the position.
func TestConfigErrorType(t *testing.T) {
	assets := fakeAssets(t)
	for _, tc := range []struct{ doc, want string }{
		{"", "e.yaml: empty configuration; want a mapping of keys (amt config -ref lists them)"},
		{"# only a comment\n", "e.yaml: empty configuration"},
		{"name: a\nmode: [online\n", "e.yaml:1: did not find expected ',' or ']'"},
		{"- a\n", "e.yaml:1:1: top level: want a mapping of keys, got a list"},
		{"7\n", `e.yaml:1:1: top level: want a mapping of keys, got "7"`},
		{"name: a\ncase_study: classification\nmode: replay\ndata:\n", `e.yaml:4:6: data: want a mapping of keys, got nothing`},
	} {
		_, err := parseConfig([]byte(tc.doc), "e.yaml", assets)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v\nwant a ConfigError containing %q", tc.doc, err, tc.want)
		}
	}
	_, err := parseConfig([]byte(strings.Replace(baseConfig, "limit: 10", "limit: -2", 1)), "exp/test.yaml", assets)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.File != "exp/test.yaml" || ce.Line != 7 || ce.Column != 10 || ce.Key != "data.limit" || ce.Err == nil {
		t.Fatalf("%#v", err)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"), assets); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	os.WriteFile(big, []byte(baseConfig+"# "+strings.Repeat("x", maxConfigSize)+"\n"), 0o644)
	if _, err := LoadConfig(big, assets); err == nil || !strings.Contains(err.Error(), "big.yaml: more than 1048576 bytes") {
		t.Errorf("big file: %v", err)
	}
}

// The examples of the reference parse.
func TestConfigReferenceExamples(t *testing.T) {
	assets := fakeAssets(t)
	ref := ConfigReference()
	var blocks []string
	for rest := ref; ; {
		i := strings.Index(rest, "```yaml\n")
		if i < 0 {
			break
		}
		rest = rest[i+len("```yaml\n"):]
		j := strings.Index(rest, "```")
		blocks = append(blocks, rest[:j])
		rest = rest[j+3:]
	}
	if len(blocks) != 2 {
		t.Fatalf("%d YAML examples in the reference", len(blocks))
	}
	for _, b := range blocks {
		doc := baseConfig
		for _, key := range []string{"agents", "action_set"} {
			if strings.HasPrefix(b, key+":") {
				i := strings.Index(doc, key+":")
				j := i + strings.Index(doc[i:], "\n")
				for doc[j+1] == ' ' { // the key's indented lines
					j += 1 + strings.Index(doc[j+1:], "\n")
				}
				doc = doc[:i] + b + doc[j+1:]
			}
		}
		if doc == baseConfig {
			t.Fatalf("example %q replaces no key", b)
		}
		if _, err := parseConfig([]byte(doc), "exp/test.yaml", assets); err != nil {
			t.Errorf("example:\n%s: %v", b, err)
		}
	}
}

// TestConfigDevice reads sut.device and features.device: cpu by default,
// else the value given.
func TestConfigDevice(t *testing.T) {
	assets := fakeAssets(t)
	cfg, err := parseConfig([]byte(baseConfig), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SUT.Device != "cpu" {
		t.Errorf("default sut.device %q, want cpu", cfg.SUT.Device)
	}
	doc := strings.Replace(baseConfig, "  input_size: 224\n", "  input_size: 224\n  device: cuda,cpu\n", 1)
	doc = strings.Replace(doc, "kind: none", "kind: model\n  model: models/f.onnx\n  device: cuda", 1)
	if cfg, err = parseConfig([]byte(doc), "exp/test.yaml", assets); err != nil {
		t.Fatal(err)
	}
	if cfg.SUT.Device != "cuda,cpu" || cfg.Features.Device != "cuda" {
		t.Errorf("devices %q, %q, want cuda,cpu, cuda", cfg.SUT.Device, cfg.Features.Device)
	}
	// Strict errors: an unknown device, and features.device without a
	// feature model.
	for _, c := range []struct{ from, to, want string }{
		{"  input_size: 224\n", "  input_size: 224\n  device: cud\n", `sut.device: "cud" is not one of cpu, cuda, cuda,cpu; did you mean "cuda"?`},
		{"kind: none", "kind: none\n  device: cuda", "features.device: only when features.kind has model"},
	} {
		_, err := parseConfig([]byte(strings.Replace(baseConfig, c.from, c.to, 1)), "exp/test.yaml", assets)
		if err == nil || !strings.HasPrefix(err.Error(), "exp/test.yaml:") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want exp/test.yaml:LINE:COL: %s", err, c.want)
		}
	}
}
