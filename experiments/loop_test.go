package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
	"github.com/amt-dev/amt/sut"
)

func mustScenario(t *testing.T, name string) scenario.Scenario {
	t.Helper()
	sc, err := mr.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	return sc
}

// The hierarchical follow-ups must be in Tetraband order, the order of the
// golden MR index (variant 0 there is the original).
func TestHierarchicalOrderMatchesGolden(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/mr")
	f, err := os.Open(filepath.Join(dir, "index.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range recs[2:] { // header, original
		want = append(want, record.Verdict{MR: r[1], Param: parseParam(t, r[2])}.ParamKey())
	}
	var got []string
	for _, v := range mustScenario(t, "hierarchical").Variants() {
		got = append(got, v.Key())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("variants\n%v\nwant\n%v", got, want)
	}
}

func parseParam(t *testing.T, s string) float64 {
	if s == "" {
		return math.NaN()
	}
	rows, err := record.DecodeVerdictsCSV(strings.NewReader("image,mr,param,violation\n0,x,"+s+",0\n"), "p")
	if err != nil {
		t.Fatal(err)
	}
	return rows[0].Param
}

func TestOrder(t *testing.T) {
	o := imageOrder(10, 7, 3)
	if len(o) != 30 {
		t.Fatalf("len %d", len(o))
	}
	for p := 0; p < 3; p++ {
		pass := slices.Clone(o[p*10 : (p+1)*10])
		slices.Sort(pass)
		for i, v := range pass {
			if v != i {
				t.Fatalf("pass %d is not a permutation: %v", p, o[p*10:(p+1)*10])
			}
		}
	}
	if slices.Equal(o[:10], o[10:20]) {
		t.Error("passes are not reshuffled")
	}
	if !slices.Equal(o, imageOrder(10, 7, 3)) || slices.Equal(o, imageOrder(10, 8, 3)) {
		t.Error("order is not a function of the seed")
	}
}

// sameContexts checks that two Envs have the same layout and give
// bit-identical contexts for every image, and that the grey-box blocks are
// not all the same.
func sameContexts(t *testing.T, a, b Env) {
	t.Helper()
	if a.Layout() != b.Layout() || a.Len() != b.Len() {
		t.Fatalf("layouts %+v and %+v, %d and %d images", a.Layout(), b.Layout(), a.Len(), b.Len())
	}
	grey := map[string]bool{}
	defer func() {
		if a.Layout().Grey > 0 && len(grey) < 2 {
			t.Errorf("every image has the same grey-box block %v", grey)
		}
	}()
	for i := 0; i < a.Len(); i++ {
		x, err := a.Context(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.Context(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		if len(x) != a.Layout().Dim || !slices.EqualFunc(x, y, func(u, v float32) bool { return math.Float32bits(u) == math.Float32bits(v) }) {
			t.Fatalf("image %d: contexts %v and %v", i, x, y)
		}
		grey[fmt.Sprint(x[len(x)-a.Layout().Grey:])] = true
	}
}

// sweepFake runs a sweep with fakes into cache.
func sweepFake(t *testing.T, src *fakeSource, sc scenario.Scenario, cache string, cls fakeClassifier, ctx context.Context) (*Table, error) {
	t.Helper()
	return sweepFakeSut(t, src, sc, cache, cls, ctx, false)
}

// sweepFakeSut is sweepFake, with the grey-box blocks when sut is set.
func sweepFakeSut(t *testing.T, src *fakeSource, sc scenario.Scenario, cache string, cls fakeClassifier, ctx context.Context, sut bool) (*Table, error) {
	t.Helper()
	return sweep(ctx, sweepConfig{
		study: fakeStudy(src, func() (classifier, error) { return cls, nil }), source: src,
		variants: sc.Variants(), relations: fakeRelations(sc),
		newExtractor: func() (extractor, error) { return fakeExtractor{}, nil },
		cacheDir:     cache, verdictKey: "v", featureKey: "f", workers: 2, sut: sut,
	})
}

// Online and replay runs with the same seed make the same choices and see
// the same verdicts, iteration by iteration.
func TestOnlineReplayIdentical(t *testing.T) {
	for _, name := range []string{"hierarchical", "basic", "rotation", "hierarchical+sut", "rotation+sut"} {
		t.Run(name, func(t *testing.T) {
			name, withSut := strings.CutSuffix(name, "+sut")
			sc := mustScenario(t, name)
			src := newFakeSource(23)
			tab, err := sweepFakeSut(t, src, mustScenario(t, "hierarchical"), t.TempDir(), fakeClassifier{}, context.Background(), withSut)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := tab.Verdicts(sc.Variants())
			if err != nil {
				t.Fatal(err)
			}
			feats, layout, err := tab.contexts(withSut)
			if err != nil {
				t.Fatal(err)
			}
			replay, err := NewReplayEnv(rows, feats, layout, sc)
			if err != nil {
				t.Fatal(err)
			}
			sutDim := 0
			if withSut {
				sutDim = 4 // 3 classes and the margin
			}
			online, err := newOnlineEnv(src, fakeExtractor{}, sutDim, fakeClassifier{}, fakeRelations(sc), sc)
			if err != nil {
				t.Fatal(err)
			}
			sameContexts(t, online, replay)
			run := func(env Env) ([]Step, runResult) {
				var steps []Step
				res, err := runLoop(context.Background(), env, sc, newFakeAgent(sc), loopOptions{
					AgentName: "fake", Seed: 5, Passes: 2, LogInterval: 10, Trace: func(s Step) { steps = append(steps, s) }})
				if err != nil {
					t.Fatal(err)
				}
				return steps, res
			}
			s1, r1 := run(online)
			s2, r2 := run(replay)
			if len(s1) != 46 {
				t.Fatalf("%d steps, want 46", len(s1))
			}
			if !reflect.DeepEqual(s1, s2) {
				t.Fatalf("online and replay traces differ:\n%v\n%v", s1, s2)
			}
			if !reflect.DeepEqual(r1.Run, r2.Run) || !reflect.DeepEqual(r1.Log, r2.Log) {
				t.Fatalf("online and replay results differ:\n%+v\n%+v", r1.Run, r2.Run)
			}
			viol := 0
			for _, s := range s1 {
				if s.Violated {
					viol++
				}
			}
			if viol == 0 || viol == len(s1) || r1.Run.Violations != viol {
				t.Fatalf("degenerate fake: %d of %d violations (run says %d)", viol, len(s1), r1.Run.Violations)
			}
			if got := len(r1.Log); got != 5 || r1.Log[4].Iteration != 46 || r1.Log[0].Iteration != 10 {
				t.Fatalf("log lines %d, last %+v", got, r1.Log[len(r1.Log)-1])
			}
		})
	}
}

func TestRunLoopCounts(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(30)
	env, err := newOnlineEnv(src, fakeExtractor{}, 0, fakeClassifier{}, fakeRelations(sc), sc)
	if err != nil {
		t.Fatal(err)
	}
	var steps []Step
	res, err := runLoop(context.Background(), env, sc, newFakeAgent(sc), loopOptions{Seed: 1, Iterations: 25, Trace: func(s Step) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Run
	if r.Iterations != 25 || len(steps) != 25 || len(res.Log) != 1 {
		t.Fatalf("iterations %d, steps %d, log lines %d", r.Iterations, len(steps), len(res.Log))
	}
	// Arms and params add up; every image is used at most once in a pass.
	arms, params, seen := record.Counts{}, record.Counts{}, map[int]bool{}
	for _, c := range r.Arms {
		arms = arms.Add(c)
	}
	for k, c := range r.Params {
		if !strings.HasPrefix(k, "rotation:") && !strings.HasPrefix(k, "shear:") {
			t.Errorf("param key %q", k)
		}
		params = params.Add(c)
	}
	if arms.Count != 25 || arms.Violations != r.Violations || params.Count != r.Arms["rotation"].Count+r.Arms["shear"].Count {
		t.Errorf("counts do not add up: arms %+v params %+v run %+v", arms, params, r)
	}
	for _, s := range steps {
		if seen[s.Image] {
			t.Errorf("image %d used twice in one pass", s.Image)
		}
		seen[s.Image] = true
	}
	if _, err := runLoop(context.Background(), env, sc, newFakeAgent(sc), loopOptions{Seed: 1, Iterations: 31}); err == nil {
		t.Error("more iterations than passes × cases: no error")
	}
}

func runSeedsFake(t *testing.T, ctx context.Context, dir string, timing bool, seeds []uint64) (record.Summary, error) {
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(40)
	env, err := newOnlineEnv(src, fakeExtractor{}, 0, fakeClassifier{}, fakeRelations(sc), sc)
	if err != nil {
		t.Fatal(err)
	}
	return RunSeeds(ctx, env, sc, func(uint64) (Agent, error) { return newFakeAgent(sc), nil }, dir,
		SeedsOptions{Agent: "fake", Mode: "online", Seeds: seeds, Interval: 7, Timing: timing})
}

// Same seeds → byte-identical summary and logs (with timing off).
func TestRunSeedsDeterministic(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	if _, err := runSeedsFake(t, context.Background(), d1, false, []uint64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := runSeedsFake(t, context.Background(), d2, false, []uint64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "seed-1.jsonl", "seed-2.jsonl", "seed-3.jsonl"} {
		b1, err1 := os.ReadFile(filepath.Join(d1, f))
		b2, err2 := os.ReadFile(filepath.Join(d2, f))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(b1, b2) {
			t.Errorf("%s differs between identical runs", f)
		}
		if bytes.Contains(b1, []byte("mean_")) {
			t.Errorf("%s holds a measured time with timing off", f)
		}
	}
	s, err := record.ReadSummary(filepath.Join(d1, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 3 || s.Runs[1].Seed != 2 || s.Runs[0].Iterations != 40 || reflect.DeepEqual(s.Runs[0].Arms, s.Runs[1].Arms) {
		t.Errorf("summary %+v", s)
	}
	lines, err := record.ReadLog(filepath.Join(d1, "seed-2.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 6 || lines[5].Iteration != 40 || lines[5].Violations != s.Runs[1].Violations || lines[0].Iteration != 7 {
		t.Errorf("log %+v", lines)
	}
	// Timing on: the times appear in the summary, and they are the
	// measured ones of timing.json.
	d3 := t.TempDir()
	s3, err := runSeedsFake(t, context.Background(), d3, true, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(d3, "summary.json"))
	tf, err := record.ReadTiming(filepath.Join(d3, "timing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"mean_iteration_ms"`)) || !bytes.Contains(b, []byte(`"mean_decision_us"`)) ||
		len(tf.Runs) != 1 || s3.Runs[0].MeanIterationMS <= 0 || s3.Runs[0].MeanIterationMS != tf.Runs[0].MeanIterationMS ||
		s3.MeanDecisionUS <= 0 || s3.MeanDecisionUS != tf.MeanDecisionUS {
		t.Errorf("timing on: summary %s, timing.json %+v", b, tf)
	}
	// Timing off: timing.json still has the measured times.
	tf, err = record.ReadTiming(filepath.Join(d1, "timing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tf.Runs) != 3 || tf.Runs[0].MeanIterationMS <= 0 || tf.MeanDecisionUS <= 0 {
		t.Errorf("timing off: timing.json %+v", tf)
	}
}

// slowSource, slowExtractor and slowClassifier wait before answering, so
// that each phase of an iteration takes at least a known time.
type slowSource struct {
	source
	d time.Duration
}

func (s slowSource) Image(i int) (rgb.Image, int, error) {
	time.Sleep(s.d)
	return s.source.Image(i)
}

type slowExtractor struct {
	extractor
	d     time.Duration
	calls *atomic.Int64
}

func (s slowExtractor) Extract(imgs []rgb.Image) ([][]float32, error) {
	s.calls.Add(1)
	time.Sleep(s.d)
	return s.extractor.Extract(imgs)
}

type slowClassifier struct {
	classifier
	d time.Duration
}

func (s slowClassifier) Classify(imgs []rgb.Image) ([]sut.Prediction, error) {
	time.Sleep(s.d)
	return s.classifier.Classify(imgs)
}

// contextFreeAgent is fakeAgent declaring that it ignores the context.
type contextFreeAgent struct{ *fakeAgent }

func (contextFreeAgent) UsesContext() bool { return false }

// The loop times what the original timed as an iteration — the context
// features (only for agents that read them), the choice, the evaluation
// and the update — and times loading the image apart; an agent that does
// not read the context gets no features computed (and the same choices).
// Only lower bounds are checked (a sleep takes at least its time).
func TestLoopTiming(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	const load, feat, eval = 6 * time.Millisecond, 4 * time.Millisecond, 2 * time.Millisecond
	run := func(a Agent) (runResult, int64) {
		var calls atomic.Int64
		env, err := newOnlineEnv(slowSource{newFakeSource(10), load}, slowExtractor{fakeExtractor{}, feat, &calls},
			0, slowClassifier{fakeClassifier{}, eval}, fakeRelations(sc), sc)
		if err != nil {
			t.Fatal(err)
		}
		res, err := runLoop(context.Background(), env, sc, a, loopOptions{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		return res, calls.Load()
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	check := func(name string, tm record.RunTiming, features bool) {
		t.Helper()
		sum := tm.MeanFeaturesMS + tm.MeanChooseUS/1000 + tm.MeanEvaluateMS + tm.MeanUpdateUS/1000
		if math.Abs(tm.MeanIterationMS-sum) > 1e-9*sum {
			t.Errorf("%s: iteration %v ms is not features + choose + evaluate + update = %v ms", name, tm.MeanIterationMS, sum)
		}
		if math.Abs(tm.MeanDecisionUS-(tm.MeanChooseUS+tm.MeanUpdateUS)) > 1e-9*tm.MeanDecisionUS {
			t.Errorf("%s: decision %v µs is not choose + update", name, tm.MeanDecisionUS)
		}
		if tm.MeanLoadMS < ms(load) || tm.MeanEvaluateMS < ms(eval) || tm.MeanChooseUS <= 0 || tm.MeanUpdateUS <= 0 {
			t.Errorf("%s: phases not timed: %+v", name, tm)
		}
		if features && tm.MeanFeaturesMS < ms(feat) || !features && tm.MeanFeaturesMS > ms(feat)/2 {
			t.Errorf("%s: features %v ms", name, tm.MeanFeaturesMS)
		}
	}
	reads, n1 := run(newFakeAgent(sc))
	check("agent reading the context", reads.Time, true)
	if n1 != 10 {
		t.Errorf("agent reading the context: %d feature extractions for 10 images", n1)
	}
	ignores, n2 := run(contextFreeAgent{newFakeAgent(sc)})
	check("context-free agent", ignores.Time, false)
	if n2 != 0 {
		t.Errorf("context-free agent: %d feature extractions, want none", n2)
	}
}

// A cancelled run writes nothing into the agent's folder: a folder of an
// earlier run stays as it was (its files still belong together) and no
// temporary folder is left beside it; the error says what happened.
func TestRunSeedsCancel(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "fake")
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(40)
	env, _ := newOnlineEnv(src, fakeExtractor{}, 0, fakeClassifier{}, fakeRelations(sc), sc)
	run := func(ctx context.Context, seeds []uint64, onSeed func(uint64)) error {
		_, err := RunSeeds(ctx, env, sc, func(seed uint64) (Agent, error) {
			onSeed(seed)
			return newFakeAgent(sc), nil
		}, dir, SeedsOptions{Agent: "fake", Seeds: seeds})
		return err
	}
	if err := run(context.Background(), []uint64{1, 2}, func(uint64) {}); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, n := range []string{"seed-1.jsonl", "seed-2.jsonl", "summary.json", "timing.json"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		before[n] = b
	}
	ctx, cancel := context.WithCancel(context.Background())
	err := run(ctx, []uint64{1, 2, 3}, func(seed uint64) {
		if seed == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "agent fake interrupted in seed 2, after 1 of 3 seeds") {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"seed-1.jsonl", "seed-2.jsonl", "summary.json", "timing.json"}) {
		t.Fatalf("files after cancel: %v", names)
	}
	for n, b := range before {
		if now, _ := os.ReadFile(filepath.Join(dir, n)); !bytes.Equal(now, b) {
			t.Errorf("%s changed by the cancelled run", n)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("left beside the folder: %v", entries)
	}
}

// With a state folder, runs save their agents, and a later run continues
// from the saved state (the paper's "load existing or initialise new").
func TestAgentStateContinues(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(12)
	tab, err := sweepFake(t, src, sc, t.TempDir(), fakeClassifier{}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := tab.Verdicts(sc.Variants())
	env, err := NewReplayEnv(rows, tab.Features, bandit.Layout{Dim: tab.Dim}, sc)
	if err != nil {
		t.Fatal(err)
	}
	spec := AgentSpec{ID: "cover", Name: "cover", Options: map[string]string{"hidden": "2"}}
	state := t.TempDir()
	run := func() (loaded bool) {
		t.Helper()
		_, err := RunSeeds(context.Background(), env, sc, func(seed uint64) (Agent, error) {
			a, l, err := loadOrNewAgent(statePath(state, seed), spec, sc, env.Layout(), seed)
			loaded = l
			return a, err
		}, t.TempDir(), SeedsOptions{Agent: "cover", Seeds: []uint64{3}, StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		return loaded
	}
	if run() {
		t.Fatal("first run loaded a state")
	}
	b1, err := os.ReadFile(statePath(state, 3))
	if err != nil {
		t.Fatal(err)
	}
	if !run() {
		t.Fatal("second run did not continue from the saved state")
	}
	b2, _ := os.ReadFile(statePath(state, 3))
	if bytes.Equal(b1, b2) {
		t.Error("the continued run did not update the state file")
	}
}

// A corruption report's runs count, per parameterised follow-up, those
// whose prediction differs from the label (record.Run.ParamErrors);
// other runs leave it out.
func TestRunLoopParamErrors(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	env := newFakeOnlineEnv(t, 30, sc)
	for _, tc := range []struct {
		name string
		on   bool
	}{{"counted", true}, {"left out", false}} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]int{}
			res, err := runLoop(context.Background(), env, sc, newFakeAgent(sc), loopOptions{Seed: 2, Iterations: 30, ParamErrors: tc.on,
				Trace: func(s Step) {
					if _, ok := want[s.Variant]; !ok {
						want[s.Variant] = 0
					}
					if s.Outcome.Label >= 0 && s.Outcome.PredModified != s.Outcome.Label {
						want[s.Variant]++
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Run.ParamErrors
			if !tc.on {
				if got != nil {
					t.Fatalf("ParamErrors %v without the option", got)
				}
				return
			}
			total := 0
			for k, c := range res.Run.Params {
				if got[k] != want[k] || got[k] > c.Count {
					t.Errorf("%s: %d errors, want %d (of %d follow-ups)", k, got[k], want[k], c.Count)
				}
				total += got[k]
			}
			if len(got) != len(res.Run.Params) || total == 0 {
				t.Errorf("ParamErrors %v: want every parameterised variant of %d, some errors", got, len(res.Run.Params))
			}
		})
	}
}

// With an audit sample, a corruption report's runs also count the errors
// among the audit follow-ups alone (record.Run.AuditErrors), for an
// unbiased estimate of the error profile; without the audit or the error
// count they leave it out.
func TestRunLoopAuditErrors(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	env := newFakeOnlineEnv(t, 30, sc)
	for _, tc := range []struct {
		name        string
		share       float64
		paramErrors bool
	}{{"counted", 0.5, true}, {"no audit", 0, true}, {"no error count", 0.5, false}} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]int{}
			res, err := runLoop(context.Background(), env, sc, withAudit(newFakeAgent(sc), sc, tc.share, 2), loopOptions{Seed: 2, Iterations: 30, ParamErrors: tc.paramErrors,
				Trace: func(s Step) {
					if v, err := sc.Variant(s.Choice.Arm, s.Choice.Param); err != nil || !s.Choice.Audit || math.IsNaN(v.Value) {
						return
					}
					if s.Outcome.Label >= 0 && s.Outcome.PredModified != s.Outcome.Label {
						want[s.Variant]++
					} else {
						want[s.Variant] += 0
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Run.AuditErrors
			if tc.share == 0 || !tc.paramErrors {
				if got != nil {
					t.Fatalf("AuditErrors %v without an audit and an error count", got)
				}
				return
			}
			if len(got) == 0 || len(got) != len(want) {
				t.Fatalf("AuditErrors %v, want %v", got, want)
			}
			total := 0
			for k, n := range got {
				if n != want[k] || n > res.Run.Audit[k].Count || n > res.Run.ParamErrors[k] {
					t.Errorf("%s: %d audit errors, want %d (of %d audit follow-ups, %d errors in all)", k, n, want[k], res.Run.Audit[k].Count, res.Run.ParamErrors[k])
				}
				total += n
			}
			if total == 0 {
				t.Errorf("AuditErrors %v: no errors", got)
			}
		})
	}
}
