package record

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := Summary{Agent: "cover", Scenario: "hierarchical", Mode: "replay", Runs: []Run{{
		Seed: 3, Iterations: 10, Violations: 4,
		Arms:   map[string]Counts{"blur": {Count: 3, Violations: 1}, "rotation": {Count: 7, Violations: 3}},
		Params: map[string]Counts{"rotation:-90": {Count: 7, Violations: 3}},
	}}}
	p := filepath.Join(dir, "sub", "summary.json")
	if err := WriteSummary(p, s); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSummary(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip: got %+v, want %+v", got, s)
	}
	b1, _ := os.ReadFile(p)
	if err := WriteSummary(p, s); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(p)
	if string(b1) != string(b2) {
		t.Fatal("same summary written twice gives different bytes")
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestReadSummaryRejectsUnknownField(t *testing.T) {
	p := filepath.Join(t.TempDir(), "summary.json")
	os.WriteFile(p, []byte(`{"agent":"x","scenario":"s","runs":[],"bogus":1}`), 0o644)
	if _, err := ReadSummary(p); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("want error naming the unknown field, got %v", err)
	}
}

func TestLogRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "seed-1.jsonl")
	lines := []LogLine{
		{Agent: "random", Scenario: "rotation", Seed: 1, Iteration: 100, Violations: 20, Arms: map[string]Counts{"rotation:5": {1, 0}}},
		{Agent: "random", Scenario: "rotation", Seed: 1, Iteration: 200, Violations: 41, Arms: map[string]Counts{"rotation:5": {2, 1}}},
	}
	if _, err := WriteLog(p, lines); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLog(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, lines) {
		t.Fatalf("got %+v", got)
	}
}

func TestVerdictsCSV(t *testing.T) {
	rows := []Verdict{
		{Image: 0, MR: "blur", Param: math.NaN(), PredOriginal: 3, PredTransformed: 3, Label: 3, MapOriginal: math.NaN(), MapTransformed: math.NaN()},
		{Image: 0, MR: "rotation", Param: -90, Violation: true, PredOriginal: 3, PredTransformed: 5, Label: 3, MapOriginal: math.NaN(), MapTransformed: math.NaN()},
	}
	p := filepath.Join(t.TempDir(), "t.csv")
	if err := WriteVerdictsCSV(p, rows, false); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	want := "image,mr,param,pred_original,pred_transformed,violation,label\n0,blur,,3,3,0,3\n0,rotation,-90,3,5,1,3\n"
	if string(b) != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", b, want)
	}
	got, err := ReadVerdictsCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].ParamKey() != "rotation:-90" || !got[1].Violation || got[0].HasParam() || got[1].PredTransformed != 5 {
		t.Fatalf("read back %+v", got)
	}
}

func TestVerdictsCSVErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"image,mr,param\n", `lacks column "violation"`},
		{"image,mr,param,violation\n0,blur,,maybe\n", `t.csv:2: column "violation": "maybe"`},
		{"image,mr,param,violation\n-1,blur,,0\n", `column "image"`},
		{"image,mr,param,violation\n0,rotation,abc,0\n", `column "param"`},
		{"image,mr,param,violation\n0,,,0\n", `column "mr"`},
	} {
		_, err := DecodeVerdictsCSV(strings.NewReader(tc.in), "t.csv")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestWriteFileAtomicMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.txt")
	if err := WriteFileAtomic(p, []byte("x")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want 0644 (readable result files)", st.Mode().Perm())
	}
}
