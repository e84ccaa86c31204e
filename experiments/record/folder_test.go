package record

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/amt-dev/amt/scenario"
)

func TestLogFileNames(t *testing.T) {
	for _, seed := range []uint64{0, 1, 42, 1 << 63} {
		name := LogFile(seed)
		if ok, _ := filepath.Match(LogGlob, name); !ok {
			t.Errorf("%s does not match %s", name, LogGlob)
		}
		if got, ok := ParseLogFile(name); !ok || got != seed {
			t.Errorf("ParseLogFile(%q) = %d, %v", name, got, ok)
		}
	}
	for _, name := range []string{"seed-.jsonl", "seed-x.jsonl", "seed-1.json", "seeds-1.jsonl", "seed--1.jsonl"} {
		if _, ok := ParseLogFile(name); ok {
			t.Errorf("ParseLogFile(%q) accepted", name)
		}
	}
}

func TestMetaRoundTrip(t *testing.T) {
	deg := scenario.Param{Name: "angle", Unit: "degrees", Symbol: "DEG", Min: -360, Max: 360, Scale: 5}
	sc := scenario.Scenario{Name: "mine", Objective: scenario.Paper, Arms: []scenario.Arm{
		{Name: "blur", Action: "blur"},
		{Name: "rotation", Action: "rotation", Param: deg, Values: []float64{-10, 10}},
		{Name: "rotation:30", Action: "rotation", Param: deg, Values: []float64{30}},
	}}
	m := Meta{Experiment: "x", CaseStudy: "classification", Mode: "replay",
		SUT:      File{Path: "m.onnx", SHA256: "ab"},
		Features: FeaturesMeta{Kind: "model", Model: &File{Path: "f.onnx", SHA256: "cd"}},
		Data:     DataMeta{Format: "cifar10", File: File{Path: "d.bin", SHA256: "ef"}, Images: 30},
		Scenario: DescribeScenario(sc),
		Agents:   []AgentMeta{{ID: "cover-h0", Name: "cover", Options: map[string]string{"hidden": "0"}}},
		Seeds:    []uint64{1, 2}, Passes: 1, Iterations: 30, Version: Version()}
	if got := strings.Join(m.Scenario.Variants, " "); got != "blur rotation:-10 rotation:10 rotation:30" {
		t.Errorf("variants %s", got)
	}
	if len(m.Scenario.Params) != 1 || m.Scenario.Params["rotation"] != deg || m.Scenario.Objective != "unit" {
		t.Errorf("scenario metadata %+v", m.Scenario)
	}
	p := filepath.Join(t.TempDir(), MetaFile)
	if err := WriteMeta(p, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMeta(p)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip: %+v, %v\nwant %+v", got, err, m)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"case_study":"classification","scenario":{"name":"s","variants":["a"]},"extra":1}`, "extra"},
		{`{"case_study":"classification","scenario":{"name":"s"}}`, "variants"},
		{`{"case_study":"regression","scenario":{"name":"s","variants":["a"]}}`, "case_study"},
		{`{`, "run.json"},
	} {
		os.WriteFile(p, []byte(tc.doc), 0o644)
		if _, err := ReadMeta(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadMeta(%s): %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestTimingRoundTrip(t *testing.T) {
	tf := Timing{Agent: "cover", MeanDecisionUS: 800, MeanIterMS: 10, Runs: []RunTiming{{MeanDecisionUS: 800, MeanIterationMS: 10, MeanLoadMS: 0.5, MeanFeaturesMS: 4, MeanChooseUS: 500, MeanEvaluateMS: 5, MeanUpdateUS: 300}, {MeanDecisionUS: 790, MeanIterationMS: 9.5}}}
	p := filepath.Join(t.TempDir(), TimingFile)
	if err := WriteTiming(p, tf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTiming(p)
	if err != nil || !reflect.DeepEqual(got, tf) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}

// Build is the running executable's sha256, the same on every call.
func TestBuild(t *testing.T) {
	b := Build()
	if len(b) != 64 || b != Build() {
		t.Errorf("Build() = %q, then %q; want one 64-digit sha256", b, Build())
	}
}
