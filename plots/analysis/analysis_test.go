package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func cnt(count, violations int) record.Counts {
	return record.Counts{Count: count, Violations: violations}
}

// The original pools seeds as Σ violations / Σ selections (ratio of means).
// Seed 1 chose rotation once and it failed (rate 1); seed 2 chose it nine
// times without a failure (rate 0). Ratio of means: 1/10; mean of ratios
// would be 0.5.
func TestPoolArmsIsRatioOfMeans(t *testing.T) {
	runs := []record.Run{
		{Seed: 1, Iterations: 10, Violations: 3, Arms: map[string]record.Counts{"rotation": {Count: 1, Violations: 1}, "blur": {Count: 9, Violations: 2}},
			Params: map[string]record.Counts{"rotation:-30": {Count: 1, Violations: 1}}},
		{Seed: 2, Iterations: 10, Violations: 1, Arms: map[string]record.Counts{"rotation": {Count: 9, Violations: 0}, "blur": {Count: 1, Violations: 1}},
			Params: map[string]record.Counts{"rotation:-30": {Count: 4}, "rotation:45": {Count: 5}}},
	}
	arms := PoolArms(runs)
	if got := arms["rotation"]; got != (record.Counts{Count: 10, Violations: 1}) || !near(got.Rate(), 0.1) {
		t.Errorf("rotation pooled %+v rate %v, want 1/10", got, got.Rate())
	}
	if got := arms["blur"].Rate(); !near(got, 0.3) {
		t.Errorf("blur rate %v, want 3/10 (mean of ratios would be 0.61)", got)
	}
	params := PoolParams(runs, "rotation")
	if got := params[-30]; got != (record.Counts{Count: 5, Violations: 1}) {
		t.Errorf("rotation -30 pooled %+v", got)
	}
	if got := params[45]; got != (record.Counts{Count: 5}) {
		t.Errorf("rotation 45 pooled %+v", got)
	}
	if len(PoolParams(runs, "shear")) != 0 {
		t.Error("shear params from a run without shear")
	}
	if got := Pooled(runs); got != (record.Counts{Count: 20, Violations: 4}) {
		t.Errorf("pooled %+v", got)
	}
	if got := SpreadOf(RunRates(runs)); !near(got.Mean, 0.2) || !near(got.Min, 0.1) || !near(got.Max, 0.3) || !near(got.SD, math.Sqrt(0.02)) {
		t.Errorf("spread %+v", got)
	}
}

// In the flat rotation/shear scenarios the angles are the main arms.
func TestPoolFlatScenario(t *testing.T) {
	runs := []record.Run{
		{Arms: map[string]record.Counts{"shear:5": {Count: 2, Violations: 1}, "shear:-45": {Count: 3, Violations: 3}}},
		{Arms: map[string]record.Counts{"shear:5": {Count: 2, Violations: 0}}},
	}
	p := PoolParams(runs, "shear")
	if p[5] != (record.Counts{Count: 4, Violations: 1}) || p[-45] != (record.Counts{Count: 3, Violations: 3}) || len(p) != 2 {
		t.Errorf("flat params %+v", p)
	}
	if a := PoolArms(runs); a["shear"] != (record.Counts{Count: 7, Violations: 4}) || len(a) != 1 {
		t.Errorf("flat arms %+v", a)
	}
}

func TestAccuracyOf(t *testing.T) {
	a := AccuracyOf([]record.Run{
		{Iterations: 10, OriginalScore: 9, ModifiedScore: 5, MeanIterationMS: 100},
		{Iterations: 30, OriginalScore: 27, ModifiedScore: 12, MeanIterationMS: 20},
		{Iterations: 10, OriginalScore: 10, ModifiedScore: 3},
	})
	if a.Iterations != 50 || !near(a.Original, 46.0/50) || !near(a.Modified, 20.0/50) || !near(a.MeanIterationMS, (1000+600)/40.0) {
		t.Errorf("accuracy %+v", a)
	}
	if z := AccuracyOf(nil); z != (Accuracy{}) {
		t.Errorf("empty %+v", z)
	}
}

