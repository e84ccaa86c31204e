package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/gate"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/plots"
	"github.com/amt-dev/amt/plots/analysis"
	"github.com/amt-dev/amt/plots/gallery"
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
	return goldenCheckAgent(t, dir, model, size, passes, table, "random", extra)
}

// goldenCheckAgent is goldenCheck with another agent.
func goldenCheckAgent(t *testing.T, dir, model string, size, passes int, table map[int]map[string][3]int, agent, extra string) *Experiment {
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
agents: [%s]
seeds: 7
passes: %d
log_interval: 1000
gallery: 0
output: %s
cache: %s
%s`, name, model, size, agent, passes, filepath.Join(dir, name), filepath.Join(dir, "cache"), extra)
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
// the sessions' traces, not from the result files the gate reads). With
// sessions long enough to cover the tables evenly (the random agent, 300
// passes), those are also the MRs whose rates differ in the whole tables
// (all 100 images × 59 follow-ups; blur +17 pp and rotation +4.8 pp):
// 3000 follow-ups per session see only blur's rise.
func TestCheckRegressionGolden(t *testing.T) {
	sq := goldenVerdicts(t, "squeezenet_first100.csv")
	rn := goldenVerdicts(t, "resnet20_first100.csv")
	const margin, alpha = 2.0, 0.05
	type pair struct {
		image   int
		variant string
	}
	var mrs []string
	// flagged returns the MRs whose strata show a rise above the margin
	// with Holm-adjusted support, and those that do not.
	flagged := func(strata map[string][]gate.Stratum) (want, notWant []string, rises, adj []float64) {
		var tested []string
		var ps []float64
		for _, mr := range mrs {
			rd, ok := gate.RiskDifference(strata[mr])
			if !ok {
				continue
			}
			p, _ := gate.IncreaseTest(strata[mr])
			tested, ps, rises = append(tested, mr), append(ps, p), append(rises, 100*rd)
		}
		adj = analysis.Holm(ps)
		for i, mr := range tested {
			if rises[i] > margin && adj[i] <= alpha {
				want = append(want, mr)
			} else {
				notWant = append(notWant, mr)
			}
		}
		return want, notWant, rises, adj
	}
	// The whole tables, one stratum per follow-up.
	whole := map[string][]gate.Stratum{}
	for _, key := range slices.Sorted(maps.Keys(rn[0])) {
		mr, _, ok := scenario.ParseKey(key)
		if !ok {
			mr = key
		}
		var s gate.Stratum
		for img := range 100 {
			s.X1 += rn[img][key][2]
			s.X0 += sq[img][key][2]
		}
		s.N1, s.N0 = 100, 100
		whole[mr] = append(whole[mr], s)
	}
	for _, passes := range []int{30, 300} {
		dir := t.TempDir()
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
		mrs = cur.Config.Scenario.Actions()

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
		strata := map[string][]gate.Stratum{}
		for _, mr := range mrs {
			keys := map[string]bool{}
			for k := range c1[mr] {
				keys[k] = true
			}
			for k := range c0[mr] {
				keys[k] = true
			}
			for k := range keys {
				strata[mr] = append(strata[mr], gate.Stratum{X1: c1[mr][k].X1, N1: c1[mr][k].N1, X0: c0[mr][k].X1, N0: c0[mr][k].N1})
			}
		}
		want, notWant, rises, adj := flagged(strata)
		if len(want) == 0 || len(notWant) == 0 {
			t.Fatalf("%d passes: the tables flag %v and pass %v: the test would not tell a gate that flags all or none", passes, want, notWant)
		}
		var got []string
		for _, c := range res.Conditions {
			if c.Kind == record.ConditionRegression && c.Status == record.StatusFail {
				got = append(got, c.MR)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d passes: the gate fails %v; the tables say %v (rises %v pp, Holm p %v)", passes, got, want, rises, adj)
		}
		if res.Verdict != record.VerdictFail || res.Baseline == nil || res.Baseline.Iterations != passes*100 {
			t.Errorf("%d passes: check %+v", passes, res)
		}
		t.Logf("%d passes: flagged %v, passed %v (rises %.1f pp, Holm-adjusted p %.3g)", passes, want, notWant, rises, adj)
		if passes == 300 {
			wantWhole, _, wr, wa := flagged(whole)
			if !slices.Equal(got, wantWhole) {
				t.Errorf("%d passes: the gate fails %v; the whole tables differ in %v (rises %.1f pp, Holm p %.3g)", passes, got, wantWhole, wr, wa)
			}
			t.Logf("whole tables: flagged %v (rises %.1f pp, Holm-adjusted p %.3g)", wantWhole, wr, wa)
		}
	}
}

// junitXML is what the test reads of junit.xml, declared here from the
// JUnit schema rather than taken from package plots.
type junitXML struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Props    []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped   *struct{} `xml:"skipped"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestCheckOnlineReports runs a small online check of ResNet-20 (40 follow-
// ups) whose per-MR limits of 0 fail every MR that violated, and checks its
// reports against the session's own iterations: junit.xml (parsed with
// encoding/xml) has a suite per MR and a case per MR × parameter value
// with its counts, failures naming each violating image with its
// parameter and the CIFAR-10 names of the predictions; summary.md gives
// the verdict first, the table, the state line and the gallery links; each
// gallery sheet shows, in order, the first violations of its MR: the
// source tile is the data set's image upscaled 4× (nearest) and the
// follow-up tile is the relation applied to it.
func TestCheckOnlineReports(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	dir := t.TempDir()
	const perMR = 3
	doc := fmt.Sprintf(`name: small
case_study: classification
mode: online
data: {format: cifar10, path: cifar10/test_batch_first1017.bin, limit: 40}
sut: {model: models/cifar10_resnet20.onnx, input_size: 32}
features: {kind: phash}
action_set: hierarchical
agents: [cover]
seeds: 3
log_interval: 10
gallery: %d
output: %s
cache: %s
check:
  budget: 40
  fail_on: {mr: {blur: 0, fliplr: 0, flipud: 0, grayscale: 0, invert: 0, rotation: 0, shear: 0}}
`, perMR, filepath.Join(dir, "out"), filepath.Join(dir, "cache"))
	cfg, err := parseConfig([]byte(doc), filepath.Join(dir, "small.yaml"), assets)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var steps []Step
	res, err := e.Check(context.Background(), io.Discard, nil, CheckOptions{Trace: func(s Step) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := plots.WriteCheckReports(cfg.Output); err != nil {
		t.Fatal(err)
	}
	names := strings.Fields(readFile(t, filepath.Join(assets, "cifar10", "batches.meta.txt")))
	if len(names) != 10 {
		t.Fatalf("class names %v", names)
	}
	// The session's counts and violations, per follow-up and per MR.
	type cell struct{ n, x int }
	cells := map[string]cell{}
	violations := map[string][]Step{} // by MR, in order
	keyOf := func(s Step) (string, string) {
		v, err := cfg.Scenario.Variant(s.Choice.Arm, s.Choice.Param)
		if err != nil {
			t.Fatal(err)
		}
		return v.Action, v.Key()
	}
	for _, s := range steps {
		mr, key := keyOf(s)
		c := cells[key]
		c.n++
		if s.Violated {
			c.x++
			violations[mr] = append(violations[mr], s)
		}
		cells[key] = c
	}
	if len(steps) != 40 || len(violations) == 0 {
		t.Fatalf("%d steps, violations %v", len(steps), violations)
	}
	if res.Verdict != record.VerdictFail {
		t.Fatalf("verdict %s with limits of 0 and violations", res.Verdict)
	}

	// junit.xml
	var j junitXML
	if err := xml.Unmarshal([]byte(readFile(t, filepath.Join(cfg.Output, record.JUnitFile))), &j); err != nil {
		t.Fatal(err)
	}
	var mrs []string
	for _, a := range cfg.Scenario.Arms {
		mrs = append(mrs, a.Action)
	}
	if len(j.Suites) != len(mrs) {
		t.Fatalf("%d suites, want one per MR (%v)", len(j.Suites), mrs)
	}
	failures := 0
	for i, su := range j.Suites {
		mr := mrs[i]
		if su.Name != mr {
			t.Errorf("suite %d: %q, want %q", i, su.Name, mr)
		}
		var keys []string
		for _, v := range cfg.Scenario.Variants() {
			if v.Action == mr {
				keys = append(keys, v.Key())
			}
		}
		// One case per follow-up, then the MR's condition.
		if len(su.Cases) != len(keys)+1 || su.Tests != len(su.Cases) {
			t.Fatalf("suite %s: %d cases (tests=%d), want %d", mr, len(su.Cases), su.Tests, len(keys)+1)
		}
		nf := 0
		for k, key := range keys {
			tc := su.Cases[k]
			c := cells[key]
			if tc.Name != key {
				t.Errorf("%s case %d: %q, want %q", mr, k, tc.Name, key)
			}
			counts := fmt.Sprintf(": %d of %d follow-up", c.x, c.n)
			switch {
			case c.n == 0:
				if tc.Skipped == nil {
					t.Errorf("%s: not tried, not skipped", key)
				}
			case c.x > 0:
				if tc.Failure == nil {
					t.Fatalf("%s: %d violations and no failure", key, c.x)
				}
				nf++
				if !strings.Contains(tc.Failure.Text, counts) {
					t.Errorf("%s: failure %q lacks %q", key, tc.Failure.Text, counts)
				}
				for _, s := range violations[mr] {
					if _, k2 := keyOf(s); k2 != key {
						continue
					}
					o := s.Outcome
					want := fmt.Sprintf("image %d, %s: %s → %s (label %s) (iteration %d)", s.Image, e.meta().Scenario.VariantText(key),
						names[o.PredOriginal], names[o.PredModified], names[o.Label], s.Iteration)
					if !strings.Contains(tc.Failure.Text, want) {
						t.Errorf("%s: failure lacks %q:\n%s", key, want, tc.Failure.Text)
					}
				}
			default:
				if tc.Failure != nil || !strings.Contains(tc.SystemOut, counts) {
					t.Errorf("%s: %+v, want a pass with %q", key, tc, counts)
				}
			}
		}
		if cond := su.Cases[len(keys)]; (cond.Failure != nil) != (len(violations[mr]) > 0) {
			t.Errorf("%s: condition case %+v with %d violations", mr, cond, len(violations[mr]))
		} else if cond.Failure != nil {
			nf++
		}
		if su.Failures != nf {
			t.Errorf("suite %s: failures=%d, counted %d", mr, su.Failures, nf)
		}
		failures += nf
	}
	if j.Failures != failures || j.Failures == 0 {
		t.Errorf("testsuites failures=%d, counted %d", j.Failures, failures)
	}

	// summary.md
	sum := readFile(t, filepath.Join(cfg.Output, record.CheckSummaryFile))
	if !strings.HasPrefix(sum, "# ❌ amt check small: **FAIL**\n") {
		t.Errorf("summary.md does not start with the verdict:\n%s", sum)
	}
	if !strings.Contains(sum, "- Agent state: **new** (no state at `"+filepath.Join(cfg.Output, "state", "cover", "seed-3.state")+"`") {
		t.Errorf("summary.md lacks the state line:\n%s", sum)
	}
	table := strings.Index(sum, "## Violation rates by MR")
	if table < 0 || table < strings.Index(sum, "**FAIL**") {
		t.Fatalf("summary.md: the table is missing or before the verdict")
	}
	for _, mr := range mrs {
		n, x := 0, len(violations[mr])
		for key, c := range cells {
			if a, _, ok := scenario.ParseKey(key); a == mr || (!ok && key == mr) {
				n += c.n
			}
		}
		g := "[sheet](" + record.GalleryFile("cover", mr) + ")"
		mark := ""
		if x > 0 {
			mark = "❌"
		}
		row := fmt.Sprintf("| %s | %s | %d | %d |", mark, mr, n, x)
		if !strings.Contains(sum, row) || (x > 0) != strings.Contains(sum, g) {
			t.Errorf("summary.md: %s has %d violations: want the row %q and the gallery link %q iff any", mr, x, row, g)
		}
	}

	// The gallery.
	for mr, vs := range violations {
		f, err := os.Open(filepath.Join(cfg.Output, filepath.FromSlash(record.GalleryFile("cover", mr))))
		if err != nil {
			t.Fatal(err)
		}
		sheet, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		shown := vs[:min(perMR, len(vs))]
		for i, s := range shown {
			src, _, err := e.full.Image(s.Image)
			if err != nil {
				t.Fatal(err)
			}
			_, key := keyOf(s)
			follow := e.relations[key].Apply(src)
			srcT, fupT := gallery.Tiles(i, len(shown), gallery.Options{Side: 128, Columns: 3})
			for _, tile := range []struct {
				what string
				r    image.Rectangle
				img  image.Image
			}{{"source", srcT, src}, {"follow-up", fupT, follow}} {
				b := tile.img.Bounds()
				at := gallery.FitRect(tile.r, b.Dx(), b.Dy())
				if at.Dx() != 4*b.Dx() {
					t.Fatalf("%s pair %d: %s drawn %d wide, want 4 × %d", mr, i, tile.what, at.Dx(), b.Dx())
				}
				bad := 0
				for y := 0; y < b.Dy(); y++ {
					for x := 0; x < b.Dx(); x++ {
						want := color.RGBAModel.Convert(tile.img.At(x, y))
						for _, d := range [][2]int{{0, 0}, {3, 3}} {
							if got := color.RGBAModel.Convert(sheet.At(at.Min.X+4*x+d[0], at.Min.Y+4*y+d[1])); got != want {
								bad++
							}
						}
					}
				}
				if bad > 0 {
					t.Errorf("%s pair %d (image %d, %s): %s tile differs at %d pixels", mr, i, s.Image, key, tile.what, bad)
				}
			}
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The check section parses with its defaults and fails like every key:
// file:line:column, key, problem, suggestion.
func TestCheckConfig(t *testing.T) {
	assets := fakeAssets(t)
	c, err := parseConfig([]byte(baseConfig), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	if cc := c.Check; cc.Agent != "cover" || cc.Seed != 1 || cc.Budget != 0 || cc.Time != 0 || cc.FailRate != nil || cc.FailMR != nil ||
		cc.Baseline != "" || cc.Margin != 2 || cc.Alpha != 0.05 || c.Gallery != 6 {
		t.Errorf("defaults: %+v, gallery %d", cc, c.Gallery)
	}
	doc := baseConfig + `check:
  agent: cover-linear
  seed: 9
  budget: 8
  time: 1m30s
  fail_on:
    violation_rate: 0.3
    mr: {flipud: 0.6, rotation: 0.5}
  baseline: prev
  regression: {margin: 5, alpha: 0.01}
`
	c, err = parseConfig([]byte(doc), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	if cc := c.Check; cc.Agent != "cover-linear" || cc.Seed != 9 || cc.Budget != 8 || cc.Time.Seconds() != 90 || *cc.FailRate != 0.3 ||
		len(cc.FailMR) != 2 || cc.FailMR["flipud"] != 0.6 || cc.Baseline != "prev" || cc.Margin != 5 || cc.Alpha != 0.01 {
		t.Errorf("parsed %+v", cc)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"typo", "  budget: 8", "  budgte: 8", `exp/test.yaml:25:3: check.budgte: unknown key; did you mean "budget"?`},
		{"unknown relation", "flipud: 0.6", "flipup: 0.6", `exp/test.yaml:29:10: check.fail_on.mr.flipup: "flipup" is not a relation of the action set (blur, fliplr, flipud, grayscale, invert, rotation, shear); did you mean "flipud"?`},
		{"rate", "violation_rate: 0.3", "violation_rate: 30", `exp/test.yaml:28:21: check.fail_on.violation_rate: "30" is not a number in [0, 1]`},
		{"agent", "agent: cover-linear", "agent: cover-liner", `check.agent: "cover-liner" is not the id of an agent of agents`},
		{"budget", "budget: 8", "budget: 11", `check.budget: 11 is more than passes × data.limit = 10`},
		{"time", "time: 1m30s", "time: soon", `exp/test.yaml:26:9: check.time: "soon" is not a duration`},
		{"alpha", "alpha: 0.01", "alpha: 1", `check.regression.alpha: "1" is not a number in (0, 1)`},
	} {
		d := strings.Replace(doc, tc.old, tc.new, 1)
		if d == doc {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := parseConfig([]byte(d), "exp/test.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.name, err, tc.want)
		}
	}
	// amt check runs one SUT with its agent as configured: a tuning or a
	// regression experiment is refused at its section, before anything runs.
	for _, tc := range []struct{ section, want string }{
		{"tune: {seeds: 101-102, grid: [{agent: cover, options: {hidden: [0, 2]}}]}\n", `tune: amt check runs its agent as configured`},
		{"regression: {sut: {model: models/m.onnx, input_size: 224}}\n", `regression: amt check tests one SUT`},
	} {
		c, err := parseConfig([]byte(doc+tc.section), "exp/test.yaml", assets)
		if err != nil {
			t.Fatalf("%s: %v", tc.section, err)
		}
		_, err = (&Experiment{Config: c}).Check(context.Background(), io.Discard, nil, CheckOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.section, err, tc.want)
		}
	}
}

// A time budget ends the session after the iteration during which it ran
// out (at least one), and the check says so.
func TestCheckTimeBudget(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	dir := t.TempDir()
	doc := fmt.Sprintf(`name: timed
case_study: classification
mode: online
data: {format: cifar10, path: cifar10/test_batch_first1017.bin, limit: 20}
sut: {model: models/cifar10_resnet20.onnx, input_size: 32}
features: {kind: phash}
action_set: basic
agents: [random]
seeds: 1
log_interval: 5
output: %s
check: {budget: 20, time: 1ns}
`, filepath.Join(dir, "out"))
	cfg, err := parseConfig([]byte(doc), filepath.Join(dir, "timed.yaml"), assets)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Check(context.Background(), io.Discard, nil, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 1 || res.StoppedBy != "time" || res.Budget != 20 || res.TimeBudget != "1ns" {
		t.Errorf("check %+v", res)
	}
	s, err := record.ReadSummary(filepath.Join(cfg.Output, "random", record.SummaryFile))
	if err != nil || len(s.Runs) != 1 || s.Runs[0].Iterations != 1 {
		t.Fatalf("summary %+v, %v", s, err)
	}
	if _, _, err := plots.WriteCheckReports(cfg.Output); err != nil {
		t.Fatal(err)
	}
	if sum := readFile(t, filepath.Join(cfg.Output, record.CheckSummaryFile)); !strings.Contains(sum, "1 of 20 iterations, time budget 1ns (stopped by the time budget)") {
		t.Errorf("summary.md:\n%s", sum)
	}
}

// The regression test needs audit samples: a baseline checked without
// one, or a check whose audit share leaves none, is a configuration error
// before the session; with the default share every follow-up is an audit
// draw and check.json says so.
func TestCheckAuditSample(t *testing.T) {
	sq := goldenVerdicts(t, "squeezenet_first100.csv")
	rn := goldenVerdicts(t, "resnet20_first100.csv")
	dir := t.TempDir()
	noAudit := goldenCheck(t, dir, "cifar10_squeezenet1_1.onnx", 224, 1, sq, "check: {audit: 0}\n")
	res, err := noAudit.Check(context.Background(), io.Discard, nil, CheckOptions{Replay: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Audit != 0 || res.AuditIterations != 0 {
		t.Errorf("check.audit 0: %+v", res)
	}
	for _, tc := range []struct{ name, extra, want string }{
		{"baseline without audit", fmt.Sprintf("check: {baseline: %s}\n", noAudit.Config.Output), "has no audit sample"},
		{"audit 0 with a baseline", fmt.Sprintf("check: {baseline: %s, audit: 0}\n", noAudit.Config.Output), "leaves no audit sample"},
		{"audit too small for the budget", fmt.Sprintf("check: {baseline: %s, audit: 0.001, budget: 50}\n", noAudit.Config.Output), "leaves no audit sample"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := goldenCheck(t, t.TempDir(), "cifar10_resnet20.onnx", 32, 1, rn, tc.extra)
			_, err := e.Check(context.Background(), io.Discard, nil, CheckOptions{Replay: true})
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a *ConfigError containing %q", err, tc.want)
			}
		})
	}
	withAudit := goldenCheck(t, t.TempDir(), "cifar10_squeezenet1_1.onnx", 224, 1, sq, "check: {budget: 60}\n")
	res, err = withAudit.Check(context.Background(), io.Discard, nil, CheckOptions{Replay: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Audit != 1 || res.AuditIterations != 60 {
		t.Errorf("the default share: audit %v, %d audit follow-ups of %d", res.Audit, res.AuditIterations, res.Iterations)
	}
}
