package plots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// copyDir copies a testdata folder to a temporary one (Render writes into
// the experiment's folder).
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func renderTiny(t *testing.T, opt Options) string {
	t.Helper()
	dir := copyDir(t, "testdata/tiny")
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, opt); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readTable(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, record.TablesDir, name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The answers below are worked out by hand from testdata/tiny (see the
// comments); they are the contract of the aggregation.
func TestRenderTinyKnownAnswers(t *testing.T) {
	dir := renderTiny(t, Options{})
	for _, tc := range []struct{ table, want string }{
		// cover pools its two seeds: Flip U/D 3/3 and 0/1 → 3/4 = 75 % (the
		// mean of the per-seed rates would be 50 %); Blur 1/3; Rotation
		// 0/1; Shear never chosen (empty). Sorted ascending by cover, empty
		// last. Baseline: Blur 1/4, Flip U/D 3/4, Rotation 1/8, Shear 2/8.
		// At Table 1's angles: shear ±20° is 2/8; the table has no ±30°
		// rotation rows (empty).
		{"violation-rate-per-mr", "MR,cover,random,\"baseline (all angles, pooled)\",baseline (Table 1 Avg.: class mean),paper Table 1 Avg.,ours − paper\n" +
			"Rotation,0.00,,12.50,,40.43,\n" +
			"Blur,33.33,0.00,25.00,25.00,10.46,+14.54\n" +
			"Flip U/D,75.00,,75.00,75.00,51.06,+23.94\n" +
			"Shear,,50.00,25.00,25.00,30.70,-5.70\n"},
		{"violation-rate-per-degree-rotation", "degrees,cover,cover selections,random,random selections,baseline\n" +
			"-10,,0,,0,0.00\n" +
			"10,0.00,1,,0,25.00\n"},
		{"violation-rate-per-degree-shear", "degrees,cover,cover selections,random,random selections,baseline\n" +
			"-20,,0,100.00,1,25.00\n" +
			"20,,0,0.00,1,25.00\n"},
		// cover: 4 violations in 8 iterations; per-seed rates 75 % and 25 %
		// (sd 35.36). random: 1 in 4. Oracles: Flip U/D fails on 3 of 4
		// images; every image has a failing variant.
		{"final-violation-rate", "agent,scenario,seeds,violation rate (%),sd over seeds,min,max,gap to best single arm (pp),gap to per-image best (pp)\n" +
			"cover,hierarchical,2,50.00,35.36,25.00,75.00,25.00,50.00\n" +
			"random,hierarchical,1,25.00,0.00,25.00,25.00,50.00,75.00\n"},
		{"oracles", "scenario,oracle,variant,images,violation rate (%)\n" +
			"hierarchical,best single arm,flipud,4,75.00\n" +
			"hierarchical,per-image best arm,per image,4,100.00\n"},
		// Runtime: cover 10 ms, random 5 ms (from timing.json). Unmodified
		// accuracy pooled over cover's and random's runs: 9/12; modified:
		// cover 2/8, random 2/4.
		{"table2-runtime-accuracy", ",seeds × iterations,runtime cover (s),runtime random (s),cover / random,accuracy unmodified (%),accuracy cover (%),accuracy random (%)\n" +
			"ours,\"2 × 4 (cover), 1 × 4 (random)\",0.010,0.005,2.00,75.00,25.00,50.00\n" +
			"paper,\"10 × 10,000\",0.1,0.06,1.67,96.60,54.00,72.90\n"},
		// The components from both agents' timing.json: iteration =
		// features + choose + evaluate + update (random: no features).
		{"runtime-components", "agent,mode,iteration (ms),features (ms),choose (µs),evaluate (ms),update (µs),\"load image (ms, not in the iteration)\",iteration / random's\n" +
			"cover,online,10.00,4.00,400.00,5.20,400.00,1.00,2.00\n" +
			"random,online,5.00,0.00,1.00,5.00,1.00,1.00,1.00\n"},
		{"runtime-accuracy-per-agent", "agent,mode,runs,iterations,ms per iteration,µs per decision,accuracy unmodified (%),accuracy modified (%),violation rate (%)\n" +
			"cover,online,2,8,10.00,800.00,75.00,25.00,50.00\n" +
			"random,online,1,4,5.00,2.00,75.00,50.00,25.00\n"},
	} {
		if got := readTable(t, dir, tc.table); got != tc.want {
			t.Errorf("%s.csv:\n%s\nwant:\n%s", tc.table, got, tc.want)
		}
	}
	// Table 1: Flip U/D fails on images 0, 1, 3 (classes 0, 1, 3), not on 2.
	t1 := readTable(t, dir, "table1-effects-per-class")
	if !strings.Contains(t1, "Flip U/D,100.00,100.00,0.00,100.00,,,,,,,75.00\n") {
		t.Errorf("table 1:\n%s", t1)
	}
	report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
	for _, w := range []string{"The times of agent `random` come from its timing.json", "name: tiny", "4 images × 6 variants = 24 rows"} {
		if !strings.Contains(string(report), w) {
			t.Errorf("report lacks %q", w)
		}
	}
}

// The per-MR table's baseline beside the paper's Table 1 Avg. is the
// paper's definition, the mean over classes of the per-class rates — the
// same number as our Table 1's Avg. column — not the rate pooled over
// images, which differs when classes have different sizes. Here image 3 is
// relabelled to class 0, so class 0 has two images and classes 1 and 2 one:
// Flip U/D fails on images 0, 1 and 3, i.e. 3/4 = 75 % pooled but
// (2/2 + 1/1 + 0/1)/3 = 66.67 % as a class mean; Blur fails only on
// image 1: 25 % pooled, 33.33 % as a class mean.
func TestRenderTable1AvgIsClassMean(t *testing.T) {
	dir := copyDir(t, "testdata/tiny")
	p := filepath.Join(dir, record.VerdictsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "3,") {
			lines[i] = strings.TrimSuffix(l, ",3") + ",0"
		}
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	perMR := readTable(t, dir, "violation-rate-per-mr")
	for _, want := range []string{
		"MR,cover,random,\"baseline (all angles, pooled)\",baseline (Table 1 Avg.: class mean),paper Table 1 Avg.,ours − paper\n",
		"Blur,33.33,0.00,25.00,33.33,10.46,+22.87\n",
		"Flip U/D,75.00,,75.00,66.67,51.06,+15.61\n",
	} {
		if !strings.Contains(perMR, want) {
			t.Errorf("violation-rate-per-mr.csv lacks %q:\n%s", want, perMR)
		}
	}
	avg := readTable(t, dir, "table1-avg-vs-paper")
	for _, want := range []string{"Blur,33.33,10.46,+22.87\n", "Flip U/D,66.67,51.06,+15.61\n"} {
		if !strings.Contains(avg, want) {
			t.Errorf("table1-avg-vs-paper.csv lacks %q:\n%s", want, avg)
		}
	}
}

func TestRenderPrimary(t *testing.T) {
	dir := renderTiny(t, Options{Primary: "random"})
	// Sorted by random now: Blur 0, Shear 50, then Rotation and Flip U/D
	// (not chosen by random) in the paper's order.
	got := readTable(t, dir, "violation-rate-per-mr")
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(got), "\n")[1:] {
		order = append(order, strings.Split(l, ",")[0])
	}
	if strings.Join(order, ";") != "Blur;Shear;Flip U/D;Rotation" {
		t.Errorf("order %v", order)
	}
	e, _ := Load(dir)
	if _, err := Render(context.Background(), e, Options{Primary: "nosuch"}); err == nil || !strings.Contains(err.Error(), `"nosuch" not found`) {
		t.Errorf("unknown primary: %v", err)
	}
}

func TestRenderCancelled(t *testing.T) {
	dir := copyDir(t, "testdata/tiny")
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Render(ctx, e, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, record.ReportFile)); err == nil {
		t.Error("a cancelled render wrote the report")
	}
}

