// Package results_test checks that the committed results (results/README.md)
// are what the code produces: for every experiment folder it replays the
// agents from the committed exhaustive tables (results/sweeps/, no SUT
// needed) and redraws the figures, tables and report, and fails if any
// committed file differs.
//
// What is compared: every seed's progress log and every summary.json
// byte for byte (for an online experiment, RQ3, after dropping the measured
// times and the mode: online and replay runs make the same choices, but
// times are measured); report.md, figures/ (PNG and SVG) and tables/ byte
// for byte, redrawn from the committed result files (so from the committed
// times too). Not compared: timing.json (measured), run.json and
// config.yaml (inputs of the redraw).
//
// After a change that alters results, run `make results` (everything,
// measured times included), or for changes of figures, tables and reports
// only `go test ./results -update`, which rewrites them (and the summaries
// and logs of replay experiments) from what the code produces.
package results_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/plots"
	"github.com/amt-dev/amt/scenario"
)

var update = flag.Bool("update", false, "rewrite the committed reports, figures and tables (and the summaries and logs of replay experiments) from what the code produces")

// committedExperiments are the folders of results/ that are committed (the
// Makefile's RESULTS, listed again in .gitignore): the experiments of make
// rq1 rq2 rq3. Other experiments run in a checkout (compare, ablations,
// own configs) also write to results/ but are neither committed nor
// checked.
var committedExperiments = []string{
	"rq1-classification", "rq1-detection",
	"rq2-rotation-classification", "rq2-shear-classification",
	"rq2-rotation-detection", "rq2-shear-detection",
	"rq3-classification", "rq3-detection",
}

// sweepsDir holds the committed exhaustive tables, one per case study:
// <case study>.csv.gz (amt sweep -csv of the hierarchical scenario, whose
// 59 follow-ups contain every paper scenario's) and
// <case study>-features.f32.gz (amt sweep -features).
const sweepsDir = "sweeps"

// sweepTable is a committed exhaustive table: its rows as the CSV holds
// them, the features of its images and, when committed
// (<case study>-sut.f32.gz, amt sweep -sut-features), their grey-box
// blocks.
type sweepTable struct {
	rows     []record.Verdict
	features []float32
	dim      int
	sut      []float32
	sutDim   int
}

func readGzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

var (
	tablesOnce sync.Once
	tables     map[string]*sweepTable
	tablesErr  error
)

// loadTables reads results/sweeps/ once for all experiments.
func loadTables(t *testing.T) map[string]*sweepTable {
	tablesOnce.Do(func() {
		tables = map[string]*sweepTable{}
		for _, study := range []string{"classification", "detection"} {
			csvPath := filepath.Join(sweepsDir, study+".csv.gz")
			if _, err := os.Stat(csvPath); err != nil {
				continue // an experiment of this case study fails with "no committed table"
			}
			rows, err := record.DecodeVerdictsCSV(bytes.NewReader(readGzip(t, csvPath)), csvPath)
			if err != nil {
				tablesErr = err
				return
			}
			images := map[int]bool{}
			for _, r := range rows {
				images[r.Image] = true
			}
			read := func(fPath string) []float32 {
				raw := readGzip(t, fPath)
				if len(raw)%(4*len(images)) != 0 {
					tablesErr = fmt.Errorf("%s: %d bytes are not rows of float32 for %d images", fPath, len(raw), len(images))
					return nil
				}
				feats := make([]float32, len(raw)/4)
				for i := range feats {
					feats[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
				}
				return feats
			}
			feats := read(filepath.Join(sweepsDir, study+"-features.f32.gz"))
			if tablesErr != nil {
				return
			}
			tab := &sweepTable{rows: rows, features: feats, dim: len(feats) / len(images)}
			if sp := filepath.Join(sweepsDir, study+"-sut.f32.gz"); fileExists(sp) {
				if tab.sut = read(sp); tablesErr != nil {
					return
				}
				tab.sutDim = len(tab.sut) / len(images)
			}
			tables[study] = tab
		}
	})
	if tablesErr != nil {
		t.Fatal(tablesErr)
	}
	return tables
}

func TestCommittedResults(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		// Go fuses multiply-adds on other architectures, which moves the
		// last bits of the bandits' arithmetic and of rasterised figures.
		t.Skipf("the committed results were made on amd64; %s computes other last bits", runtime.GOARCH)
	}
	for _, dir := range committedExperiments {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			checkExperiment(t, dir)
		})
	}
}

