package record

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// committed is a committed results folder, the valid input the hostile
// ones below are made from.
var committed = filepath.Join("..", "..", "results", "rq1-classification")

// mutateJSON decodes the JSON file at path, applies f to it and writes the
// result into dir.
func mutateJSON(t *testing.T, path, dir string, f func(m map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, _ := json.Marshal(m)
	p := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCorruptSummaries checks that every loaded count is validated (#34,
// class 3): negative counts, violations above follow-ups, 4e18 follow-ups,
// arms not adding up to the run and scores above the iterations are
// errors naming the file and the run, not an MR silently "not compared",
// a p of 1 or a rate of 2911 %.
func TestCorruptSummaries(t *testing.T) {
	sp := filepath.Join(committed, "cover", SummaryFile)
	if _, err := ReadSummary(sp); err != nil {
		t.Fatalf("the committed summary: %v", err)
	}
	arm := func(m map[string]any) map[string]any {
		return m["runs"].([]any)[0].(map[string]any)["arms"].(map[string]any)["blur"].(map[string]any)
	}
	run := func(m map[string]any) map[string]any { return m["runs"].([]any)[0].(map[string]any) }
	cases := []struct {
		name string
		f    func(m map[string]any)
		want string
	}{
		{"negative count", func(m map[string]any) { arm(m)["count"] = -5 }, "want 0 <= violations <= count"},
		{"violations above count", func(m map[string]any) { arm(m)["violations"] = 1000000 }, "want 0 <= violations <= count"},
		{"4e18 follow-ups", func(m map[string]any) {
			arm(m)["count"] = int64(4e18)
			run(m)["iterations"] = int64(4e18)
		}, "want 0 <= violations <= count <= 1099511627776"},
		{"arms not adding up", func(m map[string]any) { arm(m)["count"] = json.Number("0"); arm(m)["violations"] = 0 }, "add up to"},
		{"score above iterations", func(m map[string]any) { run(m)["original_score"] = 1e9 }, "original_score"},
		{"negative run violations", func(m map[string]any) { run(m)["violations"] = -1 }, "iterations:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mutateJSON(t, sp, t.TempDir(), c.f)
			_, err := ReadSummary(p)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "runs[0]") {
				t.Errorf("err = %v, want the file, runs[0] and %q", err, c.want)
			}
		})
	}
}

// TestCorruptMeta checks that agent ids read from a run.json are plain
// names: "../../x" would make a baseline read files outside its folder.
func TestCorruptMeta(t *testing.T) {
	mp := filepath.Join(committed, MetaFile)
	if _, err := ReadMeta(mp); err != nil {
		t.Fatalf("the committed run.json: %v", err)
	}
	for _, id := range []string{"../../x", "..", ".", "", "a/b", `a\b`, "a\x00b", "a b"} {
		p := mutateJSON(t, mp, t.TempDir(), func(m map[string]any) {
			m["agents"].([]any)[0].(map[string]any)["id"] = id
		})
		if _, err := ReadMeta(p); err == nil || !strings.Contains(err.Error(), "agents[0].id") {
			t.Errorf("id %q: err = %v", id, err)
		}
	}
	p := mutateJSON(t, mp, t.TempDir(), func(m map[string]any) {
		a := m["agents"].([]any)
		m["agents"] = append(a, a[0])
	})
	if _, err := ReadMeta(p); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("an id twice: err = %v", err)
	}
}

// TestCorruptLogLines checks the progress log's counts as the summary's:
// amt plot draws rates from them.
func TestCorruptLogLines(t *testing.T) {
	for _, line := range []string{
		`{"agent":"a","scenario":"s","seed":1,"iteration":100,"violations":2911,"total_reward":0,"arms":{},"original_accuracy":0,"modified_accuracy":0}`,
		`{"agent":"a","scenario":"s","seed":1,"iteration":100,"violations":1,"total_reward":0,"arms":{"blur":{"count":3,"violations":-100}},"original_accuracy":0,"modified_accuracy":0}`,
	} {
		if _, err := DecodeLog(strings.NewReader(line+"\n"), "x.jsonl"); err == nil || !strings.Contains(err.Error(), "x.jsonl:1:") {
			t.Errorf("%s: err = %v", line, err)
		}
	}
}

// FuzzBaseline: no summary.json makes ReadSummary panic, and every summary
// it accepts has rates within [0, 1] and counts within the limits.
func FuzzBaseline(f *testing.F) {
	b, err := os.ReadFile(filepath.Join(committed, "cover", SummaryFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"agent":"a","runs":[{"seed":1,"iterations":3,"violations":1,"arms":{"blur":{"count":3,"violations":1}},"params":{},"original_score":1,"modified_score":0}]}`))
	f.Add([]byte(`{"agent":"a","runs":[{"seed":1,"iterations":4000000000000000000,"violations":1,"arms":{"blur":{"count":4000000000000000000,"violations":1}}}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "summary.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSummary(p)
		if err != nil {
			return
		}
		for _, r := range s.Runs {
			for _, m := range []map[string]Counts{r.Arms, r.Params} {
				for k, c := range m {
					if rate := c.Rate(); !(rate >= 0 && rate <= 1) || c.Check() != nil {
						t.Fatalf("accepted %q with %+v (rate %v)", k, c, rate)
					}
				}
			}
		}
	})
}
