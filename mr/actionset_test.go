package mr

import (
	"slices"
	"strings"
	"testing"
)

func TestBuiltinActionSets(t *testing.T) {
	for _, tc := range []struct {
		name           string
		arms, variants int
		first, last    string
	}{
		{"hierarchical", 7, 59, "blur", "shear:45"},
		{"basic", 9, 9, "blur", "shear:20"},
		{"rotation", 36, 36, "rotation:-90", "rotation:90"},
		{"shear", 18, 18, "shear:-45", "shear:45"},
	} {
		s, err := BuiltinActionSet(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		vs := s.Variants()
		if s.Name != tc.name || len(s.Arms) != tc.arms || len(vs) != tc.variants || s.NumVariants() != tc.variants {
			t.Errorf("%s: name %q, %d arms, %d variants; want %d, %d", tc.name, s.Name, len(s.Arms), len(vs), tc.arms, tc.variants)
			continue
		}
		if vs[0].Relation.Name() != tc.first || vs[len(vs)-1].Relation.Name() != tc.last {
			t.Errorf("%s: variants %s … %s, want %s … %s", tc.name, vs[0].Relation.Name(), vs[len(vs)-1].Relation.Name(), tc.first, tc.last)
		}
		for i, v := range vs {
			idx, err := s.VariantIndex(v.Arm, v.Param)
			if err != nil || idx != i || v.Index != i {
				t.Errorf("%s variant %d: Index %d, VariantIndex(%d, %d) = %d, %v", tc.name, i, v.Index, v.Arm, v.Param, idx, err)
			}
		}
	}
	if _, err := BuiltinActionSet("all"); err == nil || !strings.Contains(err.Error(), "hierarchical, basic, rotation, shear") {
		t.Errorf("unknown set error = %v", err)
	}
	h := Hierarchical()
	if v := h.Variants()[5+18]; v.Arm != 5 || v.Param != 18 || v.Degrees != 5 || v.MR != "rotation" {
		t.Errorf("hierarchical variant 23 = %+v, want rotation sub-arm 18 = 5 degrees", v)
	}
	if _, err := h.VariantIndex(0, 1); err == nil {
		t.Error("VariantIndex(blur, 1) should fail")
	}
	if _, err := h.VariantIndex(7, 0); err == nil {
		t.Error("VariantIndex(7, 0) should fail")
	}
	// Built-ins are fresh values: changing one does not change the next.
	h.Arms[5].Params[0] = 1
	if Hierarchical().Arms[5].Params[0] != -90 {
		t.Error("Hierarchical() shares its grid between calls")
	}
}

func TestNewActionSet(t *testing.T) {
	s, err := NewActionSet("mine", []Arm{{MR: "blur"}, {MR: "rotation", Params: []float64{-15}}, {MR: "shear", Params: []float64{-10, 10}}})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{s.Arms[0].Name, s.Arms[1].Name, s.Arms[2].Name}
	if !slices.Equal(names, []string{"blur", "rotation:-15", "shear"}) {
		t.Errorf("filled names %q", names)
	}
	if s.NumVariants() != 4 {
		t.Errorf("%d variants, want 4", s.NumVariants())
	}
	for _, tc := range []struct {
		name string
		arms []Arm
		want string
	}{
		{"", []Arm{{MR: "blur"}}, "no name"},
		{"x", nil, "has no arms"},
		{"x", []Arm{{MR: "zoom"}}, `unknown relation "zoom"`},
		{"x", []Arm{{MR: "blur", Params: []float64{1}}}, "takes no parameters"},
		{"x", []Arm{{MR: "rotation"}}, "needs at least one parameter"},
		{"x", []Arm{{MR: "shear", Params: []float64{10, 100}}}, "[-85, 85]"},
		{"x", []Arm{{MR: "blur"}, {MR: "blur"}}, "name already used by arm 0"},
		{"x", []Arm{{Name: "a", MR: "rotation", Params: []float64{5}}, {Name: "b", MR: "rotation", Params: []float64{5, 10}}}, `variant rotation:5 already in arm "a"`},
	} {
		_, err := NewActionSet(tc.name, tc.arms)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewActionSet(%q, %+v) error = %v, want %q", tc.name, tc.arms, err, tc.want)
		}
	}
}

func TestParseGrid(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []float64
	}{
		{"-90:90:5", RotationGrid()},
		{"-45:45:5", ShearGrid()},
		{"0:1:0.1", []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}},
		{"10:20:4", []float64{10, 14, 18}},
		{"-30, 30", []float64{-30, 30}},
		{"0", []float64{0}},
		{"7", []float64{7}},
	} {
		got, err := ParseGrid(tc.spec)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseGrid(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
	if len(RotationGrid()) != 36 || len(ShearGrid()) != 18 {
		t.Errorf("grids have %d and %d values, want 36 and 18", len(RotationGrid()), len(ShearGrid()))
	}
	for _, tc := range []struct{ spec, want string }{
		{"", "empty grid"},
		{"1:2", "START:STOP:STEP"},
		{"1:2:0", "STEP 0 must be > 0"},
		{"5:1:1", "START 5 is greater than STOP 1"},
		{"0:0:1", "no values other than 0"},
		{"a:2:1", `START "a" is not a finite number`},
		{"1,x", `value "x" is not a finite number`},
		{"0:1e9:0.001", "more than the limit"},
		{"1,NaN", "not a finite number"},
	} {
		if _, err := ParseGrid(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseGrid(%q) error = %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestFormatGrid(t *testing.T) {
	for _, tc := range []struct {
		grid []float64
		want string
	}{
		{RotationGrid(), "-90:90:5"},
		{ShearGrid(), "-45:45:5"},
		{[]float64{-30, 30}, "-30,30"},
		{[]float64{1, 2, 4}, "1,2,4"},
		{[]float64{0, 5, 10}, "0,5,10"}, // a range never yields 0
		{[]float64{0.1, 0.2, 0.3}, "0.1:0.3:0.1"},
		{nil, ""},
	} {
		got := FormatGrid(tc.grid)
		if got != tc.want {
			t.Errorf("FormatGrid(%v) = %q, want %q", tc.grid, got, tc.want)
		}
		if len(tc.grid) > 0 {
			if back, err := ParseGrid(got); err != nil || !slices.Equal(back, tc.grid) {
				t.Errorf("ParseGrid(FormatGrid(%v)) = %v, %v", tc.grid, back, err)
			}
		}
	}
}