// testID is the run identity of the hand-written result files of these
// tests; idJSON is its fields in JSON.
var (
	testID = record.Identity{ConfigSHA256: strings.Repeat("ab", 32), SweepKey: "test"}
	idJSON = `"config_sha256":"` + testID.ConfigSHA256 + `","sweep_key":"test",`
)

// logsJSON is the "logs" field of a summary listing the given progress
// logs (name, content pairs).
func logsJSON(nameContent ...string) string {
	var parts []string
	for i := 0; i < len(nameContent); i += 2 {
		parts = append(parts, fmt.Sprintf("%q:%q", nameContent[i], record.SHA256([]byte(nameContent[i+1]))))
	}
	return `"logs":{` + strings.Join(parts, ",") + `},`
}

// writeRunJSON writes m as the run.json of the tiny folder copied to dir,
// with the identity of its agents and the sha256 of its files.
func writeRunJSON(t *testing.T, dir string, m record.Meta) {
	t.Helper()
	s, err := record.ReadSummary(filepath.Join(dir, "cover", record.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	m.Identity = s.Identity
	if m.VerdictsSHA256, err = record.FileSHA256(filepath.Join(dir, record.VerdictsFile)); err != nil {
		t.Fatal(err)
	}
	m.Agents = []record.AgentMeta{{ID: "cover", Name: "cover"}, {ID: "random", Name: "random"}}
	if err := record.WriteMeta(filepath.Join(dir, record.MetaFile), m); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	write := func(dir, name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"empty folder", nil, "holds no results"},
		{"bad table", map[string]string{"sweep.csv": "image,mr,param,violation\n0,blur,,maybe\n"}, `sweep.csv:2: column "violation"`},
		{"header only", map[string]string{"sweep.csv": "image,mr,param,violation\n"}, "no rows"},
		{"bad summary", map[string]string{"cover/summary.json": `{"agent":"cover","runs":[],"extra":1}`}, "extra"},
		{"bad log name", map[string]string{"cover/summary.json": `{` + idJSON + `"agent":"cover","scenario":"h","runs":[]}`, "cover/seed-x.jsonl": ""}, "seed-x.jsonl"},
		{"empty log", map[string]string{"cover/summary.json": `{` + idJSON + logsJSON("seed-1.jsonl", "\n") + `"agent":"cover","scenario":"h","runs":[]}`, "cover/seed-1.jsonl": "\n"}, "seed-1.jsonl is empty"},
		{"bad log line", map[string]string{"cover/summary.json": `{` + idJSON + logsJSON("seed-1.jsonl", "{\"iteration\":1}\n{oops\n") + `"agent":"cover","scenario":"h","runs":[]}`, "cover/seed-1.jsonl": "{\"iteration\":1}\n{oops\n"}, "seed-1.jsonl:2"},
		{"timing mismatch", map[string]string{"cover/summary.json": `{` + idJSON + `"agent":"cover","scenario":"h","runs":[{"seed":1,"iterations":1,"violations":0,"arms":{},"params":{},"original_score":0,"modified_score":0}]}`,
			"cover/timing.json": `{` + idJSON + `"runs":[{},{}]}`}, "timing.json has 2 runs"},
		// Files that do not belong together.
		{"an older amt's agent beside", map[string]string{"a/summary.json": `{` + idJSON + `"agent":"cover","scenario":"h","runs":[]}`,
			"b/summary.json": `{"agent":"cover","scenario":"h","runs":[]}`}, "b/summary.json belongs to another run (no run identity (written by an older amt)) than"},
		{"stale log", map[string]string{"cover/summary.json": `{` + idJSON + logsJSON("seed-1.jsonl", "{}\n") + `"agent":"cover","scenario":"h","runs":[]}`,
			"cover/seed-1.jsonl": "{}\n", "cover/seed-2.jsonl": "{}\n"}, "cover/seed-2.jsonl is not a log of the run of"},
		{"changed log", map[string]string{"cover/summary.json": `{` + idJSON + logsJSON("seed-1.jsonl", "{}\n") + `"agent":"cover","scenario":"h","runs":[]}`,
			"cover/seed-1.jsonl": "{\"iteration\":2}\n"}, "cover/seed-1.jsonl is not the log"},
		{"missing log", map[string]string{"cover/summary.json": `{` + idJSON + logsJSON("seed-1.jsonl", "{}\n", "seed-2.jsonl", "{}\n") + `"agent":"cover","scenario":"h","runs":[]}`,
			"cover/seed-1.jsonl": "{}\n"}, "lists the progress log seed-2.jsonl, which is missing"},
		{"timing of another run", map[string]string{"cover/summary.json": `{` + idJSON + `"agent":"cover","scenario":"h","runs":[]}`,
			"cover/timing.json": `{"config_sha256":"cd","sweep_key":"test","runs":[]}`}, "timing.json belongs to another run (config cd, sweep test)"},
		{"agents of two runs", map[string]string{"a/summary.json": `{` + idJSON + `"agent":"cover","scenario":"h","runs":[]}`,
			"b/summary.json": `{"config_sha256":"cd","sweep_key":"test","agent":"cover","scenario":"h","runs":[]}`}, "b/summary.json belongs to another run (config cd, sweep test) than"},
		{"old run.json", map[string]string{"run.json": `{"experiment":"x","case_study":"classification","scenario":{"name":"s","variants":["a"]}}`,
			"cover/summary.json": `{` + idJSON + `"agent":"cover","scenario":"h","runs":[]}`}, "cover/summary.json belongs to another run (config ab"},
		{"agent of another run", map[string]string{"run.json": `{` + idJSON + `"experiment":"x","case_study":"classification","scenario":{"name":"s","variants":["a"]},"agents":[{"id":"cover","name":"cover"}]}`,
			"cover/summary.json": `{"config_sha256":"cd","sweep_key":"test","agent":"cover","scenario":"h","runs":[]}`}, "cover/summary.json belongs to another run (config cd, sweep test) than"},
		{"agent not in run.json", map[string]string{"run.json": `{` + idJSON + `"experiment":"x","case_study":"classification","scenario":{"name":"s","variants":["a"]},"agents":[{"id":"cover","name":"cover"}]}`,
			"random/summary.json": `{` + idJSON + `"agent":"random","scenario":"h","runs":[]}`}, "random is not an agent of"},
		{"edited config", map[string]string{"run.json": `{` + idJSON + `"experiment":"x","case_study":"classification","scenario":{"name":"s","variants":["a"]}}`,
			"config.yaml": "name: x\n"}, "config.yaml is not the configuration of"},
		{"unrecorded table", map[string]string{"run.json": `{` + idJSON + `"experiment":"x","case_study":"classification","scenario":{"name":"s","variants":["a"]}}`,
			"sweep.csv": "image,mr,param,violation\n0,blur,,1\n"}, "sweep.csv is not recorded in"},
		{"other table", map[string]string{"run.json": `{` + idJSON + `"verdicts_sha256":"ef","experiment":"x","case_study":"classification","scenario":{"name":"s","variants":["a"]}}`,
			"sweep.csv": "image,mr,param,violation\n0,blur,,1\n"}, "sweep.csv is not the table recorded in"},
	} {
		dir := t.TempDir()
		for n, c := range tc.files {
			write(dir, n, c)
		}
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing folder: %v", err)
	}
	// A summary without a scenario is rejected when rendering.
	dir := t.TempDir()
	write(dir, "cover/summary.json", `{`+idJSON+`"agent":"cover","runs":[]}`)
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err == nil || !strings.Contains(err.Error(), `missing field "scenario"`) {
		t.Errorf("no scenario: %v", err)
	}
}

// A flat rotation scenario (RQ2): the angles are the agent's main arms, the
// report shows the per-degree comparison and no per-MR or Table 1 section.
func TestRenderFlatScenario(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, record.VerdictsFile), []byte("image,mr,param,pred_original,pred_transformed,violation,label\n"+
		"0,rotation,-10,0,0,0,0\n0,rotation,10,0,3,1,0\n1,rotation,-10,1,2,1,1\n1,rotation,10,1,4,1,1\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "cover"), 0o755)
	os.WriteFile(filepath.Join(dir, "cover", record.SummaryFile), []byte(`{`+idJSON+`"agent":"cover","scenario":"rotation","mode":"replay","runs":[
		{"seed":1,"iterations":2,"violations":2,"arms":{"rotation:10":{"count":2,"violations":2}},"params":{},"original_score":2,"modified_score":0},
		{"seed":2,"iterations":2,"violations":1,"arms":{"rotation:-10":{"count":1,"violations":0},"rotation:10":{"count":1,"violations":1}},"params":{},"original_score":2,"modified_score":1}]}`), 0o644)
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(context.Background(), e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
	for _, w := range []string{"(RQ2: robustness boundaries)", "No configuration snapshot (`config.yaml`) was found"} {
		if !strings.Contains(string(report), w) {
			t.Errorf("report lacks %q", w)
		}
	}
	for _, w := range []string{"Violation rate per MR", "Effects per class", "Table 2 row"} {
		if strings.Contains(string(report), w) {
			t.Errorf("flat-scenario report has %q", w)
		}
	}
	if got, want := readTable(t, dir, "violation-rate-per-degree-rotation"), "degrees,cover,cover selections,baseline\n-10,0.00,1,50.00\n10,100.00,3,100.00\n"; got != want {
		t.Errorf("per degree:\n%s\nwant:\n%s", got, want)
	}
	if got, want := readTable(t, dir, "oracles"), "scenario,oracle,variant,images,violation rate (%)\nrotation,best single arm,rotation:10,2,100.00\nrotation,per-image best arm,per image,2,100.00\n"; got != want {
		t.Errorf("oracles:\n%s\nwant:\n%s", got, want)
	}
	if contains(out.Figures, filepath.Join(record.FiguresDir, "violation-rate-per-degree-shear.png")) || contains(out.Figures, filepath.Join(record.FiguresDir, "progress-cover.png")) {
		t.Errorf("figures without data: %v", out.Figures)
	}
}

// A real (tiny) detection experiment renders: the detection claims get
// our numbers from the baseline, the caveats mention the JPEG decoder,
// and per-degree figures cope with angles no agent chose.
func TestRenderDetectionTiny(t *testing.T) {
	dir := copyDir(t, "testdata/detection-tiny")
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	rep := string(b)
	for _, want := range []string{
		"Case study: detection",
		"| 731 | Object detection: over 70 % violation rate for four of the seven MRs. | ",
		"| 734 | Object detection: Rotation is the most effective MR",
		"baseline ranking, most effective first: ",
		"| 735 | Object detection: Flip L/R, Blur and Grayscale have the lowest violation rates",
		"lowest three in the baseline: ",
		"libjpeg-turbo",
		"figures/violation-rate-per-degree-rotation.png",
		"figures/violation-rate-per-degree-shear.png",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(rep, "| 612 |") {
		t.Error("a detection report lists classification claims")
	}
}

// An online detection experiment has no sweep.csv; its config still makes
// the report a detection one (Table 2's detection row, mAP columns).
func TestRenderDetectionOnlineWithoutTable(t *testing.T) {
	dir := copyDir(t, "testdata/detection-tiny")
	if err := os.Remove(filepath.Join(dir, "sweep.csv")); err != nil {
		t.Fatal(err)
	}
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Case study: detection", "Table 2 row (detection)", "mAP unmodified (%)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// run.json drives what the report says about the run: the scenario's
// variants bound the oracles (not the scenario's name), and the caveats
// name the SUT and the features by their recorded content hashes.
func TestRenderWithMeta(t *testing.T) {
	for _, tc := range []struct {
		name      string
		meta      record.Meta
		oracles   string
		caveats   []string
		noCaveats []string
	}{
		{"paper SUT, pHash", record.Meta{
			Experiment: "tiny", CaseStudy: "classification", Mode: "online",
			SUT:      record.File{Path: "models/cifar10_squeezenet1_1.onnx", SHA256: paperSUTSHA256},
			Features: record.FeaturesMeta{Kind: "phash"},
			Scenario: record.ScenarioMeta{Name: "hierarchical", Objective: "unit", Variants: []string{"blur", "rotation:-10", "rotation:10"}},
		},
			// blur fails on image 1, rotation:10 on image 0: each 1 of 4
			// (the tie goes to the smaller key); 2 of 4 images fail.
			"scenario,oracle,variant,images,violation rate (%)\nhierarchical,best single arm,blur,4,25.00\nhierarchical,per-image best arm,per image,4,50.00\n",
			[]string{"The SUT is the paper's SqueezeNet-1.1 CIFAR-10 checkpoint", "perceptual hash (pHash)"},
			[]string{"512-d SqueezeNet-1.1 trunk", "No run metadata"}},
		{"own SUT, default features", record.Meta{
			Experiment: "tiny", CaseStudy: "classification", Mode: "online",
			SUT:      record.File{Path: "/x/my.onnx", SHA256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
			Features: record.FeaturesMeta{Kind: "model", Model: &record.File{Path: "f.onnx", SHA256: features512SHA256}},
			Scenario: record.ScenarioMeta{Name: "other", Objective: "unit", Variants: []string{"blur"}},
		},
			// The agents ran "hierarchical", which run.json does not
			// describe: every row counts.
			"scenario,oracle,variant,images,violation rate (%)\nhierarchical,best single arm,flipud,4,75.00\nhierarchical,per-image best arm,per image,4,100.00\n",
			[]string{"The SUT is my.onnx (sha256 0123456789ab…), not the paper's", "512-d SqueezeNet-1.1 trunk"},
			[]string{"pHash", "No run metadata"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, "testdata/tiny")
			writeRunJSON(t, dir, tc.meta)
			e, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Render(context.Background(), e, Options{}); err != nil {
				t.Fatal(err)
			}
			if got := readTable(t, dir, "oracles"); got != tc.oracles {
				t.Errorf("oracles:\n%s\nwant:\n%s", got, tc.oracles)
			}
			report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
			for _, w := range tc.caveats {
				if !strings.Contains(string(report), w) {
					t.Errorf("report lacks %q", w)
				}
			}
			for _, w := range tc.noCaveats {
				if strings.Contains(string(report), w) {
					t.Errorf("report has %q", w)
				}
			}
		})
	}
	// Without run.json the report says it cannot tell.
	dir := renderTiny(t, Options{})
	report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
	if !strings.Contains(string(report), "No run metadata (run.json) to tell which SUT") {
		t.Error("a report without run.json does not say so")
	}
	// A broken run.json is an error naming it.
	dir = copyDir(t, "testdata/tiny")
	os.WriteFile(filepath.Join(dir, record.MetaFile), []byte(`{"experiment":"x","case_study":"nope","scenario":{"name":"s","variants":["a"]}}`), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "run.json") {
		t.Errorf("bad run.json: %v", err)
	}
}

// An own model on a folder of unlabelled images (experiments/configs/own-model.yaml)
// has no counterpart in the paper: no paper columns, no Table 2 row, no
// paper statements, and accuracies read "–", not 0.
func TestRenderUnlabelledFolder(t *testing.T) {
	dir := copyDir(t, "testdata/tiny")
	p := filepath.Join(dir, record.VerdictsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := 1; i < len(lines); i++ { // the label is the last column
		lines[i] = lines[i][:strings.LastIndexByte(lines[i], ',')] + ",-1"
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := record.Meta{Experiment: "tiny", CaseStudy: "classification", Mode: "online",
		SUT:      record.File{Path: "/x/my.onnx", SHA256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		Features: record.FeaturesMeta{Kind: "phash"},
		Data:     record.DataMeta{Format: "folder", File: record.File{Path: "/x/photos", SHA256: "ab"}, Images: 4},
		Scenario: record.ScenarioMeta{Name: "hierarchical", Objective: "unit", Variants: []string{"blur", "flipud", "rotation:-10", "rotation:10", "shear:-20", "shear:20"},
			Arms: []record.ArmMeta{{Name: "blur", Action: "blur"}, {Name: "flipud", Action: "flipud"},
				{Name: "rotation", Action: "rotation", Values: []float64{-10, 10}}, {Name: "shear", Action: "shear", Values: []float64{-20, 20}}}},
	}
	writeRunJSON(t, dir, meta)
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(context.Background(), e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.SplitN(readTable(t, dir, "violation-rate-per-mr"), "\n", 2)[0], `MR,cover,random,"baseline (all angles, pooled)"`; got != want {
		t.Errorf("per-MR header %q, want %q", got, want)
	}
	// cover: 8 iterations, 4 violations; no accuracies.
	if got, want := readTable(t, dir, "runtime-accuracy-per-agent"), "agent,mode,runs,iterations,ms per iteration,µs per decision,accuracy unmodified (%),accuracy modified (%),violation rate (%)\n"+
		"cover,online,2,8,10.00,800.00,,,50.00\n"+
		"random,online,1,4,5.00,2.00,,,25.00\n"; got != want {
		t.Errorf("runtime-accuracy-per-agent.csv:\n%s\nwant:\n%s", got, want)
	}
	if contains(out.Tables, filepath.Join(record.TablesDir, "table2-runtime-accuracy.csv")) || contains(out.Tables, filepath.Join(record.TablesDir, "paper-claims.csv")) {
		t.Errorf("tables with the paper's values written: %v", out.Tables)
	}
	svg, err := os.ReadFile(filepath.Join(dir, record.FiguresDir, "progress-cover.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(svg, []byte("accuracy")) || !bytes.Contains(svg, []byte("failure rate")) {
		t.Error("the progress figure of unlabelled data draws accuracies (or no failure rate)")
	}
	report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
	for _, bad := range []string{"96.60", "paper Table 1 Avg.", "ours − paper", "| 612 |", "Table 1 cell", "not the paper's 10,000"} {
		if strings.Contains(string(report), bad) {
			t.Errorf("report of an own model on unlabelled images has %q", bad)
		}
	}
	for _, want := range []string{"The data have no labels", "The data (4 images, folder `photos`) are not one of the paper's data sets",
		"## The paper's statements\n\nLeft out:", "## Effects per class (Table 1)\n\nLeft out: the verdict table has no labels."} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q", want)
		}
	}

	// The same results on labelled paper data keep the paper's columns, and
	// say "about 1 image" of 4 images' Table 1 cells.
	dir = renderTiny(t, Options{})
	report, _ = os.ReadFile(filepath.Join(dir, record.ReportFile))
	for _, want := range []string{"| 96.60 |", "paper Table 1 Avg.", "| 612 |", "each Table 1 cell rests on about 1 image ("} {
		if !strings.Contains(string(report), want) {
			t.Errorf("labelled report lacks %q", want)
		}
	}
}

// TestRenderRemovesStaleOutputs: a render deletes the figures and tables
// an earlier render wrote (as the list of what amt wrote says) that it
// does not write, and nothing else: not a file of the same kinds that amt
// did not write (#34, class 6).
func TestRenderRemovesStaleOutputs(t *testing.T) {
	dir := renderTiny(t, Options{})
	stale := []string{"figures/old.png", "figures/old.svg", "tables/gone.csv", "tables/gone.md", "tables/gone.tex"}
	kept := []string{"figures/notes.txt", "tables/README", "figures/mine.png", "tables/mine.csv", "figures/mine.svg"}
	for _, f := range append(append([]string(nil), stale...), kept...) {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An earlier amt wrote the stale files (and listed them); a crafted
	// entry outside the folder is ignored.
	if err := record.ReplaceWritten(dir, []string{"figures", "tables"}, append(stale, "figures/../../outside.png")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(dir), "outside.png")
	os.WriteFile(outside, []byte("x"), 0o644)
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(context.Background(), e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range stale {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there (%v)", f, err)
		}
	}
	for _, f := range append(append(kept, out.Figures...), out.Tables...) {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a file outside the folder listed as written was touched: %v", err)
	}
}

// TestRenderQuotesSnapshot: the Configuration section quotes the folder's
// config.yaml and gives the sha256 run.json records.
func TestRenderQuotesSnapshot(t *testing.T) {
	dir := copyDir(t, "testdata/detection-tiny")
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
	cfg, _ := os.ReadFile(filepath.Join(dir, record.ConfigFile))
	want := "The configuration these results were made with (`config.yaml`, the snapshot saved by amt sweep and amt run; sha256 `" +
		record.SHA256(cfg) + "`, as `run.json` records):\n\n```yaml\n" + string(cfg)
	if !strings.Contains(string(report), want) {
		t.Errorf("report lacks\n%s", want)
	}
}

// TestLoadLegacyFolder: a folder none of whose files carries a run
// identity (an older amt's), with or without its run.json, still loads and
// renders, with a caveat that its files could not be checked; its logs are
// read as before.
func TestLoadLegacyFolder(t *testing.T) {
	for _, withMeta := range []bool{false, true} {
		t.Run(fmt.Sprintf("run.json %v", withMeta), func(t *testing.T) {
			dir := copyDir(t, "testdata/tiny")
			for _, p := range []string{"cover/summary.json", "random/summary.json", "random/timing.json", "cover/timing.json"} {
				path := filepath.Join(dir, p)
				b, err := os.ReadFile(path)
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				var lines []string
				for _, l := range strings.Split(string(b), "\n") {
					if !strings.Contains(l, `"config_sha256"`) && !strings.Contains(l, `"sweep_key"`) && !strings.Contains(l, `"logs"`) {
						lines = append(lines, l)
					}
				}
				if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if withMeta {
				// An older amt's run.json: the agents, no identity, no
				// sha256 of sweep.csv; config.yaml beside it unchecked.
				m := record.Meta{Experiment: "tiny", CaseStudy: "classification", Mode: "online",
					SUT:      record.File{Path: "/x/my.onnx", SHA256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
					Features: record.FeaturesMeta{Kind: "phash"},
					Data:     record.DataMeta{Format: "folder", File: record.File{Path: "/x/photos", SHA256: "ab"}, Images: 4},
					Scenario: record.ScenarioMeta{Name: "hierarchical", Objective: "unit", Variants: []string{"blur", "flipud", "rotation:-10", "rotation:10", "shear:-20", "shear:20"},
						Arms: []record.ArmMeta{{Name: "blur", Action: "blur"}, {Name: "flipud", Action: "flipud"},
							{Name: "rotation", Action: "rotation", Values: []float64{-10, 10}}, {Name: "shear", Action: "shear", Values: []float64{-20, 20}}}},
					Agents: []record.AgentMeta{{ID: "cover", Name: "cover"}, {ID: "random", Name: "random"}}}
				if err := record.WriteMeta(filepath.Join(dir, record.MetaFile), m); err != nil {
					t.Fatal(err)
				}
			}
			e, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !e.Legacy || len(e.Agents) != 2 || len(e.Agents[0].Logs) == 0 || (e.Meta != nil) != withMeta {
				t.Fatalf("legacy %v, %d agents, run.json %v", e.Legacy, len(e.Agents), e.Meta != nil)
			}
			if _, err := Render(context.Background(), e, Options{}); err != nil {
				t.Fatal(err)
			}
			report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
			if !strings.Contains(string(report), "No file of this folder carries a run identity") {
				t.Error("no caveat about the unchecked folder")
			}
		})
	}
	// A fresh tiny folder has identities: no such caveat.
	fresh, _ := os.ReadFile(filepath.Join(renderTiny(t, Options{}), record.ReportFile))
	if strings.Contains(string(fresh), "No file of this folder carries a run identity") {
		t.Error("caveat in a folder with identities")
	}
}

// The setup table's kind column gives an agent's kind from run.json, not
// its id: an agent with id cover-linear is a cover (and gets cover's
// caveat); without run.json it is the summary's agent.
func TestRenderAgentKind(t *testing.T) {
	dir := copyDir(t, "testdata/tiny")
	if err := os.Rename(filepath.Join(dir, "cover"), filepath.Join(dir, "cover-linear")); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(dir, "cover-linear", record.SummaryFile)
	sum, err := record.ReadSummary(sp)
	if err != nil {
		t.Fatal(err)
	}
	sum.Agent = "cover-linear" // amt run writes the id
	if err := record.WriteSummary(sp, sum); err != nil {
		t.Fatal(err)
	}
	meta := record.Meta{
		Experiment: "tiny", CaseStudy: "classification", Mode: "online",
		Scenario: record.ScenarioMeta{Name: "hierarchical", Objective: "unit", Variants: []string{"blur", "rotation:-10", "rotation:10"}},
		Agents:   []record.AgentMeta{{ID: "cover-linear", Name: "cover", Options: map[string]string{"hidden": "0"}}, {ID: "random", Name: "random"}},
	}
	meta.Identity = sum.Identity
	if meta.VerdictsSHA256, err = record.FileSHA256(filepath.Join(dir, record.VerdictsFile)); err != nil {
		t.Fatal(err)
	}
	if err := record.WriteMeta(filepath.Join(dir, record.MetaFile), meta); err != nil {
		t.Fatal(err)
	}
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	got := readTable(t, dir, "agents")
	for _, w := range []string{"\ncover-linear,cover,hierarchical,", "\nrandom,random,hierarchical,"} {
		if !strings.Contains(got, w) {
			t.Errorf("agents table lacks %q:\n%s", w, got)
		}
	}
	report, _ := os.ReadFile(filepath.Join(dir, record.ReportFile))
	if !strings.Contains(string(report), "Agent `cover` reproduces Vowpal Wabbit") {
		t.Error("the report lacks cover's caveat for an agent of kind cover")
	}
}

// A regression experiment's folders (id-carried, id-fresh) find their kind
// through regression.json's configured id; a folder neither file names
// (amt replay's) keeps its summary's agent.
func TestExperimentKind(t *testing.T) {
	e := &Experiment{
		Meta: &record.Meta{Agents: []record.AgentMeta{{ID: "cover-linear", Name: "cover"}, {ID: "hts", Name: "hts"}}},
		Regression: &record.Regression{Agents: []record.RegressionAgent{
			{ID: "cover-linear-carried", Agent: "cover-linear", State: record.Carried},
			{ID: "hts-fresh", Agent: "hts", State: record.Fresh},
		}},
	}
	for _, tc := range []struct{ folder, summary, want string }{
		{"cover-linear-carried", "cover-linear-carried", "cover"},
		{"hts-fresh", "hts-fresh", "hts"},
		{"cover-linear", "cover-linear", "cover"},
		{"lints", "lints", "lints"},
	} {
		if got := e.Kind(Agent{Name: tc.folder, Summary: record.Summary{Agent: tc.summary}}); got != tc.want {
			t.Errorf("Kind(%s) = %q, want %q", tc.folder, got, tc.want)
		}
	}
}

// The gallery section links each sheet amt run drew, per agent, MRs in
// scenario order (here without run.json: by name), and is absent when
// there are none.
func TestRenderGallerySection(t *testing.T) {
	dir := renderTiny(t, Options{})
	md, err := os.ReadFile(filepath.Join(dir, record.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "## Gallery of violations") {
		t.Error("a report without sheets has a gallery section")
	}
	for _, mr := range []string{"rotation", "blur"} {
		p := filepath.Join(dir, filepath.FromSlash(record.GalleryFile("cover", mr)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(context.Background(), e, Options{}); err != nil {
		t.Fatal(err)
	}
	md, err = os.ReadFile(filepath.Join(dir, record.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	i := strings.Index(s, "## Gallery of violations")
	blur := strings.Index(s, "![blur: violating cases of agent cover](gallery/cover/blur.png)")
	rot := strings.Index(s, "![rotation: violating cases of agent cover](gallery/cover/rotation.png)")
	if i < 0 || blur < i || rot < blur || !strings.Contains(s[i:], "### Agent cover") {
		t.Errorf("gallery section: %d, blur %d, rotation %d:\n%s", i, blur, rot, s[max(i, 0):])
	}
}