func v(img int, mr string, p float64, viol bool, label, po, pt int) record.Verdict {
	return record.Verdict{Image: img, MR: mr, Param: p, Violation: viol, Label: label, PredOriginal: po, PredTransformed: pt,
		MapOriginal: math.NaN(), MapTransformed: math.NaN()}
}

var nan = math.NaN()

// A hand-made table: 3 images (labels 0, 1, 1); blur fails on image 0;
// rotation ±30 and ±60; shear ±20.
func smallTable() []record.Verdict {
	return []record.Verdict{
		v(0, "blur", nan, true, 0, 0, 2),
		v(0, "rotation", -30, false, 0, 0, 0), v(0, "rotation", 30, false, 0, 0, 0),
		v(0, "rotation", -60, true, 0, 0, 3), v(0, "rotation", 60, true, 0, 0, 3),
		v(0, "shear", -20, false, 0, 0, 0), v(0, "shear", 20, false, 0, 0, 0),
		v(1, "blur", nan, false, 1, 1, 1),
		v(1, "rotation", -30, true, 1, 1, 4), v(1, "rotation", 30, false, 1, 1, 1),
		v(1, "rotation", -60, true, 1, 1, 4), v(1, "rotation", 60, true, 1, 1, 4),
		v(1, "shear", -20, false, 1, 1, 1), v(1, "shear", 20, false, 1, 1, 1),
		v(2, "blur", nan, false, 1, 5, 5),
		v(2, "rotation", -30, false, 1, 5, 5), v(2, "rotation", 30, false, 1, 5, 5),
		v(2, "rotation", -60, false, 1, 5, 5), v(2, "rotation", 60, true, 1, 5, 1),
		v(2, "shear", -20, false, 1, 5, 5), v(2, "shear", 20, false, 1, 5, 5),
	}
}

func TestBaseline(t *testing.T) {
	rows := smallTable()
	by := BaselineByMR(rows)
	// Rotation: 12 rows, 6 fail → 0.5 (unweighted over angles and images).
	if by["rotation"] != (record.Counts{Count: 12, Violations: 6}) || by["blur"] != (record.Counts{Count: 3, Violations: 1}) || by["shear"] != (record.Counts{Count: 6}) {
		t.Errorf("by MR %+v", by)
	}
	p := BaselineByParam(rows, "rotation")
	want := map[float64]record.Counts{-60: cnt(3, 2), -30: cnt(3, 1), 30: cnt(3, 0), 60: cnt(3, 3)}
	for k, w := range want {
		if p[k] != w {
			t.Errorf("rotation %v: %+v want %+v", k, p[k], w)
		}
	}
	if len(p) != len(want) || len(BaselineByParam(rows, "blur")) != 0 {
		t.Errorf("params %+v", p)
	}
	if got := BaselineOverall(rows); got != (record.Counts{Count: 21, Violations: 7}) {
		t.Errorf("overall %+v", got)
	}
	o, m, ok := BaselineAccuracy(rows)
	// Source correct on images 0 and 1 (14 of 21 rows); follow-up correct on
	// 7 rows of image 0 minus 3 changed, 7 of image 1 minus 3 changed, and
	// image 2's rotation:60 (pred 1 = label).
	if !ok || !near(o, 14.0/21) || !near(m, 9.0/21) {
		t.Errorf("accuracy %v %v %v", o, m, ok)
	}
	if IsDetection(rows) {
		t.Error("classification table taken for detection")
	}
	if _, _, ok := BaselineAccuracy([]record.Verdict{{Label: -1, MR: "blur"}}); ok {
		t.Error("accuracy from unlabelled rows")
	}
}

