package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
)

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := dispatch(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, args)
	return out.String(), errb.String(), err
}

// replayFixture writes a synthetic verdict table over the hierarchical
// follow-ups of n images (rotation by more than 40° and invert always
// violate, the rest rarely) and a [n, 4] feature file.
func replayFixture(t *testing.T, n int) (table, feats string, rows []record.Verdict, f []float32) {
	t.Helper()
	dir := t.TempDir()
	sc, err := mr.Builtin("hierarchical")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		for _, v := range sc.Variants() {
			viol := v.Action == "invert" || (v.Action == "rotation" && math.Abs(v.Value) > 40) || rng.IntN(10) == 0
			pt := 3
			if viol {
				pt = 5
			}
			rows = append(rows, record.Verdict{Image: i, MR: v.Action, Param: v.Value, Violation: viol, PredOriginal: 3,
				PredTransformed: pt, Label: 3, MapOriginal: math.NaN(), MapTransformed: math.NaN()})
		}
		for k := 0; k < 4; k++ {
			f = append(f, rng.Float32())
		}
	}
	table, feats = filepath.Join(dir, "t.csv"), filepath.Join(dir, "f.f32")
	if err := record.WriteVerdictsCSV(table, rows, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(feats, record.EncodeFeatures(f), 0o644); err != nil {
		t.Fatal(err)
	}
	return table, feats, rows, f
}

