package experiments

import (
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/scenario"
)

// configReferenceFile is the generated reference, beside the shipped configs.
const configReferenceFile = "configs/CONFIG.md"

var update = flag.Bool("update", false, "rewrite CONFIG.md from the schema")

// configs/CONFIG.md is the generated reference.
func TestConfigReference(t *testing.T) {
	want := ConfigReference()
	got, err := os.ReadFile(configReferenceFile)
	if err == nil && string(got) == want {
		return
	}
	if *update {
		if err := os.WriteFile(configReferenceFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("CONFIG.md differs from ConfigReference() (%v); run go test ./experiments -run TestConfigReference -update", err)
}

// dstFor returns a fresh destination for the schema key at path: the list
// item or mapping the key's value is stored in.
func dstFor(path string) any {
	switch {
	case strings.HasPrefix(path, "agents[]."):
		return &AgentSpec{}
	case strings.HasPrefix(path, "tune.grid[]."):
		return &TuneGrid{}
	case strings.HasPrefix(path, "power.pairs[]."):
		return &PowerPairConfig{}
	case strings.HasPrefix(path, "action_set.arms[]."):
		return &scenario.Arm{}
	case strings.HasPrefix(path, "action_set."):
		return &scenarioSpec{}
	}
	return &Config{}
}

// Every schema key is documented: a meaning, what a value is, and either
// required or a default that its own reader accepts; the reference lists
// it; nested keys sit under a key of the schema.
func TestSchemaDocumented(t *testing.T) {
	ref := ConfigReference()
	paths := map[string]bool{}
	for _, k := range schema {
		paths[k.path] = true
	}
	for _, k := range schema {
		if k.doc == "" || k.val.want == "" || k.val.read == nil {
			t.Errorf("%s: undocumented (doc %q, value %q)", k.path, k.doc, k.val.want)
		}
		if !strings.Contains(ref, "| `"+k.path+"` |") {
			t.Errorf("%s: not in the reference", k.path)
		}
		if k.required && (k.def != "" || k.compute != nil || k.defDoc != "") {
			t.Errorf("%s: required and with a default", k.path)
		}
		if k.compute != nil && (k.defDoc == "" || k.def != "") {
			t.Errorf("%s: a computed default needs defDoc (and no def)", k.path)
		}
		if (k.only == nil) != (k.onlyDoc == "") {
			t.Errorf("%s: only and onlyDoc go together", k.path)
		}
		if k.study != "" && !k.appliesTo(k.study) {
			t.Errorf("%s: study %q", k.path, k.study)
		}
		if p := strings.TrimSuffix(k.parent(), "[]"); p != "" && !paths[p] {
			t.Errorf("%s: its parent %s is not a schema key", k.path, p)
		}
		if k.def != "" {
			p := newParser("schema.yaml", t.TempDir())
			p.cfg.CaseStudy, p.cfg.Mode = k.study, "replay"
			if err := k.val.read(p, k.defNode(), k.path, dstFor(k.path)); err != nil {
				t.Errorf("%s: default %q: %v", k.path, k.def, err)
			}
		}
	}
}

// leafFields returns the addresses of the fields of the struct v points
// to, descending into the named sub-structs.
func leafFields(v any, descend ...reflect.Type) map[uintptr]string {
	out := map[uintptr]string{}
	var walk func(rv reflect.Value, prefix string)
	walk = func(rv reflect.Value, prefix string) {
		for i := 0; i < rv.NumField(); i++ {
			f := rv.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			fv := rv.Field(i)
			for _, d := range descend {
				if f.Type == d {
					walk(fv, prefix+f.Name+".")
					goto next
				}
			}
			out[fv.Addr().Pointer()] = prefix + f.Name
		next:
		}
	}
	walk(reflect.ValueOf(v).Elem(), "")
	return out
}

// Every field of Config (and of an agent, an arm, a user-defined scenario)
// is set by a key of the schema: a new field without its key fails here.
func TestSchemaCoversConfig(t *testing.T) {
	for _, tc := range []struct {
		dst     any
		prefix  string
		descend []reflect.Type
		skip    []string
	}{
		{&Config{}, "", []reflect.Type{reflect.TypeFor[DataConfig](), reflect.TypeFor[SUTConfig](), reflect.TypeFor[DetectionConfig](), reflect.TypeFor[FeaturesConfig](), reflect.TypeFor[TuneConfig](), reflect.TypeFor[RegressionConfig](), reflect.TypeFor[CorruptionConfig](), reflect.TypeFor[CheckConfig](), reflect.TypeFor[PowerConfig]()},
			[]string{"File", "Logf"}}, // set by the caller, not read from the file
		{&AgentSpec{}, "agents[].", nil, nil},
		{&TuneGrid{}, "tune.grid[].", nil, nil},
		{&PowerPairConfig{}, "power.pairs[].", nil, nil},
		{&scenario.Arm{}, "action_set.arms[].", nil, []string{"Param"}}, // Param comes from the relation
		{&scenarioSpec{}, "action_set.", nil, nil},
	} {
		fields := leafFields(tc.dst, tc.descend...)
		covered := map[uintptr]bool{}
		for _, k := range schema {
			if reflect.TypeOf(dstFor(k.path)) != reflect.TypeOf(tc.dst) || k.val.fields == nil {
				continue
			}
			for _, f := range k.val.fields(tc.dst) {
				p := reflect.ValueOf(f).Pointer()
				if _, ok := fields[p]; !ok {
					t.Errorf("%s sets no field of %T", k.path, tc.dst)
				}
				covered[p] = true
			}
		}
		for p, name := range fields {
			if covered[p] {
				continue
			}
			skip := false
			for _, s := range tc.skip {
				skip = skip || s == name
			}
			if !skip {
				t.Errorf("%T.%s is set by no key of the schema", tc.dst, name)
			}
		}
	}
}

// The reference shows package bandit's agent table as the bandit renders it
// (bandit's TestAgentsMarkdown checks that every agent's options and
// effective defaults are there).
func TestConfigReferenceAgents(t *testing.T) {
	if !strings.Contains(ConfigReference(), bandit.AgentsMarkdown()) {
		t.Error("the configuration reference does not show bandit.AgentsMarkdown()")
	}
}
