package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/amt-dev/amt/experiments/gate"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/scenario"
)

// goldenVerdicts reads a golden/verdicts table (the original pipeline's
// verdicts on the first 100 CIFAR-10 images): image → follow-up key →
// [pred_original, pred_transformed, violation].
func goldenVerdicts(t *testing.T, file string) map[int]map[string][3]int {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedpath.ForTest(t, "golden/verdicts"), file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]map[string][3]int{}
	for _, r := range rows[1:] { // image,mr,param,pred_original,pred_transformed,violation,…
		img, _ := strconv.Atoi(r[0])
		key := r[1]
		if r[2] != "" {
			v, err := strconv.ParseFloat(r[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			key = scenario.Key(r[1], v)
		}
		var v [3]int
		for j := range v {
			v[j], _ = strconv.Atoi(r[3+j])
		}
		if out[img] == nil {
			out[img] = map[string][3]int{}
		}
		out[img][key] = v
	}
	return out
}

// goldenCheck prepares a replay check of model over the first 100 CIFAR
// images whose verdict cache holds the golden table (so that nothing runs
// the model): the random agent, passes×100 iterations.
func goldenCheck(t *testing.T, dir, model string, size, passes int, table map[int]map[string][3]int, extra string) *Experiment {
	t.Helper()
	assets := sharedpath.ForTest(t, "assets")
	name := model[:len(model)-len(filepath.Ext(model))]
	doc := fmt.Sprintf(`name: %s
case_study: classification
mode: replay
data: {format: cifar10, path: cifar10/test_batch_first1017.bin, limit: 100}
sut: {model: models/%s, input_size: %d}
features: {kind: none}
action_set: hierarchical
agents: [random]
seeds: 7
passes: %d
log_interval: 1000
gallery: 0
output: %s
cache: %s
%s`, name, model, size, passes, filepath.Join(dir, name), filepath.Join(dir, "cache"), extra)
	cfg, err := parseConfig([]byte(doc), filepath.Join(dir, name+".yaml"), assets)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cdir, err := cacheDir(cfg.Cache, "verdicts", e.verdictKey)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range 100 {
		_, label, err := e.full.Image(i)
		if err != nil {
			t.Fatal(err)
		}
		j := classJudgement{Image: i, Label: label, Pred: -1}
		for _, v := range e.sweepVariants {
			g, ok := table[i][v.Key()]
			if !ok {
				t.Fatalf("golden table lacks image %d, %s", i, v.Key())
			}
			j.Pred = g[0]
			j.Preds = append(j.Preds, g[1])
		}
		enc.Encode(j)
	}
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cdir, "part-golden.jsonl"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestCheckRegressionGolden checks ResNet-20 with a check of SqueezeNet
// as the baseline, both replayed from the golden verdict tables: the
// MRs the gate fails are exactly those whose violation rate, counted in
// the tables over the follow-ups each session chose, rose by more than the
// margin with Holm-adjusted support (computed here from the tables and
// the sessions' traces, not from the result files the gate reads).
func TestCheckRegressionGolden(t *testing.T) {
	sq := goldenVerdicts(t, "squeezenet_first100.csv")
	rn := goldenVerdicts(t, "resnet20_first100.csv")
	dir := t.TempDir()
	const passes, margin, alpha = 30, 2.0, 0.05
	type pair struct {
		image   int
		variant string
	}
	run := func(e *Experiment) ([]pair, record.Check) {
		var pairs []pair
		res, err := e.Check(context.Background(), io.Discard, nil, CheckOptions{Replay: true, Trace: func(s Step) {
			v, err := e.Config.Scenario.Variant(s.Choice.Arm, s.Choice.Param)
			if err != nil {
				t.Fatal(err)
			}
			pairs = append(pairs, pair{s.Image, v.Key()})
		}})
		if err != nil {
			t.Fatal(err)
		}
		return pairs, res
	}
	base := goldenCheck(t, dir, "cifar10_squeezenet1_1.onnx", 224, passes, sq, "")
	basePairs, _ := run(base)
	cur := goldenCheck(t, dir, "cifar10_resnet20.onnx", 32, passes, rn,
		fmt.Sprintf("check: {baseline: %s, regression: {margin: %g, alpha: %g}}\n", base.Config.Output, margin, alpha))
	curPairs, res := run(cur)
	if len(curPairs) != passes*100 || len(basePairs) != passes*100 {
		t.Fatalf("%d and %d iterations, want %d", len(curPairs), len(basePairs), passes*100)
	}

	// The expected decision, from the tables.
	cells := func(pairs []pair, table map[int]map[string][3]int) map[string]map[string]gate.Stratum {
		out := map[string]map[string]gate.Stratum{}
		for _, p := range pairs {
			mr, _, ok := scenario.ParseKey(p.variant)
			if !ok {
				mr = p.variant
			}
			if out[mr] == nil {
				out[mr] = map[string]gate.Stratum{}
			}
			s := out[mr][p.variant]
			s.N1++
			s.X1 += table[p.image][p.variant][2]
			out[mr][p.variant] = s
		}
		return out
	}
	c1, c0 := cells(curPairs, rn), cells(basePairs, sq)
	var mrs []string
	for _, a := range cur.Config.Scenario.Arms {
		mrs = append(mrs, a.Action)
	}
	var tested []string
	var ps, rises []float64
	for _, mr := range mrs {
		var strata []gate.Stratum
		keys := map[string]bool{}
		for k := range c1[mr] {
			keys[k] = true
		}
		for k := range c0[mr] {
			keys[k] = true
		}
		for k := range keys {
			strata = append(strata, gate.Stratum{X1: c1[mr][k].X1, N1: c1[mr][k].N1, X0: c0[mr][k].X1, N0: c0[mr][k].N1})
		}
		rd, ok := gate.RiskDifference(strata)
		if !ok {
			continue
		}
		p, _ := gate.IncreaseTest(strata)
		tested, ps, rises = append(tested, mr), append(ps, p), append(rises, 100*rd)
	}
	adj := gate.Holm(ps)
	var want, notWant []string
	for i, mr := range tested {
		if rises[i] > margin && adj[i] <= alpha {
			want = append(want, mr)
		} else {
			notWant = append(notWant, mr)
		}
	}
	if len(want) == 0 || len(notWant) == 0 {
		t.Fatalf("the tables flag %v and pass %v: the test would not tell a gate that flags all or none", want, notWant)
	}
	var got []string
	for _, c := range res.Conditions {
		if c.Kind == record.ConditionRegression && c.Status == record.StatusFail {
			got = append(got, c.MR)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the gate fails %v; the tables say %v (rises %v pp, Holm p %v)", got, want, rises, adj)
	}
	if res.Verdict != record.VerdictFail || res.Baseline == nil || res.Baseline.Iterations != passes*100 {
		t.Errorf("check %+v", res)
	}
	t.Logf("flagged %v, passed %v (rises %.1f pp, Holm-adjusted p %.3g)", want, notWant, rises, adj)
}
