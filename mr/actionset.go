package mr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Arm is one choice of a bandit: a relation kind and its parameter grid.
//
//   - No Params: a non-parametric relation (blur).
//   - One Param: a relation with a fixed parameter (rotation by −30°), a
//     plain arm.
//   - Several Params: a parameterised arm whose parameter is chosen by a
//     sub-bandit (the hierarchical set's rotation and shear arms); Params
//     is the sub-arm order.
type Arm struct {
	// Name identifies the arm in logs and tables ("blur", "rotation",
	// "rotation:-30"). NewActionSet fills it in when empty.
	Name string
	// MR is the registry name of the relation ("rotation").
	MR string
	// Params are the parameter values in degrees, in sub-arm order.
	Params []float64
}

// Variant is one concrete relation of an action set: an arm and, for a
// parameterised arm, one of its parameters.
type Variant struct {
	// Index is the position in ActionSet.Variants.
	Index int
	// Arm is the arm's index in ActionSet.Arms.
	Arm int
	// Param is the index into the arm's Params; 0 when it has none.
	Param int
	// MR is the registry name of the relation.
	MR string
	// Degrees is the parameter (0 for a non-parametric relation).
	Degrees float64
	// Relation is the relation itself; Relation.Name() names the variant.
	Relation Relation
}

// ActionSet is a named list of arms. The flat list of its variants, in arm
// order and then parameter order, is the canonical order of verdict tables.
type ActionSet struct {
	Name string
	Arms []Arm
}

// NewActionSet validates arms and returns the action set. Empty arm names
// are filled in: the MR name, or for a single-parameter arm the relation's
// name ("rotation:-30"). The arms slice is copied.
func NewActionSet(name string, arms []Arm) (ActionSet, error) {
	s := ActionSet{Name: name, Arms: make([]Arm, len(arms))}
	for i, a := range arms {
		a.Params = append([]float64(nil), a.Params...)
		if a.Name == "" {
			a.Name = a.MR
			if len(a.Params) == 1 {
				if r, err := New(a.MR, a.Params[0]); err == nil {
					a.Name = r.Name()
				}
			}
		}
		s.Arms[i] = a
	}
	if err := s.Validate(); err != nil {
		return ActionSet{}, err
	}
	return s, nil
}

// Validate checks that the set has a name and at least one arm, that arm
// names are unique, that every arm names a registered relation with
// parameters that fit it (none for a non-parametric relation, at least one
// in range for a parametric one), and that no variant occurs twice.
func (s ActionSet) Validate() error {
	if strings.TrimSpace(s.Name) == "" {
		return fmt.Errorf("mr: action set has no name")
	}
	if len(s.Arms) == 0 {
		return fmt.Errorf("mr: action set %q has no arms", s.Name)
	}
	arms := map[string]int{}
	variants := map[string]string{}
	for i, a := range s.Arms {
		where := fmt.Sprintf("mr: action set %q arm %d (%q)", s.Name, i, a.Name)
		if a.Name == "" {
			return fmt.Errorf("%s: empty arm name", where)
		}
		if j, dup := arms[a.Name]; dup {
			return fmt.Errorf("%s: name already used by arm %d", where, j)
		}
		arms[a.Name] = i
		param, ok := IsParametric(a.MR)
		switch {
		case !ok:
			return fmt.Errorf("%s: unknown relation %q (known: %s)", where, a.MR, knownNames())
		case !param && len(a.Params) > 0:
			return fmt.Errorf("%s: relation %q takes no parameters, got %v", where, a.MR, a.Params)
		case param && len(a.Params) == 0:
			return fmt.Errorf("%s: relation %q needs at least one parameter (degrees)", where, a.MR)
		}
		names := []string{a.MR}
		if param {
			names = names[:0]
			for _, p := range a.Params {
				r, err := New(a.MR, p)
				if err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				names = append(names, r.Name())
			}
		}
		for _, n := range names {
			if prev, dup := variants[n]; dup {
				return fmt.Errorf("%s: variant %s already in arm %q", where, n, prev)
			}
			variants[n] = a.Name
		}
	}
	return nil
}

// NumVariants returns the number of variants (len of Variants).
func (s ActionSet) NumVariants() int {
	n := 0
	for _, a := range s.Arms {
		n += max(len(a.Params), 1)
	}
	return n
}

