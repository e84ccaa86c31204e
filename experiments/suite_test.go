package experiments

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
)

// fashionTest is Debian's Fashion-MNIST test set (.ci/run installs it).
const fashionTest = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"

func needFashionMNIST(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(fashionTest); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install Debian's dataset-fashion-mnist: %v", err)
		}
		t.Skipf("Debian's dataset-fashion-mnist is not installed: %v", err)
	}
}

// tinySuite is a suite of two zoo models on the first 30 Fashion-MNIST
// test images, without context features.
func tinySuite(dir string) string {
	return `name: tiny
output: ` + filepath.Join(dir, "out") + `
cache: ` + filepath.Join(dir, "cache") + `
scenarios: [hierarchical, rotation]
objectives: [paper, fault]
agents: [random, hts, {name: epsilon-greedy, id: eg}]
seeds: 1-3
recommended: hts
features: {kind: none}
suts:
  - name: mlp
    case_study: classification
    data: {format: fashion-mnist, path: ` + fashionTest + `, limit: 30}
    sut: {model: models/fashion-mnist/fm-mlp.onnx, input_size: 28, mean: [0.2860], std: [0.3530]}
  - name: cnn
    case_study: classification
    data: {format: fashion-mnist, path: ` + fashionTest + `, limit: 30}
    sut: {model: models/fashion-mnist/fm-cnn.onnx, input_size: 28, mean: [0.2860], std: [0.3530]}
`
}