func TestReplayCommand(t *testing.T) {
	table, feats, _, _ := replayFixture(t, 30)
	var outs [2]string
	for i := range outs {
		outs[i] = filepath.Join(t.TempDir(), "out")
		stdout, _, err := runCmd(t, "replay", "-verdicts", table, "-features", feats, "-scenario", "hierarchical",
			"-agent", "cover", "-agent-opts", "hidden=4", "-seeds", "1-3", "-passes", "2", "-log-interval", "10", "-out", outs[i])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout, "cover on hierarchical: 3 runs") {
			t.Errorf("stdout %q", stdout)
		}
	}
	for _, f := range []string{"summary.json", "seed-1.jsonl", "seed-2.jsonl", "seed-3.jsonl"} {
		b1, err1 := os.ReadFile(filepath.Join(outs[0], f))
		b2, err2 := os.ReadFile(filepath.Join(outs[1], f))
		if err1 != nil || err2 != nil || !bytes.Equal(b1, b2) {
			t.Errorf("%s: not byte-identical across runs with the same seeds (%v, %v)", f, err1, err2)
		}
	}
	s, err := record.ReadSummary(filepath.Join(outs[0], "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Agent != "cover" || s.Scenario != "hierarchical" || len(s.Runs) != 3 || s.Runs[2].Seed != 3 || s.Runs[0].Iterations != 60 ||
		len(s.Runs[0].Arms) != 7 || len(s.Runs[0].Params) != 54 || s.MeanDecisionUS != 0 {
		t.Errorf("summary %+v", s)
	}
	log, err := record.ReadLog(filepath.Join(outs[0], "seed-2.jsonl"))
	if err != nil || len(log) != 6 || log[5].Iteration != 60 || log[5].Violations != s.Runs[1].Violations {
		t.Errorf("log: %v %+v", err, log)
	}
	// Flat scenario, timing on.
	out := filepath.Join(t.TempDir(), "rot")
	if _, _, err := runCmd(t, "replay", "-verdicts", table, "-features", feats, "-scenario", "rotation", "-agent", "random",
		"-seeds", "4", "-timing", "-out", out); err != nil {
		t.Fatal(err)
	}
	s, err = record.ReadSummary(filepath.Join(out, "summary.json"))
	if err != nil || len(s.Runs[0].Arms) != 36 || s.Runs[0].Arms["rotation:-90"].Count == 0 && s.Runs[0].Arms["rotation:90"].Count == 0 && s.Runs[0].Iterations != 30 {
		t.Errorf("rotation summary %v %+v", err, s)
	}
}

// The largest seed runs one seed (the range counter does not wrap around),
// and a seed range over the limit is refused with the limit.
func TestReplayLargestSeed(t *testing.T) {
	table, feats, _, _ := replayFixture(t, 5)
	out := filepath.Join(t.TempDir(), "out")
	stdout, _, err := runCmd(t, "replay", "-verdicts", table, "-features", feats, "-agent", "random", "-seeds", "18446744073709551615", "-out", out)
	if err != nil || !strings.Contains(stdout, "random on hierarchical: 1 run, ") {
		t.Fatalf("stdout %q, err %v", stdout, err)
	}
	if _, err := os.Stat(filepath.Join(out, "seed-18446744073709551615.jsonl")); err != nil {
		t.Error(err)
	}
	_, _, err = runCmd(t, "replay", "-verdicts", table, "-features", feats, "-agent", "random", "-seeds", "1-1000001", "-out", out)
	if err == nil || !strings.Contains(err.Error(), "more than 1000000 seeds (the limit") {
		t.Errorf("over the limit: %v", err)
	}
}

// Bad inputs are errors before any work, and nothing is written.
func TestReplayCommandErrors(t *testing.T) {
	table, feats, rows, f := replayFixture(t, 5)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var missing bytes.Buffer
	if err := record.EncodeVerdictsCSV(&missing, append(append([]record.Verdict(nil), rows[:70]...), rows[71:]...), false); err != nil {
		t.Fatal(err)
	}
	missingTable := write("missing.csv", missing.Bytes())
	raggedFeats := write("ragged.f32", record.EncodeFeatures(f[:19]))
	shortFeats := write("short.f32", record.EncodeFeatures(f[:16]))
	nan := append([]float32(nil), f...)
	nan[9] = float32(math.NaN())
	nanFeats := write("nan.f32", record.EncodeFeatures(nan))
	badTable := write("bad.csv", []byte("image,mr,param,violation\n0,blur,,perhaps\n"))
	whole, _ := os.ReadFile(table)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	// Cut in the middle of a line, after the last row of image 3, and in
	// the middle of image 3's rows.
	cutLine := write("cut-line.csv", whole[:len(whole)-10])
	cutImage := write("cut-image.csv", bytes.Join(lines[:1+3*59], nil))
	cutRows := write("cut-rows.csv", bytes.Join(lines[:1+3*59+20], nil))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing row", []string{"-verdicts", missingTable}, "lacks 1 of the 295 rows scenario hierarchical needs over images 0..4, first image 1, rotation:-60"},
		{"ragged features", []string{"-features", raggedFeats}, "19 float32 values, which do not divide into 5 rows"},
		{"feature rows", []string{"-features", shortFeats, "-dim", "4"}, "holds 4 rows of 4, but the verdict table has 5 images"},
		{"nan features", []string{"-features", nanFeats}, "feature row 2 (image 2), column 1 is NaN"},
		{"bad table", []string{"-verdicts", badTable}, `bad.csv:2: column "violation": "perhaps"`},
		{"truncated line", []string{"-verdicts", cutLine}, "cut-line.csv:296: fewer fields than the header's (a truncated or damaged file? rewrite it with amt sweep -csv)"},
		{"truncated after an image", []string{"-verdicts", cutImage}, "holds 20 float32 values, which do not divide into 3 rows (one per image of the verdict table): one of the two files is truncated or they come from different sweeps"},
		{"truncated in an image", []string{"-verdicts", cutRows}, "cut-rows.csv: replay: verdict table lacks 39 of the 236 rows"},
		{"empty table", []string{"-verdicts", write("empty.csv", nil)}, "empty.csv: empty file: want a header line such as image,mr,param"},
		{"unknown agent", []string{"-agent", "covers"}, `unknown agent "covers"`},
		{"bad option", []string{"-agent-opts", "psi=-1"}, "option psi"},
		{"unknown scenario", []string{"-scenario", "flips"}, `unknown scenario "flips"`},
		{"bad seeds", []string{"-seeds", "10-1"}, "-seeds"},
		{"missing file", []string{"-features", filepath.Join(dir, "nope.f32")}, "nope.f32"},
		{"too many iterations", []string{"-iterations", "6"}, "-iterations 6 is more than passes × images = 5"},
	} {
		out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
		args := []string{"replay", "-verdicts", table, "-features", feats, "-agent", "cover", "-seeds", "1-2", "-out", out}
		args = append(args, tc.args...)
		_, _, err := runCmd(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.name, err, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: output folder exists after an error", tc.name)
		}
	}
	if _, _, err := runCmd(t, "replay", "-verdicts", table, "-agent", "cover", "-out", dir); err == nil || !strings.Contains(err.Error(), "-features or -sut-features (or both) is required") {
		t.Errorf("missing flag: %v", err)
	}
	if _, _, err := runCmd(t, "replay", "-verdicts", table); err == nil || !strings.Contains(err.Error(), "-agent is required") {
		t.Errorf("missing flag: %v", err)
	}
}

