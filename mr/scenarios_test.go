package mr

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/scenario"
)

func TestBuiltinScenarios(t *testing.T) {
	for _, tc := range []struct {
		name           string
		arms, variants int
		first, last    string
		objective      string
	}{
		{"hierarchical", 7, 59, "blur", "shear:45", "unit"},
		{"basic", 9, 9, "blur", "shear:20", "unit"},
		{"rotation", 36, 36, "rotation:-90", "rotation:90", "halving"},
		{"shear", 18, 18, "shear:-45", "shear:45", "halving"},
		{"flat", 59, 59, "blur", "shear:45", "unit"},
	} {
		s, err := Builtin(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(s); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if BuiltinDoc(tc.name) == "" {
			t.Errorf("%s: no doc line", tc.name)
		}
		vs := s.Variants()
		if s.Name != tc.name || len(s.Arms) != tc.arms || len(vs) != tc.variants || s.Objective.Name != tc.objective {
			t.Errorf("%s: name %q, %d arms, %d variants, objective %q; want %d, %d, %q", tc.name, s.Name, len(s.Arms), len(vs), s.Objective.Name, tc.arms, tc.variants, tc.objective)
			continue
		}
		if vs[0].Key() != tc.first || vs[len(vs)-1].Key() != tc.last {
			t.Errorf("%s: variants %s … %s, want %s … %s", tc.name, vs[0].Key(), vs[len(vs)-1].Key(), tc.first, tc.last)
		}
		for i, v := range vs {
			r, err := ForVariant(v)
			if err != nil || r.Name() != v.Key() {
				t.Errorf("%s variant %d: relation %v, %v; want %s", tc.name, i, r, err, v.Key())
			}
		}
	}
	if !slices.Equal(FlatAll().Keys(), Hierarchical().Keys()) {
		t.Errorf("flat variants %v, want the hierarchical ones", FlatAll().Keys())
	}
	if _, err := Builtin("hierarchial"); err == nil || !strings.Contains(err.Error(), `unknown scenario "hierarchial"; did you mean "hierarchical"?`) {
		t.Errorf("Builtin(hierarchial) = %v", err)
	}
	if _, err := Builtin("all"); err == nil || !strings.Contains(err.Error(), "hierarchical, basic, rotation, shear, flat") {
		t.Errorf("unknown scenario error = %v", err)
	}
	h := Hierarchical()
	if v := h.Variants()[5+18]; v.Arm != 5 || v.Param != 18 || v.Value != 5 || v.Action != "rotation" {
		t.Errorf("hierarchical variant 23 = %+v, want rotation sub-arm 18 = 5 degrees", v)
	}
	if h.Arms[5].Param != angle(MaxRotation) || h.Arms[0].Param != (scenario.Param{}) {
		t.Errorf("parameter descriptions: rotation %+v, blur %+v", h.Arms[5].Param, h.Arms[0].Param)
	}
	// Built-ins are fresh values: changing one does not change the next.
	h.Arms[5].Values[0] = 1
	if Hierarchical().Arms[5].Values[0] != -90 {
		t.Error("Hierarchical() shares its grid between calls")
	}
	// The flat scenarios' arms earn the halving reward of their angle.
	rot, _ := Builtin("rotation")
	if rot.MainReward(0) != 10000/math.Pow(2, 17) || rot.MainMax() != 10000 || rot.MainReward(17) != 10000 {
		t.Errorf("flat rotation rewards: arm -90 %v, arm -5 %v, max %v", rot.MainReward(0), rot.MainReward(17), rot.MainMax())
	}
	if _, err := Flat("blur"); err == nil {
		t.Error("Flat(blur) should fail")
	}
}

// The paper's scenarios use only the paper's relations, whatever else the
// registry holds; the corruptions scenarios only corruptions.
func TestBuiltinScenariosArePaperOnly(t *testing.T) {
	for _, name := range BuiltinNames() {
		s, _ := Builtin(name)
		corr := strings.HasPrefix(name, "corruptions")
		for _, a := range s.Arms {
			if in, _ := Lookup(a.Action); !corr && !in.Paper {
				t.Errorf("%s: arm %s uses %s, not a relation of the paper", name, a.Name, a.Action)
			} else if corr && !in.Corruption {
				t.Errorf("%s: arm %s uses %s, not a corruption", name, a.Name, a.Action)
			}
		}
	}
}

func TestNewScenario(t *testing.T) {
	s, err := NewScenario("mine", scenario.Paper, []scenario.Arm{{Action: "blur"}, {Action: "rotation", Values: []float64{-15}}, {Action: "shear", Values: []float64{-10, 10}}})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{s.Arms[0].Name, s.Arms[1].Name, s.Arms[2].Name}
	if !slices.Equal(names, []string{"blur", "rotation:-15", "shear"}) {
		t.Errorf("filled names %q", names)
	}
	if len(s.Variants()) != 4 {
		t.Errorf("%d variants, want 4", len(s.Variants()))
	}
	for _, tc := range []struct {
		name string
		arms []scenario.Arm
		want string
	}{
		{"", []scenario.Arm{{Action: "blur"}}, "no name"},
		{"x", nil, "has no arms"},
		{"x", []scenario.Arm{{Action: "zoom"}}, `unknown relation "zoom"`},
		{"x", []scenario.Arm{{Action: "blur", Values: []float64{1}}}, "takes no parameter"},
		{"x", []scenario.Arm{{Action: "rotation"}}, "needs at least one parameter"},
		{"x", []scenario.Arm{{Action: "shear", Values: []float64{10, 100}}}, "[-85, 85]"},
		{"x", []scenario.Arm{{Action: "blur"}, {Action: "blur"}}, "name already used by arm 0"},
		{"x", []scenario.Arm{{Name: "a", Action: "rotation", Values: []float64{5}}, {Name: "b", Action: "rotation", Values: []float64{5, 10}}}, `variant rotation:5 already in arm "a"`},
	} {
		_, err := NewScenario(tc.name, scenario.Paper, tc.arms)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewScenario(%q, %+v) error = %v, want %q", tc.name, tc.arms, err, tc.want)
		}
	}
	bad := Hierarchical()
	bad.Arms[5].Param.Scale = 10
	if err := Check(bad); err == nil || !strings.Contains(err.Error(), "parameter") {
		t.Errorf("a changed parameter description: %v", err)
	}
}