// TestSuiteRun runs a small suite twice: the environments are every SUT ×
// scenario × objective, every agent ran every seed, the oracles bound the
// scores, and the second run, from the run cache, and a third with an
// empty run cache write the same suite.json byte for byte.
func TestSuiteRun(t *testing.T) {
	needFashionMNIST(t)
	assets := sharedpath.ForTest(t, "assets")
	dir := t.TempDir()
	path := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(path, []byte(tinySuite(dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadSuite(path, assets)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunSuite(context.Background(), cfg, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Envs) != 2*2*2 || len(res.SUTs) != 2 || !res.SUTs[0].Grey {
		t.Fatalf("%d environments, %d SUTs (%+v)", len(res.Envs), len(res.SUTs), res.SUTs)
	}
	if res.Envs[0].Name != "mlp/hierarchical/paper" || res.Envs[3].Name != "mlp/rotation/fault" {
		t.Fatalf("environment order: %s, %s", res.Envs[0].Name, res.Envs[3].Name)
	}
	for _, e := range res.Envs {
		o := e.Oracles
		if !(o.Random <= o.BestVariant && o.BestVariant <= o.PerImage) || o.PerImage <= 0 {
			t.Fatalf("%s: oracles %+v, want random ≤ best variant ≤ per image", e.Name, o)
		}
		// Both SUTs are classifiers.
		if !(o.BestPerClass >= o.BestVariant-1e-9 && o.BestPerClass <= o.PerImage+1e-9) {
			t.Fatalf("%s: oracles %+v, want best variant ≤ best per class ≤ per image", e.Name, o)
		}
		for _, r := range e.Runs {
			for j, s := range r.Scores {
				if r.Iterations[j] != 30 || s < 0 || s > o.PerImage+1e-9 {
					t.Fatalf("%s, %s, seed %d: score %v in %d iterations (per-image oracle %v)", e.Name, r.Agent, res.Seeds[j], s, r.Iterations[j], o.PerImage)
				}
				if e.Objective == "fault" && math.Abs(s-float64(r.Violations[j])/30) > 1e-12 {
					t.Fatalf("%s: fault score %v, violation rate %v", e.Name, s, float64(r.Violations[j])/30)
				}
			}
		}
	}
	out := filepath.Join(cfg.Output, record.SuiteFile)
	first, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := record.ReadSuite(out); err != nil {
		t.Fatal(err)
	}
	for _, clear := range []bool{false, true} {
		if clear {
			if err := os.RemoveAll(filepath.Join(cfg.Cache, "suite-runs")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := RunSuite(context.Background(), cfg, io.Discard, nil); err != nil {
			t.Fatal(err)
		}
		again, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatalf("suite.json differs on a rerun (run cache cleared: %v)", clear)
		}
	}
}

// TestSuiteConfigErrors: a suite configuration's mistakes are
// ConfigErrors naming the file, the position and the key, with the SUT
// entry's index in the key.
func TestSuiteConfigErrors(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	dir := t.TempDir()
	good := tinySuite(dir)
	cases := []struct{ name, from, to, want string }{
		{"typo", "objectives:", "objectivs:", `objectivs: unknown key; did you mean "objectives"?`},
		{"scenario", "[hierarchical, rotation]", "[hierarchical, rotaton]", `scenarios[1]: "rotaton": want one of`},
		{"sut key", "  - name: cnn\n", "  - name: cnn\n    passes: 2\n", "suts[1].passes: unknown key"},
		{"sut model", "fm-cnn.onnx", "fm-cnnn.onnx", "suts[1].sut.model"},
		{"sut data", "limit: 30}\n    sut: {model: models/fashion-mnist/fm-cnn", "limit: 0.5}\n    sut: {model: models/fashion-mnist/fm-cnn", "suts[1].data.limit"},
		{"duplicate name", "name: cnn", "name: mlp", `suts[1].name: "mlp": want a plain name, unique`},
		{"agent", "recommended: hts", "recommended: htz", `recommended: "htz" is not among the agents`},
		{"missing suts", "suts:", "sutz:", "sutz: unknown key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(good, c.from, c.to, 1)
			if doc == good {
				t.Fatalf("%q not in the configuration", c.from)
			}
			path := filepath.Join(dir, c.name+".yaml")
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadSuite(path, assets)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+":") {
				t.Fatalf("err = %v, want %s:line:column: …%s…", err, path, c.want)
			}
		})
	}
}

// TestSuiteOracles computes the oracles of a hand-made table: two images,
// the rotation scenario's halving rewards.
func TestSuiteOracles(t *testing.T) {
	sc, err := mr.Builtin("rotation")
	if err != nil {
		t.Fatal(err)
	}
	vars := sc.Variants()
	rows := make([]record.Verdict, 2*len(vars))
	for i := range rows {
		v := vars[i%len(vars)]
		rows[i] = record.Verdict{Image: i / len(vars), MR: v.Action, Param: v.Value}
	}
	viol := func(img int, key string) {
		for j, v := range vars {
			if v.Key() == key {
				rows[img*len(vars)+j].Violation = true
				return
			}
		}
		t.Fatalf("no variant %s", key)
	}
	viol(0, "rotation:-5") // 10000
	viol(0, "rotation:90") // 10000/2^17
	viol(1, "rotation:90")
	o := SuiteOracles(rows, sc, 2)
	small := 10000 / math.Pow(2, 17)
	if o.PerImage != (10000+small)/2 || o.BestVariant != 10000.0/2 || o.BestVariantKey != "rotation:-5" {
		t.Fatalf("oracles %+v", o)
	}
	if want := (10000 + 2*small) / float64(len(vars)) / 2; math.Abs(o.Random-want) > 1e-9 {
		t.Fatalf("random %v, want %v", o.Random, want)
	}
	sc.Objective = scenario.Fault
	if o := SuiteOracles(rows, sc, 2); o.PerImage != 1 || o.BestVariant != 1 || o.BestVariantKey != "rotation:90" {
		t.Fatalf("fault oracles %+v", o)
	}
}

// TestSuiteOraclesPerClass: the best variant per predicted class lies
// between the best variant and the per-image oracle, and is left out of a
// table without classes (a detector's, PredOriginal −1).
func TestSuiteOraclesPerClass(t *testing.T) {
	sc, err := mr.Builtin("rotation")
	if err != nil {
		t.Fatal(err)
	}
	vars := sc.Variants()
	table := func(class []int, viol [][]string) []record.Verdict {
		rows := make([]record.Verdict, len(class)*len(vars))
		for i := range rows {
			v := vars[i%len(vars)]
			img := i / len(vars)
			rows[i] = record.Verdict{Image: img, MR: v.Action, Param: v.Value, PredOriginal: class[img],
				Violation: slices.Contains(viol[img], v.Key())}
		}
		return rows
	}
	viol := [][]string{{"rotation:-5", "rotation:90"}, {"rotation:90"}, {"rotation:90"}}
	small := 10000 / math.Pow(2, 17)
	for _, c := range []struct {
		name  string
		class []int
		want  float64
	}{
		// Class 0 (images 0 and 2): −5° earns 10000; class 1 (image 1): 90°.
		{"two classes", []int{0, 1, 0}, (10000 + small) / 3},
		// One class: the best variant.
		{"one class", []int{4, 4, 4}, 10000.0 / 3},
		// Every image its own class: the per-image oracle.
		{"a class per image", []int{0, 1, 2}, (10000 + 2*small) / 3},
		{"no classes", []int{-1, -1, -1}, 0},
	} {
		o := SuiteOracles(table(c.class, viol), sc, 3)
		if math.Abs(o.BestPerClass-c.want) > 1e-9 || o.BestVariant != 10000.0/3 || math.Abs(o.PerImage-(10000+2*small)/3) > 1e-9 {
			t.Errorf("%s: oracles %+v, want best per class %v", c.name, o, c.want)
		}
	}
}

// TestSuiteTune: a tune section runs every setting of the grid on every
// environment with the tuning seeds, keeps the best mean normalised score,
// and the agent then runs with the chosen options.
func TestSuiteTune(t *testing.T) {
	needFashionMNIST(t)
	assets := sharedpath.ForTest(t, "assets")
	dir := t.TempDir()
	doc := strings.Replace(tinySuite(dir), "seeds: 1-3\n", "seeds: 1-3\ntune:\n  seeds: 11-12\n  grid:\n    - agent: eg\n      options: {epsilon: [1, 0.05]}\n", 1)
	path := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadSuite(path, assets)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunSuite(context.Background(), cfg, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tuning) != 1 || len(res.Tuning[0].Settings) != 2 {
		t.Fatalf("tuning %+v", res.Tuning)
	}
	tu := res.Tuning[0]
	// ε = 1 is uniform random selection: its normalised score is about 0.
	if tu.Chosen != 1 || !(tu.Settings[1].MeanNorm > tu.Settings[0].MeanNorm) || math.Abs(tu.Settings[0].MeanNorm) > 0.2 {
		t.Fatalf("tuning chose %d of %+v", tu.Chosen, tu.Settings)
	}
	if res.Agents[2].Options["epsilon"] != "0.05" {
		t.Fatalf("agent eg ran with %v, want the chosen epsilon 0.05", res.Agents[2].Options)
	}
	// Seeds shared by tuning and evaluation are refused.
	bad := strings.Replace(doc, "seeds: 11-12", "seeds: 3-4", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSuite(path, assets); err == nil || !strings.Contains(err.Error(), "tune.seeds") {
		t.Fatalf("overlapping tuning seeds: %v", err)
	}
}

// TestSuiteRunCacheContext: a run's cache key covers the whole context and
// the table's images, so adding the grey-box block to the features, or
// another data.limit, runs every agent anew instead of reusing the runs
// made without it; a cached run of another length is run again.
func TestSuiteRunCacheContext(t *testing.T) {
	needFashionMNIST(t)
	assets := sharedpath.ForTest(t, "assets")
	dir := t.TempDir()
	doc := strings.Replace(tinySuite(dir), "scenarios: [hierarchical, rotation]", "scenarios: [basic]", 1)
	doc = strings.Replace(doc, "seeds: 1-3", "seeds: 1", 1)
	var res record.Suite
	runs := func(kind string) int {
		t.Helper()
		path := filepath.Join(dir, "suite.yaml")
		if err := os.WriteFile(path, []byte(strings.Replace(doc, "features: {kind: none}", "features: {kind: "+kind+"}", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadSuite(path, assets)
		if err != nil {
			t.Fatal(err)
		}
		if res, err = RunSuite(context.Background(), cfg, io.Discard, nil); err != nil {
			t.Fatal(err)
		}
		files, err := filepath.Glob(filepath.Join(cfg.Cache, "suite-runs", "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		return len(files)
	}
	first := runs("phash")
	if first != 2*2*3 {
		t.Fatalf("%d cached runs, want 2 SUTs × 2 objectives × 3 agents = 12", first)
	}
	if again := runs("phash"); again != first {
		t.Fatalf("the same suite cached %d runs more", again-first)
	}
	if with := runs("[phash, sut]"); with != 2*first {
		t.Fatalf("with the grey-box block: %d cached runs, want %d (new keys)", with, 2*first)
	}
	doc = strings.ReplaceAll(doc, "limit: 30", "limit: 20")
	if fewer := runs("phash"); fewer != 3*first {
		t.Fatalf("on 20 of the 30 images: %d cached runs, want %d (new keys)", fewer, 3*first)
	}
	for _, e := range res.Envs {
		for _, r := range e.Runs {
			if r.Iterations[0] != 20 {
				t.Fatalf("%s: %s ran %d iterations on 20 images", e.Name, r.Agent, r.Iterations[0])
			}
		}
	}
	// A cached run whose length is not the table's is run again.
	files, err := filepath.Glob(filepath.Join(dir, "cache", "suite-runs", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(f, []byte(`{"score":0.5,"violations":1,"iterations":2}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runs("phash")
	for _, e := range res.Envs {
		for _, r := range e.Runs {
			if r.Iterations[0] != 20 {
				t.Fatalf("%s: %s: a cached run of 2 iterations was used for 20 images", e.Name, r.Agent)
			}
		}
	}
}

// A suite run's cache key holds the agent's effective options: written
// out at their defaults they are the same run; a value other than the
// default (or a change of the default itself) is another run.
func TestSuiteRunKeyOptions(t *testing.T) {
	env := &suiteEnv{table: "table", sc: mr.Hierarchical(), rec: record.SuiteEnv{Objective: "fault"}}
	key := func(name string, opts bandit.Options) string {
		t.Helper()
		cell := &suiteCell{env: env, spec: AgentSpec{ID: name, Name: name, Options: opts}, seeds: []uint64{7}}
		k, err := suiteRunKey(suiteJob{cell: cell})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	defaults, err := bandit.Defaults("hts")
	if err != nil {
		t.Fatal(err)
	}
	written := bandit.Options{}
	for _, kv := range strings.Split(defaults.Canonical("hts"), ",") {
		k, v, _ := strings.Cut(kv, "=")
		written[k] = v
	}
	if len(written) < 5 {
		t.Fatalf("hts's canonical defaults %q: too few options", defaults.Canonical("hts"))
	}
	base := key("hts", nil)
	if got := key("hts", written); got != base {
		t.Errorf("hts with its defaults written out (%v): key %s, want %s as without options", written, got, base)
	}
	for _, opts := range []bandit.Options{{"interact-sign": "0"}, {"prior-value": "0"}, {"proj": "16"}} {
		if key("hts", opts) == base {
			t.Errorf("hts with %v: the key of its defaults", opts)
		}
	}
	if key("lints", nil) == base {
		t.Error("lints and hts: one key")
	}
	cell := &suiteCell{env: env, spec: AgentSpec{ID: "x", Name: "hts", Options: bandit.Options{"no-such": "1"}}, seeds: []uint64{7}}
	if _, err := suiteRunKey(suiteJob{cell: cell}); err == nil || !strings.Contains(err.Error(), "no-such") {
		t.Errorf("an unknown option: error %v, want one naming it", err)
	}
}

// TestSuiteRunKeyRevision checks that an agent's revision is part of its
// cached runs' keys, and that an agent still at revision 0 keeps the key
// made before revisions existed (its cached runs stay valid).
func TestSuiteRunKeyRevision(t *testing.T) {
	env := &suiteEnv{rec: record.SuiteEnv{Objective: "fault"}, sc: scenario.Scenario{Name: "basic"}, table: "t"}
	key := func(agent string) string {
		t.Helper()
		k, err := suiteRunKey(suiteJob{cell: &suiteCell{env: env, spec: AgentSpec{ID: agent, Name: agent}, seeds: []uint64{7}}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	old := func(agent string) string {
		t.Helper()
		cfg, err := bandit.Resolve(agent, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(struct {
			Version                    int
			Table, Scenario, Objective string
			Variants                   []string
			Agent, Options             string
			Seed                       uint64
		}{suiteRunVersion, "t", "basic", "fault", env.sc.Keys(), agent, cfg.Canonical(agent), 7})
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:])[:24] + ".json"
	}
	for _, agent := range bandit.Agents() {
		rev := bandit.AgentRevision(agent)
		if same := key(agent) == old(agent); same != (rev == 0) {
			t.Errorf("%s at revision %d: key %s, the key without revisions %s", agent, rev, key(agent), old(agent))
		}
	}
	if bandit.AgentRevision("cover") == 0 || bandit.AgentRevision("hts") != 0 {
		t.Errorf("revisions: cover %d, hts %d; want cover's > 0 (gd.go's exact inverse square root) and hts's 0", bandit.AgentRevision("cover"), bandit.AgentRevision("hts"))
	}
}
