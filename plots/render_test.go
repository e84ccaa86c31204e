package plots

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

var keep = flag.String("keep", "", "also render the large synthetic experiment into this folder (to look at the figures)")

// TestRenderSyntheticLarge renders a paper-sized synthetic experiment when
// -keep DIR is given: go test ./plots -run TestRenderSyntheticLarge -args -keep /tmp/synth
func TestRenderSyntheticLarge(t *testing.T) {
	if *keep == "" {
		t.Skip("-keep not given")
	}
	dir := filepath.Join(*keep, "rq1-synthetic")
	synthExperiment(t, dir, 1017, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50)
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(context.Background(), e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s, %d figures, %d tables", out.Report, len(out.Figures), len(out.Tables))
}

func TestRenderSynthetic(t *testing.T) {
	dir := t.TempDir()
	synthExperiment(t, dir, 200, []uint64{1, 2, 3}, 20)
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("name: rq1-synthetic\nseeds: [1, 2, 3]\n"), 0o644)
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(context.Background(), e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out.Figures {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(f) {
		case ".png":
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if r := img.Bounds(); r.Dx() < 500 || r.Dy() < 300 {
				t.Errorf("%s is only %v", f, r)
			}
		case ".svg":
			if !bytes.Contains(b, []byte("<svg")) || len(b) < 1000 {
				t.Errorf("%s is not a plausible SVG (%d bytes)", f, len(b))
			}
		}
	}
	wantFigs := []string{"violation-rate-per-mr", "violation-rate-per-degree-rotation", "violation-rate-per-degree-shear",
		"progress-cover", "progress-random", "cumulative-violations"}
	for _, w := range wantFigs {
		if !contains(out.Figures, filepath.Join(record.FiguresDir, w+".png")) || !contains(out.Figures, filepath.Join(record.FiguresDir, w+".svg")) {
			t.Errorf("figure %s not written; got %v", w, out.Figures)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, record.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"# Report: ", "## Violation rate per MR (RQ1)", "## Effects per class (Table 1)", "Table 2 row (classification)",
		"figures/violation-rate-per-mr.png", "tables/table1-effects-per-class.csv", "name: rq1-synthetic", "| 40.43 |", "Shear ±30° (extra)",
		"oracle", "## Caveats"} {
		if !bytes.Contains(report, []byte(w)) {
			t.Errorf("report lacks %q", w)
		}
	}
	// Every table and figure the report links to exists.
	for _, line := range strings.Split(string(report), "\n") {
		for _, part := range strings.Split(line, "](")[1:] {
			link := part[:strings.IndexByte(part, ')')]
			if _, err := os.Stat(filepath.Join(dir, link)); err != nil {
				t.Errorf("report links to missing %s", link)
			}
		}
	}

	// Same inputs → the same bytes, for the report, every table and every
	// figure.
	snapshot := func() map[string][]byte {
		m := map[string][]byte{}
		for _, f := range append(append([]string{out.Report}, out.Tables...), out.Figures...) {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			m[f] = b
		}
		return m
	}
	first := snapshot()
	e2, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e2, Options{}); err != nil {
		t.Fatal(err)
	}
	for f, b := range snapshot() {
		if !bytes.Equal(b, first[f]) {
			t.Errorf("%s differs between two renders of the same results", f)
		}
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
