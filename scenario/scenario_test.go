package scenario

import (
	"math"
	"strings"
	"testing"
)

// knob is a parameter description of a made-up action outside image
// testing (a price discount in percent, halving every 10 points).
var knob = Param{Name: "discount", Unit: "percent", Symbol: "PCT", Min: 0, Max: 50, Scale: 10}

func sample() Scenario {
	return Scenario{Name: "shop", Objective: Paper, Arms: []Arm{
		{Name: "banner", Action: "banner"},
		{Name: "discount", Action: "discount", Param: knob, Values: []float64{10, 20, 40}},
		{Name: "discount:0", Action: "discount", Param: knob, Values: []float64{0}},
	}}
}

func TestKeys(t *testing.T) {
	for _, tc := range []struct {
		action string
		value  float64
		want   string
	}{
		{"blur", math.NaN(), "blur"},
		{"rotation", -30, "rotation:-30"},
		{"rotation", 2.5, "rotation:2.5"},
		{"rotation", 0.00001, "rotation:0.00001"},
		{"brightness", 0, "brightness:0"},
	} {
		k := Key(tc.action, tc.value)
		if k != tc.want {
			t.Errorf("Key(%q, %v) = %q, want %q", tc.action, tc.value, k, tc.want)
		}
		a, v, ok := ParseKey(k)
		if math.IsNaN(tc.value) {
			if ok {
				t.Errorf("ParseKey(%q) = %q, %v, true; want no value", k, a, v)
			}
			continue
		}
		if !ok || a != tc.action || v != tc.value {
			t.Errorf("ParseKey(%q) = %q, %v, %v", k, a, v, ok)
		}
	}
	for _, k := range []string{":5", "rotation:", "rotation:x", "rotation:NaN", "rotation:Inf"} {
		if _, _, ok := ParseKey(k); ok {
			t.Errorf("ParseKey(%q) accepted", k)
		}
	}
	if FormatValue(math.NaN()) != "" {
		t.Error("FormatValue(NaN) is not empty")
	}
}

func TestVariants(t *testing.T) {
	s := sample()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []string{"banner", "discount:10", "discount:20", "discount:40", "discount:0"}
	if got := strings.Join(s.Keys(), " "); got != strings.Join(want, " ") {
		t.Fatalf("keys %s, want %s", got, want)
	}
	if got := strings.Join(s.Actions(), " "); got != "banner discount" {
		t.Errorf("actions %s, want banner discount (each once, in arm order)", got)
	}
	for i, v := range s.Variants() {
		got, err := s.Variant(v.Arm, v.Param)
		if err != nil || got.Index != i || got.Key() != want[i] || (got.Param >= 0) != s.Arms[v.Arm].Hierarchical() {
			t.Errorf("Variant(%d, %d) = %+v, %v; want index %d, %s", v.Arm, v.Param, got, err, i, want[i])
		}
	}
	for _, c := range [][2]int{{-1, -1}, {3, -1}, {0, 0}, {1, -1}, {1, 3}, {2, 0}} {
		if _, err := s.Variant(c[0], c[1]); err == nil {
			t.Errorf("Variant(%d, %d) accepted", c[0], c[1])
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Scenario)
		want string
	}{
		{func(s *Scenario) { s.Name = " " }, "no name"},
		{func(s *Scenario) { s.Arms = nil }, "no arms"},
		{func(s *Scenario) { s.Objective = Objective{} }, "no objective"},
		{func(s *Scenario) { s.Arms[0].Action = "" }, "empty arm name or action"},
		{func(s *Scenario) { s.Arms[2].Name = "banner" }, "name already used by arm 0"},
		{func(s *Scenario) { s.Arms[0].Values = []float64{1} }, "takes no parameter"},
		{func(s *Scenario) { s.Arms[1].Values = nil }, "needs at least one parameter (percent)"},
		{func(s *Scenario) { s.Arms[1].Values[0] = math.Inf(1) }, "not a finite number"},
		{func(s *Scenario) { s.Arms[2].Values[0] = 20 }, `variant discount:20 already in arm "discount"`},
	} {
		s := sample()
		tc.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// The paper's rewards and costs (original-implementation.md: main cost
// max_reward − reward with max_reward the largest arm reward; parameter
// cost 10000 − 10000/2^(|deg|/5 − 1)).
func TestRewards(t *testing.T) {
	deg := Param{Name: "angle", Unit: "degrees", Symbol: "DEG", Min: -360, Max: 360, Scale: 5}
	h := Halving{Top: 10000}
	for _, tc := range []struct{ v, want float64 }{{5, 10000}, {-5, 10000}, {10, 5000}, {-10, 5000}, {20, 1250}, {90, 10000 / math.Pow(2, 17)}, {0, 20000}} {
		if got := h.Reward(deg, tc.v); got != tc.want {
			t.Errorf("halving reward at %v° = %v, want %v", tc.v, got, tc.want)
		}
	}
	if h.Reward(deg, math.NaN()) != 1 || h.Reward(Param{}, 3) != 1 || h.Bound() != 10000 || (Unit{}).Reward(deg, 5) != 1 || (Unit{}).Bound() != 1 {
		t.Error("unit rewards")
	}

	s := sample() // Paper: main 1/0, parameters halving with the arm's scale
	if s.MainMax() != 1 || s.MainCost(1, true) != 0 || s.MainCost(1, false) != 1 {
		t.Errorf("paper main: max %v, costs %v %v", s.MainMax(), s.MainCost(1, true), s.MainCost(1, false))
	}
	if s.ParamMax() != 10000 || s.ParamReward(1, 0) != 10000 || s.ParamCost(1, 1, true) != 5000 || s.ParamCost(1, 2, false) != 10000 {
		t.Errorf("paper parameters: max %v, reward %v, costs %v %v", s.ParamMax(), s.ParamReward(1, 0), s.ParamCost(1, 1, true), s.ParamCost(1, 2, false))
	}
	s.Objective = PaperFlat // flat arms earn their halving reward; the main maximum is the largest
	if s.MainReward(0) != 1 || s.MainReward(1) != 1 || s.MainReward(2) != 20000 || s.MainMax() != 20000 {
		t.Errorf("flat main rewards %v %v %v, max %v", s.MainReward(0), s.MainReward(1), s.MainReward(2), s.MainMax())
	}
	if s.MainCost(0, true) != 19999 {
		t.Errorf("flat main cost of a unit arm %v", s.MainCost(0, true))
	}
}

func TestObjectives(t *testing.T) {
	for _, name := range ObjectiveNames() {
		o, err := ObjectiveByName(name)
		if err != nil || o.Name != name || o.Doc == "" || o.Main == nil || o.Param == nil {
			t.Errorf("objective %q: %+v, %v", name, o, err)
		}
	}
	if _, err := ObjectiveByName("faults"); err == nil || !strings.Contains(err.Error(), "unit, halving, fault") {
		t.Errorf("unknown objective: %v", err)
	}
}