func TestClassEffects(t *testing.T) {
	sel := []Selector{
		{Name: "Blur", MR: "blur"},
		{Name: "Flip U/D", MR: "flipud"},
		{Name: "Rotation ±30°", MR: "rotation", Params: []float64{-30, 30}},
		{Name: "Shear ±20°", MR: "shear", Params: []float64{-20, 20}},
		{Name: "Shear ±30° (extra)", MR: "shear", Params: []float64{-30, 30}},
	}
	cells, ok := ClassEffects(smallTable(), sel, 2)
	if !ok {
		t.Fatal("no labelled rows")
	}
	// Class 0 = image 0, class 1 = images 1 and 2.
	check := func(row string, class int, want record.Counts) {
		t.Helper()
		for i, s := range sel {
			if s.Name == row {
				if cells[i][class] != want {
					t.Errorf("%s class %d: %+v, want %+v", row, class, cells[i][class], want)
				}
				return
			}
		}
		t.Fatalf("no row %q", row)
	}
	check("Blur", 0, cnt(1, 1))
	check("Blur", 1, cnt(2, 0))
	check("Rotation ±30°", 0, cnt(2, 0)) // ±60 excluded
	check("Rotation ±30°", 1, cnt(4, 1))
	check("Shear ±20°", 1, cnt(4, 0))
	check("Shear ±30° (extra)", 1, record.Counts{}) // no such rows
	check("Flip U/D", 0, record.Counts{})
}

func TestOracles(t *testing.T) {
	rows := smallTable()
	best, err := BestSingleArm(rows)
	if err != nil {
		t.Fatal(err)
	}
	if best.Arm != "rotation:60" || best.Counts != (record.Counts{Count: 3, Violations: 3}) || best.Rate() != 1 {
		t.Errorf("best single arm %+v", best)
	}
	per, err := PerImageBest(rows)
	if err != nil {
		t.Fatal(err)
	}
	if per.Counts != (record.Counts{Count: 3, Violations: 3}) {
		t.Errorf("per image %+v", per)
	}
	// Without rotation:60, the best single arm is rotation:-60 (2/3) and
	// image 2 has no failing variant.
	var cut []record.Verdict
	for _, r := range rows {
		if r.ParamKey() != "rotation:60" {
			cut = append(cut, r)
		}
	}
	best, _ = BestSingleArm(cut)
	per, _ = PerImageBest(cut)
	if best.Arm != "rotation:-60" || !near(best.Rate(), 2.0/3) || per.Counts != (record.Counts{Count: 3, Violations: 2}) {
		t.Errorf("cut: best %+v per-image %+v", best, per)
	}
	// Ties go to the smallest key: blur and shear:-20 on a table where
	// both fail once in two images.
	tie := []record.Verdict{v(0, "shear", -20, true, 0, 0, 1), v(1, "shear", -20, false, 0, 0, 0), v(0, "blur", nan, false, 0, 0, 0), v(1, "blur", nan, true, 0, 0, 1)}
	if b, _ := BestSingleArm(tie); b.Arm != "blur" {
		t.Errorf("tie broken to %q", b.Arm)
	}
	if _, err := BestSingleArm(nil); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Errorf("empty table: %v", err)
	}
	if _, err := PerImageBest(nil); err == nil {
		t.Error("empty table accepted")
	}
}

func TestScenarioRows(t *testing.T) {
	rows := smallTable()
	if got := ScenarioRows(rows, nil); len(got) != len(rows) {
		t.Errorf("an unknown scenario keeps %d rows", len(got))
	}
	// The paper's basic scenario's variant keys, as run.json lists them:
	// blur (3 rows) + rotation ±30 (6) + shear ±20 (6).
	basic := []string{"blur", "fliplr", "flipud", "grayscale", "invert", "rotation:-30", "rotation:30", "shear:-20", "shear:20"}
	if got := ScenarioRows(rows, basic); len(got) != 15 {
		t.Errorf("basic keeps %d rows, want 15", len(got))
	}
	for _, r := range ScenarioRows(rows, []string{"rotation:-60", "rotation:60"}) {
		if r.ParamKey() != "rotation:60" && r.ParamKey() != "rotation:-60" {
			t.Fatalf("a rotation ±60 scenario kept %+v", r)
		}
	}
}