// -sut-features appends a grey-box block to the contexts (hts keeps it
// unprojected), alone or after -features: on a table where blur violates
// on the images the block marks and fliplr on the others, hts finds far
// more violations with the block than with noise features alone.
// -objective fault rewards every violation with 1.
func TestReplaySutFeaturesAndObjective(t *testing.T) {
	const n = 300
	_, feats, _, _ := replayFixture(t, n)
	dir := t.TempDir()
	sc := mr.Hierarchical()
	var rows []record.Verdict
	var g []float32
	for i := 0; i < n; i++ {
		mark := i%2 == 0
		for _, v := range sc.Variants() {
			viol := (v.Action == "blur" && mark) || (v.Action == "fliplr" && !mark)
			rows = append(rows, record.Verdict{Image: i, MR: v.Action, Param: v.Value, Violation: viol, PredOriginal: 3,
				PredTransformed: 3, Label: 3, MapOriginal: math.NaN(), MapTransformed: math.NaN()})
		}
		b := float32(0)
		if mark {
			b = 1
		}
		g = append(g, b, 1-b)
	}
	table, sutFeats := filepath.Join(dir, "t.csv"), filepath.Join(dir, "sut.f32")
	if err := record.WriteVerdictsCSV(table, rows, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sutFeats, record.EncodeFeatures(g), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) record.Summary {
		t.Helper()
		out := filepath.Join(dir, name)
		args = append([]string{"replay", "-verdicts", table, "-agent", "hts", "-seeds", "1-2", "-out", out}, args...)
		if _, _, err := runCmd(t, args...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, err := record.ReadSummary(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	viol := func(s record.Summary) int { return s.Runs[0].Violations + s.Runs[1].Violations }
	both := run("both", "-features", feats, "-sut-features", sutFeats)
	alone := run("alone", "-sut-features", sutFeats)
	plain := run("plain", "-features", feats)
	t.Logf("violations in 2 × %d iterations: features and block %d, block %d, features %d", n, viol(both), viol(alone), viol(plain))
	if viol(both) < viol(plain)+n/5 || viol(alone) < viol(plain)+n/5 {
		t.Errorf("violations with the block %d (alone %d), without %d: want at least %d more", viol(both), viol(alone), viol(plain), n/5)
	}
	if fault := run("fault", "-features", feats, "-objective", "fault"); equalRuns(fault, plain) {
		t.Error("-objective fault changed nothing")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-sut-features", feats, "-objective", "faults"}, `-objective: "faults" is not paper or fault; did you mean "fault"?`},
		{[]string{"-sut-features", filepath.Join(dir, "nope.f32")}, "nope.f32"},
		{[]string{"-sut-features", sutFeats, "-dim", "4"}, "-dim without -features"},
	} {
		args := append([]string{"replay", "-verdicts", table, "-agent", "hts", "-out", filepath.Join(dir, "err")}, tc.args...)
		if _, _, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// equalRuns reports whether two summaries have the same runs.
func equalRuns(a, b record.Summary) bool {
	if len(a.Runs) != len(b.Runs) {
		return false
	}
	for i := range a.Runs {
		if a.Runs[i].Violations != b.Runs[i].Violations || !reflect.DeepEqual(a.Runs[i].Params, b.Runs[i].Params) || !reflect.DeepEqual(a.Runs[i].Arms, b.Runs[i].Arms) {
			return false
		}
	}
	return true
}

// A detection table names images by their (sparse) COCO ids; replay
// numbers them by first appearance, so it gives the same runs as the same
// table numbered 0..n-1.
func TestReplayDetectionTable(t *testing.T) {
	_, feats, rows, _ := replayFixture(t, 20)
	dir := t.TempDir()
	ids, dense := filepath.Join(dir, "ids.csv"), filepath.Join(dir, "dense.csv")
	for k := range rows {
		rows[k].MapOriginal = 0.5
		rows[k].MapTransformed = 0.6
		if rows[k].Violation {
			rows[k].MapTransformed = 0.2
		}
	}
	if err := record.WriteVerdictsCSV(dense, rows, true); err != nil {
		t.Fatal(err)
	}
	for k := range rows {
		rows[k].Image = 1000 - 37*rows[k].Image // sparse, descending ids
	}
	if err := record.WriteVerdictsCSV(ids, rows, true); err != nil {
		t.Fatal(err)
	}
	var sums [2][]byte
	for i, table := range []string{ids, dense} {
		out := filepath.Join(dir, "out", strings.TrimSuffix(filepath.Base(table), ".csv"))
		if _, _, err := runCmd(t, "replay", "-verdicts", table, "-features", feats, "-agent", "cover", "-seeds", "1-2", "-out", out); err != nil {
			t.Fatal(err)
		}
		// The two tables differ, so do the runs' identities; the rest
		// must not.
		s, err := record.ReadSummary(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if s.Identity.IsZero() || len(s.Logs) != 2 {
			t.Fatalf("summary identity %+v, logs %v", s.Identity, s.Logs)
		}
		s.Identity, s.Logs = record.Identity{}, nil
		if sums[i], err = json.Marshal(s); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(sums[0], sums[1]) {
		t.Fatalf("replay of the id-numbered detection table differs:\n%s\n%s", sums[0], sums[1])
	}
	s, err := record.ReadSummary(filepath.Join(dir, "out", "ids", "summary.json"))
	if err != nil || s.Runs[0].Iterations != 20 || s.Runs[0].OriginalScore != 10 {
		t.Fatalf("summary %v %+v", err, s.Runs[0])
	}
}

// amt replay -log-decisions writes one decision per iteration (the same
// for the same seeds, so also byte-identical), and amt ope evaluates other
// agents on it: the README's off-policy example end to end.
func TestReplayLogDecisionsOPE(t *testing.T) {
	table, feats, _, _ := replayFixture(t, 30)
	out := filepath.Join(t.TempDir(), "random")
	if _, _, err := runCmd(t, "replay", "-verdicts", table, "-features", feats, "-agent", "random", "-seeds", "1-2",
		"-log-decisions", "-out", out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "decisions-seed-2.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var d record.Decision
	if err := json.Unmarshal([]byte(lines[0]), &d); err != nil || len(lines) != 30 || d.Seed != 2 || d.Iteration != 1 || len(d.Context) != 4 || d.Prob <= 0 {
		t.Fatalf("%d decisions; first %+v (%v)", len(lines), d, err)
	}
	stdout, _, err := runCmd(t, "ope", "-log", filepath.Join(out, "decisions-seed-2.jsonl"), "-arms", "59", "-agents", "uniform,cover,linucb")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"30 records, 59 arms, context dimension 4", "linucb", "cover"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("amt ope output lacks %q:\n%s", want, stdout)
		}
	}
}