// scenarioRows returns the rows of the table for the scenario's
// follow-ups, image by image in the scenario's order: what the
// experiment's sweep.csv holds.
func scenarioRows(t *testing.T, rows []record.Verdict, sc scenario.Scenario) []record.Verdict {
	t.Helper()
	keys := sc.Keys()
	col := map[string]int{}
	for i, k := range keys {
		col[k] = i
	}
	var order []int
	byImage := map[int][]record.Verdict{}
	for _, r := range rows {
		if _, ok := col[r.ParamKey()]; !ok {
			continue
		}
		if byImage[r.Image] == nil {
			order = append(order, r.Image)
			byImage[r.Image] = make([]record.Verdict, len(keys))
		}
		byImage[r.Image][col[r.ParamKey()]] = r
	}
	var out []record.Verdict
	for _, img := range order {
		for k, r := range byImage[img] {
			if r.MR == "" {
				t.Fatalf("the committed table lacks image %d, %s", img, keys[k])
			}
		}
		out = append(out, byImage[img]...)
	}
	return out
}

// dense returns rows with the image column renumbered 0, 1, … in order of
// first appearance (a detection table holds COCO image ids in data set
// order, as amt replay reads it).
func dense(rows []record.Verdict) []record.Verdict {
	out := slices.Clone(rows)
	idx := map[int]int{}
	for k := range out {
		i, ok := idx[out[k].Image]
		if !ok {
			i = len(idx)
			idx[out[k].Image] = i
		}
		out[k].Image = i
	}
	return out
}

// inputs identifies what a verdict table and its features depend on: the
// content hashes of the SUT, the data set and the feature model (not their
// paths), the feature kind and tensor, and the number of images.
func inputs(m record.Meta) string {
	f := m.Features
	model := ""
	if f.Model != nil {
		model = f.Model.SHA256
	}
	return fmt.Sprintf("{sut %s, data %s (%d images), features %s %s %q}", m.SUT.SHA256, m.Data.SHA256, m.Data.Images, f.Kind, model, f.Output)
}

// normalised is a summary without what an online run measures.
func normalised(t *testing.T, b []byte) record.Summary {
	t.Helper()
	var s record.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	s.Mode, s.MeanDecisionUS = "", 0
	for i := range s.Runs {
		s.Runs[i].MeanIterationMS = 0
	}
	return s
}