func TestProgressOf(t *testing.T) {
	line := func(seed uint64, it, viol int, oa, ma float64) record.LogLine {
		return record.LogLine{Seed: seed, Iteration: it, Violations: viol, OriginalAccuracy: oa, ModifiedAccuracy: ma}
	}
	logs := [][]record.LogLine{
		{line(1, 100, 10, 0.9, 0.5), line(1, 200, 30, 0.9, 0.6), line(1, 250, 40, 0.8, 0.6)},
		{line(2, 100, 20, 0.7, 0.3), line(2, 200, 50, 0.7, 0.4)},
	}
	p, err := ProgressOf(logs)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Iterations) != 2 || p.Iterations[0] != 100 || p.Iterations[1] != 200 || p.Seeds != 2 {
		t.Fatalf("iterations %v", p.Iterations)
	}
	if !near(p.FailureRate[0], 0.15) || !near(p.FailureRate[1], 0.2) || p.Violations[1].Min != 30 || p.Violations[1].Max != 50 ||
		!near(p.OriginalAccuracy[0], 0.8) || !near(p.ModifiedAccuracy[1], 0.5) {
		t.Errorf("progress %+v", p)
	}
	for _, tc := range []struct {
		logs [][]record.LogLine
		want string
	}{
		{nil, "no logs"},
		{[][]record.LogLine{{}}, "empty"},
		{[][]record.LogLine{{line(3, 100, 1, 0, 0), line(3, 100, 2, 0, 0)}}, "seed 3 logs iteration 100 twice"},
		{[][]record.LogLine{{line(1, 100, 1, 0, 0)}, {line(2, 200, 1, 0, 0)}}, "share no iteration"},
	} {
		if _, err := ProgressOf(tc.logs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want error containing %q", err, tc.want)
		}
	}
}

// Table 1's averages are means of per-class rates (the paper's Avg.
// column), not rates pooled over images: on smallTable, class 0 has one
// image and class 1 two, so Blur's class mean (1/1 + 0/2)/2 = 0.5 differs
// from its pooled rate 1/3.
func TestEffectsOf(t *testing.T) {
	sel := []Selector{
		{Name: "Blur", MR: "blur"},
		{Name: "Rotation ±30°", MR: "rotation", Params: []float64{-30, 30}},
		{Name: "Shear ±20°", MR: "shear", Params: []float64{-20, 20}},
		{Name: "Rotation ±60° (extra)", MR: "rotation", Params: []float64{-60, 60}},
	}
	e, ok := EffectsOf(smallTable(), sel, 3, 3)
	if !ok {
		t.Fatal("no labelled rows")
	}
	// Rotation ±30°: class 0 0/2, class 1 1/4. Extra row: 2/2 and 3/4.
	for i, want := range []float64{0.5, 0.125, 0, 0.875} {
		if !near(e.RowMean[i], want) {
			t.Errorf("%s: mean over classes %v, want %v", sel[i].Name, e.RowMean[i], want)
		}
	}
	if got := CountSelected(smallTable(), sel[0]); got != cnt(3, 1) || near(got.Rate(), e.RowMean[0]) {
		t.Errorf("Blur pooled %+v (rate %v) should differ from its class mean %v", got, got.Rate(), e.RowMean[0])
	}
	// The Avg. row and the overall mean leave out the extra row; class 2
	// has no images.
	if !near(e.ClassMean[0], 1.0/3) || !near(e.ClassMean[1], 0.25/3) || !math.IsNaN(e.ClassMean[2]) {
		t.Errorf("class means %v", e.ClassMean)
	}
	if !near(e.Overall, 0.625/3) {
		t.Errorf("overall %v, want %v", e.Overall, 0.625/3)
	}
	if _, ok := EffectsOf([]record.Verdict{{Label: -1, MR: "blur"}}, sel, 3, 3); ok {
		t.Error("effects from unlabelled rows")
	}
	if !math.IsNaN(Rate(record.Counts{})) || Rate(cnt(4, 1)) != 0.25 {
		t.Error("Rate: NaN for no data, else the share")
	}
}

func TestTableShape(t *testing.T) {
	rows := smallTable()
	if n := Images(rows); n != 3 {
		t.Errorf("images %d", n)
	}
	if n := Variants(rows); n != 7 {
		t.Errorf("variants %d", n)
	}
	if got := VariantsPerImage(rows); len(got) != 1 || got[0] != 7 {
		t.Errorf("variants per image %v", got)
	}
	if got := VariantsPerImage(rows[1:]); len(got) != 2 || got[0] != 6 || got[1] != 7 {
		t.Errorf("variants per image of an incomplete table %v", got)
	}
}