// Variants returns the set's variants: arms in order, and within a
// parameterised arm its parameters in order. It panics if s is invalid;
// sets from NewActionSet and the built-in sets are valid.
func (s ActionSet) Variants() []Variant {
	if err := s.Validate(); err != nil {
		panic(err.Error())
	}
	var out []Variant
	for i, a := range s.Arms {
		if len(a.Params) == 0 {
			r, _ := New(a.MR, 0)
			out = append(out, Variant{Index: len(out), Arm: i, MR: a.MR, Relation: r})
			continue
		}
		for j, p := range a.Params {
			r, _ := New(a.MR, p)
			out = append(out, Variant{Index: len(out), Arm: i, Param: j, MR: a.MR, Degrees: p, Relation: r})
		}
	}
	return out
}

// VariantIndex returns the flat index of arm's param-th parameter (param
// must be 0 for an arm without parameters).
func (s ActionSet) VariantIndex(arm, param int) (int, error) {
	if arm < 0 || arm >= len(s.Arms) {
		return 0, fmt.Errorf("mr: action set %q: arm %d out of range [0, %d)", s.Name, arm, len(s.Arms))
	}
	idx := 0
	for _, a := range s.Arms[:arm] {
		idx += max(len(a.Params), 1)
	}
	if n := max(len(s.Arms[arm].Params), 1); param < 0 || param >= n {
		return 0, fmt.Errorf("mr: action set %q arm %q: parameter index %d out of range [0, %d)", s.Name, s.Arms[arm].Name, param, n)
	}
	return idx + param, nil
}

// RotationGrid returns the paper's rotation angles: −90…−5, 5…90 in steps
// of 5 degrees (36 values, ascending).
func RotationGrid() []float64 { return steps(-90, 90, 5) }

// ShearGrid returns the paper's shear angles: −45…−5, 5…45 in steps of 5
// degrees (18 values, ascending).
func ShearGrid() []float64 { return steps(-45, 45, 5) }

// steps returns start, start+step, … ≤ stop, without 0.
func steps(start, stop, step int) []float64 {
	var out []float64
	for v := start; v <= stop; v += step {
		if v != 0 {
			out = append(out, float64(v))
		}
	}
	return out
}

// Hierarchical returns the paper's hierarchical action set: 7 arms blur,
// fliplr, flipud, grayscale, invert, rotation (RotationGrid) and shear
// (ShearGrid), 59 variants in the original tool's order.
func Hierarchical() ActionSet {
	return ActionSet{Name: "hierarchical", Arms: []Arm{
		{Name: "blur", MR: "blur"},
		{Name: "fliplr", MR: "fliplr"},
		{Name: "flipud", MR: "flipud"},
		{Name: "grayscale", MR: "grayscale"},
		{Name: "invert", MR: "invert"},
		{Name: "rotation", MR: "rotation", Params: RotationGrid()},
		{Name: "shear", MR: "shear", Params: ShearGrid()},
	}}
}

// Basic returns the paper's basic action set: 9 flat arms blur, fliplr,
// flipud, grayscale, invert, rotation ±30 and shear ±20.
func Basic() ActionSet {
	return ActionSet{Name: "basic", Arms: []Arm{
		{Name: "blur", MR: "blur"},
		{Name: "fliplr", MR: "fliplr"},
		{Name: "flipud", MR: "flipud"},
		{Name: "grayscale", MR: "grayscale"},
		{Name: "invert", MR: "invert"},
		{Name: "rotation:-30", MR: "rotation", Params: []float64{-30}},
		{Name: "rotation:30", MR: "rotation", Params: []float64{30}},
		{Name: "shear:-20", MR: "shear", Params: []float64{-20}},
		{Name: "shear:20", MR: "shear", Params: []float64{20}},
	}}
}

// flat returns one single-parameter arm per grid value.
func flat(name, mr string, grid []float64) ActionSet {
	s := ActionSet{Name: name}
	for _, p := range grid {
		s.Arms = append(s.Arms, Arm{Name: mr + ":" + formatDeg(p), MR: mr, Params: []float64{p}})
	}
	return s
}

