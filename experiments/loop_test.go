package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
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

// sweepFake runs a sweep with fakes into cache.
func sweepFake(t *testing.T, src *fakeSource, sc scenario.Scenario, cache string, cls fakeClassifier, ctx context.Context) (*Table, error) {
	t.Helper()
	return sweep(ctx, sweepConfig{
		study: fakeStudy(src, func() (classifier, error) { return cls, nil }), source: src,
		variants: sc.Variants(), relations: fakeRelations(sc),
		newExtractor: func() (extractor, error) { return fakeExtractor{}, nil },
		cacheDir:     cache, verdictKey: "v", featureKey: "f", workers: 2,
	})
}

// Online and replay runs with the same seed make the same choices and see
// the same verdicts, iteration by iteration.
func TestOnlineReplayIdentical(t *testing.T) {
	for _, name := range []string{"hierarchical", "basic", "rotation"} {
		t.Run(name, func(t *testing.T) {
			sc := mustScenario(t, name)
			src := newFakeSource(23)
			tab, err := sweepFake(t, src, mustScenario(t, "hierarchical"), t.TempDir(), fakeClassifier{}, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			rows, err := tab.Verdicts(sc.Variants())
			if err != nil {
				t.Fatal(err)
			}
			replay, err := NewReplayEnv(rows, tab.Features, tab.Dim, sc)
			if err != nil {
				t.Fatal(err)
			}
			online, err := newOnlineEnv(src, fakeExtractor{}, fakeClassifier{}, fakeRelations(sc), sc)
			if err != nil {
				t.Fatal(err)
			}
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
	env, err := newOnlineEnv(src, fakeExtractor{}, fakeClassifier{}, fakeRelations(sc), sc)
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
	env, err := newOnlineEnv(src, fakeExtractor{}, fakeClassifier{}, fakeRelations(sc), sc)
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
	// Timing on: the times appear in the summary.
	d3 := t.TempDir()
	s3, err := runSeedsFake(t, context.Background(), d3, true, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(d3, "summary.json"))
	if s3.MeanDecisionUS < 0 || !bytes.Contains(b, []byte("mean_iteration_ms")) && s3.Runs[0].MeanIterationMS > 0 {
		t.Errorf("timing summary %s", b)
	}
	if _, err := os.Stat(filepath.Join(d1, "timing.json")); err != nil {
		t.Error(err)
	}
}

// A cancelled run keeps the logs of completed seeds and writes no summary.
func TestRunSeedsCancel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(40)
	env, _ := newOnlineEnv(src, fakeExtractor{}, fakeClassifier{}, fakeRelations(sc), sc)
	_, err := RunSeeds(ctx, env, sc, func(seed uint64) (Agent, error) {
		if seed == 2 {
			cancel()
		}
		return newFakeAgent(sc), nil
	}, dir, SeedsOptions{Agent: "fake", Seeds: []uint64{1, 2, 3}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"seed-1.jsonl"}) {
		t.Fatalf("files after cancel: %v", names)
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
	env, err := NewReplayEnv(rows, tab.Features, tab.Dim, sc)
	if err != nil {
		t.Fatal(err)
	}
	spec := AgentSpec{ID: "cover", Name: "cover", Options: map[string]string{"hidden": "2"}}
	state := t.TempDir()
	run := func() (loaded bool) {
		t.Helper()
		_, err := RunSeeds(context.Background(), env, sc, func(seed uint64) (Agent, error) {
			a, l, err := loadOrNewAgent(statePath(state, seed), spec, sc, env.Dim(), seed)
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