func checkExperiment(t *testing.T, dir string) {
	meta, err := record.ReadMeta(filepath.Join(dir, record.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := mr.Builtin(meta.Scenario.Name)
	if err != nil || !slices.Equal(sc.Keys(), meta.Scenario.Variants) {
		t.Fatalf("scenario %q is not the built-in one of that name (%v); the check replays built-in scenarios only", meta.Scenario.Name, err)
	}
	// The committed table of a case study is amt sweep -csv of its rq1
	// config (make results): an experiment can be replayed from it only if
	// it ran on the same SUT, data and context features.
	if src := "rq1-" + meta.CaseStudy; dir != src {
		m0, err := record.ReadMeta(filepath.Join(src, record.MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := inputs(meta), inputs(m0); got != want {
			t.Fatalf("run.json: inputs %s, but the committed table comes from %s's %s", got, src, want)
		}
	}
	tab := loadTables(t)[meta.CaseStudy]
	if tab == nil {
		t.Fatalf("no committed table for case study %q", meta.CaseStudy)
	}
	rows := scenarioRows(t, tab.rows, sc)
	env, err := experiments.NewReplayEnv(dense(rows), tab.features, bandit.Layout{Dim: tab.dim}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if env.Len() != meta.Data.Images {
		t.Fatalf("the committed table has %d images, run.json %d", env.Len(), meta.Data.Images)
	}

	// The folder the redraw reads: the inputs, the experiment's sweep.csv,
	// and each agent's replayed files.
	tmp := filepath.Join(t.TempDir(), dir)
	for _, f := range []string{record.MetaFile, record.ConfigFile} {
		copyFile(t, filepath.Join(dir, f), filepath.Join(tmp, f))
	}
	// The gallery's contact sheets are drawn by amt run from the images,
	// not redrawn from the result files: the report lists the committed
	// ones.
	sheets, err := filepath.Glob(filepath.Join(dir, record.GalleryDir, "*", "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sheets {
		rel, _ := filepath.Rel(dir, p)
		copyFile(t, p, filepath.Join(tmp, rel))
	}
	if err := record.WriteVerdictsCSV(filepath.Join(tmp, record.VerdictsFile), rows, meta.CaseStudy == "detection"); err != nil {
		t.Fatal(err)
	}
	stale := false
	for _, a := range meta.Agents {
		committed := filepath.Join(dir, a.ID)
		logs, err := filepath.Glob(filepath.Join(committed, record.LogGlob))
		if err != nil || len(logs) != len(meta.Seeds) {
			t.Fatalf("agent %s: %d progress logs for %d seeds (%v)", a.ID, len(logs), len(meta.Seeds), err)
		}
		first, err := record.ReadLog(filepath.Join(committed, record.LogFile(meta.Seeds[0])))
		if err != nil || len(first) == 0 {
			t.Fatalf("agent %s: %v", a.ID, err)
		}
		spec := experiments.AgentSpec{ID: a.ID, Name: a.Name, Options: bandit.Options(a.Options)}
		out := filepath.Join(tmp, a.ID)
		if _, err := experiments.RunSeeds(context.Background(), env, sc, func(seed uint64) (experiments.Agent, error) {
			return experiments.NewAgent(spec, sc, env.Layout(), seed)
		}, out, experiments.SeedsOptions{Agent: a.ID, Mode: "replay", Seeds: meta.Seeds, Passes: meta.Passes,
			Iter: meta.Iterations, Interval: first[0].Iteration, Identity: meta.Identity}); err != nil {
			t.Fatal(err)
		}
		files := []string{record.SummaryFile}
		for _, s := range meta.Seeds {
			files = append(files, record.LogFile(s))
		}
		for _, f := range files {
			want, err := os.ReadFile(filepath.Join(committed, f))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			same := bytes.Equal(got, want)
			if f == record.SummaryFile && meta.Mode != "replay" {
				same = reflectEqualJSON(normalised(t, got), normalised(t, want))
			}
			if same {
				continue
			}
			if *update && meta.Mode == "replay" {
				writeFile(t, filepath.Join(committed, f), got)
				continue
			}
			stale = true
			t.Errorf("%s/%s differs from a replay of the committed table (run make results)", committed, f)
		}
		// The redraw uses the committed times.
		for _, f := range []string{record.SummaryFile, record.TimingFile} {
			if _, err := os.Stat(filepath.Join(committed, f)); err == nil {
				copyFile(t, filepath.Join(committed, f), filepath.Join(out, f))
			}
		}
	}
	if stale {
		return
	}
	e, err := plots.Load(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plots.Render(context.Background(), e, plots.Options{}); err != nil {
		t.Fatal(err)
	}
	drawn := drawnFiles(t, tmp)
	have := drawnFiles(t, dir)
	for _, f := range drawn {
		got, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(dir, f))
		if err == nil && sameDrawing(f, got, want) {
			continue
		}
		if *update {
			writeFile(t, filepath.Join(dir, f), got)
			continue
		}
		if err != nil {
			t.Errorf("%s/%s is not committed (run go test ./results -update)", dir, f)
		} else {
			t.Errorf("%s/%s differs from a redraw (%s; run go test ./results -update)", dir, f, firstDifference(got, want, "drawn", "committed"))
		}
	}
	for _, f := range have {
		if !slices.Contains(drawn, f) {
			if *update {
				if err := os.Remove(filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("%s/%s is committed but no longer drawn (run go test ./results -update)", dir, f)
		}
	}
}

// drawnFiles lists report.md and the files under figures/ and tables/,
// relative to dir.
func drawnFiles(t *testing.T, dir string) []string {
	t.Helper()
	out := []string{record.ReportFile}
	for _, sub := range []string{record.FiguresDir, record.TablesDir} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range ents {
			out = append(out, filepath.Join(sub, en.Name()))
		}
	}
	return out
}

func reflectEqualJSON(a, b record.Summary) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// firstDifference describes where two files first differ, calling them
// gotName and wantName.
func firstDifference(got, want []byte, gotName, wantName string) string {
	n := min(len(got), len(want))
	for i := range n {
		if got[i] != want[i] {
			line := bytes.Count(want[:i], []byte("\n")) + 1
			if bytes.IndexByte(want, 0) < 0 && !strings.HasPrefix(string(want), "\x89PNG") {
				lo := bytes.LastIndexByte(want[:i], '\n') + 1
				endW := bytes.IndexByte(want[i:], '\n')
				endG := bytes.IndexByte(got[i:], '\n')
				if endW < 0 {
					endW = len(want) - i
				}
				if endG < 0 {
					endG = len(got) - i
				}
				return fmt.Sprintf("line %d: %s %q, %s %q", line, wantName, want[lo:i+endW], gotName, got[lo:i+endG])
			}
			return fmt.Sprintf("byte %d of %d", i, len(want))
		}
	}
	return fmt.Sprintf("%d bytes %s, %d %s", len(got), gotName, len(want), wantName)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, b)
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readmeResults is the block of the repository's README.md between these
// markers: the headline figure and tables, copied from the committed
// results, so that the README cannot drift from them either.
const (
	readmeStart = "<!-- results: generated from results/ by `go test ./results -update` -->\n"
	readmeEnd   = "<!-- end of results -->\n"
)

// readmeBlock builds the README's results block from the committed files.
func readmeBlock(t *testing.T) string {
	t.Helper()
	table := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var b strings.Builder
	b.WriteString(readmeStart)
	b.WriteString("![RQ1, classification: violation rate per MR, the paper's agent (cover) against the exhaustive baseline](results/rq1-classification/figures/violation-rate-per-mr.png)\n\n")
	b.WriteString("RQ1, image classification: violation rate (%) per MR of the paper's agent (`cover`) and of random selection, 10 seeds × 1,017 images, against the exhaustive baseline and the paper's Table 1 (`results/rq1-classification/tables/violation-rate-per-mr.md`):\n\n")
	b.WriteString(table("rq1-classification/tables/violation-rate-per-mr.md"))
	b.WriteString("\nRQ3, Table 2's classification row: time per iteration online (measured as the original did; the machine differs, so compare the ratio) and the SUT's accuracy on unmodified and on modified images (`results/rq3-classification/tables/table2-runtime-accuracy.md`):\n\n")
	b.WriteString(table("rq3-classification/tables/table2-runtime-accuracy.md"))
	b.WriteString(readmeEnd)
	return b.String()
}

// The README's results block is the committed results' headline figure and
// tables.
func TestREADMEResults(t *testing.T) {
	path := filepath.Join("..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, readmeStart), strings.Index(s, readmeEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no results block (%q … %q)", readmeStart, readmeEnd)
	}
	want := readmeBlock(t)
	if got := s[i : j+len(readmeEnd)]; got != want {
		if *update {
			writeFile(t, path, []byte(s[:i]+want+s[j+len(readmeEnd):]))
			return
		}
		t.Errorf("README.md's results block differs from the committed results (run go test ./results -update):\n%s", firstDifference([]byte(want), []byte(got), "from the results", "in README.md"))
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
