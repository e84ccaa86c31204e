package gate

import (
	"math"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

func rate(r float64) *float64 { return &r }

// meta is a scenario with a flat arm, a hierarchical arm and two flat arms
// of one relation.
var meta = record.ScenarioMeta{Name: "s", Arms: []record.ArmMeta{
	{Name: "blur", Action: "blur"},
	{Name: "rotation", Action: "rotation", Values: []float64{-10, 10}},
	{Name: "shear:20", Action: "shear", Values: []float64{20}},
	{Name: "shear:-20", Action: "shear", Values: []float64{-20}},
}}

func TestCellsOf(t *testing.T) {
	runs := []record.Run{
		{Arms: map[string]record.Counts{"blur": {Count: 3, Violations: 1}, "rotation": {Count: 5, Violations: 2}, "shear:20": {Count: 2, Violations: 2}, "shear:-20": {Count: 1}},
			Params: map[string]record.Counts{"rotation:-10": {Count: 4, Violations: 2}, "rotation:10": {Count: 1}}},
		{Arms: map[string]record.Counts{"blur": {Count: 1, Violations: 1}},
			Params: map[string]record.Counts{"rotation:10": {Count: 2, Violations: 1}}},
	}
	c := CellsOf(meta, runs)
	want := Cells{
		"blur":     {"blur": {Count: 4, Violations: 2}},
		"rotation": {"rotation:-10": {Count: 4, Violations: 2}, "rotation:10": {Count: 3, Violations: 1}},
		"shear":    {"shear:20": {Count: 2, Violations: 2}, "shear:-20": {Count: 1}},
	}
	for mr, cells := range want {
		for k, v := range cells {
			if c[mr][k] != v {
				t.Errorf("%s %s: %+v, want %+v", mr, k, c[mr][k], v)
			}
		}
		if len(c[mr]) != len(cells) {
			t.Errorf("%s: %v", mr, c[mr])
		}
	}
	if got := c.Total("rotation"); got != (record.Counts{Count: 7, Violations: 3}) {
		t.Errorf("Total(rotation) = %+v", got)
	}
}

func TestDecideAbsolute(t *testing.T) {
	mrs := []string{"blur", "rotation", "shear"}
	cur := Cells{"blur": {"blur": {Count: 10, Violations: 2}}, "rotation": {"rotation:10": {Count: 10, Violations: 7}}}
	overall := record.Counts{Count: 20, Violations: 9}
	for _, c := range []struct {
		name  string
		conds Conditions
		pass  bool
		stat  []string
	}{
		{"none", Conditions{}, true, nil},
		{"overall passes at the limit", Conditions{Rate: rate(0.45)}, true, []string{"pass"}},
		{"overall fails", Conditions{Rate: rate(0.3)}, false, []string{"fail"}},
		{"mr fails", Conditions{MR: map[string]float64{"rotation": 0.6, "blur": 0.5}}, false, []string{"pass", "fail"}},
		{"untried mr is skipped", Conditions{MR: map[string]float64{"shear": 0}}, true, []string{"skipped"}},
	} {
		d, err := Decide(c.conds, mrs, overall, cur, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Pass != c.pass {
			t.Errorf("%s: pass %v, want %v", c.name, d.Pass, c.pass)
		}
		var got []string
		for _, cd := range d.Conditions {
			got = append(got, cd.Status)
		}
		if strings.Join(got, ",") != strings.Join(c.stat, ",") {
			t.Errorf("%s: statuses %v, want %v", c.name, got, c.stat)
		}
	}
	d, _ := Decide(Conditions{MR: map[string]float64{"rotation": 0.6}}, mrs, overall, cur, nil)
	if !d.MRs[1].Failed || d.MRs[0].Failed || d.MRs[1].Counts != (record.Counts{Count: 10, Violations: 7}) {
		t.Errorf("MRs: %+v", d.MRs)
	}
	if _, err := Decide(Conditions{MR: map[string]float64{"flipud": 0.5}}, mrs, overall, cur, nil); err == nil {
		t.Error("a condition on an MR outside the scenario: no error")
	}
	if _, err := Decide(Conditions{Rate: rate(1.5)}, mrs, overall, cur, nil); err == nil {
		t.Error("a rate limit of 1.5: no error")
	}
}

func TestDecideRegression(t *testing.T) {
	mrs := []string{"blur", "rotation", "shear"}
	base := Cells{
		"blur":     {"blur": {Count: 200, Violations: 40}},
		"rotation": {"rotation:-10": {Count: 100, Violations: 20}, "rotation:10": {Count: 100, Violations: 80}},
		"shear":    {"shear:20": {Count: 50, Violations: 10}},
	}
	cur := Cells{
		// blur: 20 % → 40 %, a clear rise.
		"blur": {"blur": {Count: 200, Violations: 80}},
		// rotation: the same rate at each angle, but the agent chose the
		// bad angle more often: pooled 50 % → 68 %, stratified no rise.
		"rotation": {"rotation:-10": {Count: 40, Violations: 8}, "rotation:10": {Count: 160, Violations: 128}},
		// shear: not tried.
	}
	g := &Regression{MarginPP: 5, Alpha: 0.05}
	d, err := Decide(Conditions{Regression: g}, mrs, record.Counts{Count: 400, Violations: 216}, cur, base)
	if err != nil {
		t.Fatal(err)
	}
	if d.Pass || len(d.Conditions) != 3 {
		t.Fatalf("decision %+v", d)
	}
	blur, rot, shear := d.Conditions[0], d.Conditions[1], d.Conditions[2]
	if blur.Status != record.StatusFail || math.Abs(blur.Value-20) > 1e-9 || blur.PAdjusted > 0.05 || blur.Count != 200 {
		t.Errorf("blur: %+v", blur)
	}
	if rot.Status != record.StatusPass || math.Abs(rot.Value) > 1e-9 || rot.P < 0.3 {
		t.Errorf("rotation: %+v", rot)
	}
	if shear.Status != record.StatusSkipped || shear.Count != 0 {
		t.Errorf("shear: %+v", shear)
	}
	// Holm over the two MRs compared: the smaller p-value doubled.
	if math.Abs(blur.PAdjusted-min(1, 2*blur.P)) > 1e-15 {
		t.Errorf("blur: p %v, adjusted %v", blur.P, blur.PAdjusted)
	}
	if !strings.Contains(blur.Message, "20.0% → 40.0% (+20.0 pp") {
		t.Errorf("message %q", blur.Message)
	}
	// A margin above the rise passes it.
	d, _ = Decide(Conditions{Regression: &Regression{MarginPP: 25, Alpha: 0.05}}, mrs, record.Counts{}, cur, base)
	if !d.Pass {
		t.Errorf("margin 25 pp: %+v", d.Conditions)
	}
	// The decision uses the adjusted p-value: blur 20 % → 28 % (+8 pp, above
	// the margin) has a one-sided p of 0.039 < α, but after Holm over the
	// two MRs compared it is 0.079 > α, and passes.
	cur["blur"] = map[string]record.Counts{"blur": {Count: 200, Violations: 56}}
	d, _ = Decide(Conditions{Regression: g}, mrs, record.Counts{}, cur, base)
	if blur := d.Conditions[0]; !d.Pass || !(blur.P < 0.05 && blur.PAdjusted > 0.05) || math.Abs(blur.Value-8) > 1e-9 {
		t.Errorf("a rise significant only before Holm's adjustment: pass %v, %+v", d.Pass, blur)
	}
	if _, err := Decide(Conditions{Regression: &Regression{MarginPP: 5, Alpha: 0}}, mrs, record.Counts{}, cur, base); err == nil {
		t.Error("alpha 0: no error")
	}
}