// RotationSet returns the paper's rotation action set: 36 flat arms, one
// per RotationGrid angle.
func RotationSet() ActionSet { return flat("rotation", "rotation", RotationGrid()) }

// ShearSet returns the paper's shear action set: 18 flat arms, one per
// ShearGrid angle.
func ShearSet() ActionSet { return flat("shear", "shear", ShearGrid()) }

// ActionSetNames lists the built-in action sets.
func ActionSetNames() []string { return []string{"hierarchical", "basic", "rotation", "shear"} }

// BuiltinActionSet returns the built-in action set with the given name.
func BuiltinActionSet(name string) (ActionSet, error) {
	switch name {
	case "hierarchical":
		return Hierarchical(), nil
	case "basic":
		return Basic(), nil
	case "rotation":
		return RotationSet(), nil
	case "shear":
		return ShearSet(), nil
	}
	return ActionSet{}, fmt.Errorf("mr: unknown action set %q (built-in: %s)", name, strings.Join(ActionSetNames(), ", "))
}

// maxGrid bounds the number of values a grid range may produce.
const maxGrid = 10000

// ParseGrid parses a parameter grid:
//
//   - a range "START:STOP:STEP" (STEP > 0, START ≤ STOP): START,
//     START+STEP, … up to STOP inclusive, leaving out 0 (the identity), so
//     "-90:90:5" is the paper's rotation grid;
//   - a comma-separated list of values ("-30,30"), kept as given.
//
// Values are not range-checked here; NewActionSet checks them against the
// relation.
func ParseGrid(spec string) ([]float64, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("mr: empty grid (want START:STOP:STEP or a comma-separated list)")
	}
	num := func(what, s string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("mr: grid %q: %s %q is not a finite number", spec, what, s)
		}
		return v, nil
	}
	if strings.Contains(spec, ":") {
		f := strings.Split(spec, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("mr: grid %q: want START:STOP:STEP", spec)
		}
		var v [3]float64
		for i, what := range []string{"START", "STOP", "STEP"} {
			x, err := num(what, f[i])
			if err != nil {
				return nil, err
			}
			v[i] = x
		}
		start, stop, step := v[0], v[1], v[2]
		if step <= 0 {
			return nil, fmt.Errorf("mr: grid %q: STEP %v must be > 0", spec, step)
		}
		if start > stop {
			return nil, fmt.Errorf("mr: grid %q: START %v is greater than STOP %v", spec, start, stop)
		}
		n := math.Floor((stop-start)/step*(1+1e-12)) + 1
		if n > maxGrid {
			return nil, fmt.Errorf("mr: grid %q has %v values, more than the limit %d", spec, n, maxGrid)
		}
		var out []float64
		for i := 0; i < int(n); i++ {
			x := start + float64(i)*step
			// Clean up binary noise (0.30000000000000004 → 0.3).
			x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
			if math.Abs(x) < step*1e-9 {
				continue
			}
			out = append(out, x)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("mr: grid %q holds no values other than 0", spec)
		}
		return out, nil
	}
	var out []float64
	for _, s := range strings.Split(spec, ",") {
		x, err := num("value", s)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// FormatGrid writes a grid the way ParseGrid reads it: "START:STOP:STEP"
// when the values are exactly what that range produces (ascending, evenly
// spaced, 0 left out), otherwise a comma-separated list.
func FormatGrid(grid []float64) string {
	if len(grid) >= 3 {
		spec := formatDeg(grid[0]) + ":" + formatDeg(grid[len(grid)-1]) + ":" + formatDeg(minStep(grid))
		if g, err := ParseGrid(spec); err == nil && equalGrids(g, grid) {
			return spec
		}
	}
	parts := make([]string, len(grid))
	for i, v := range grid {
		parts[i] = formatDeg(v)
	}
	return strings.Join(parts, ",")
}

// minStep returns the smallest positive difference of consecutive values.
func minStep(grid []float64) float64 {
	step := math.Inf(1)
	for i := 1; i < len(grid); i++ {
		if d := grid[i] - grid[i-1]; d > 0 && d < step {
			step = d
		}
	}
	step, _ = strconv.ParseFloat(strconv.FormatFloat(step, 'g', 12, 64), 64)
	return step
}

func equalGrids(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
