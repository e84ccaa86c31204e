package experiments

import (
	"fmt"
	"math"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
)

// A Scenario is the action space of a run: the main arms an agent chooses
// from, each either a single follow-up (an MR, possibly with a fixed
// parameter) or an MR with a grid of parameters chosen by a second-level
// (parameter) bandit. It is plain data, shared by the loop, the sweep and
// the replay lookups.
type Scenario struct {
	Name string
	Arms []Arm
}

// An Arm is one main arm of a scenario.
type Arm struct {
	// Name is the arm's name in result files: "blur", "rotation" for a
	// hierarchical arm, "rotation:-30" for an arm with a fixed parameter.
	Name string
	// MR is the relation's registry name (blur, fliplr, flipud, grayscale,
	// invert, rotation, shear, …).
	MR string
	// Param is the fixed parameter in degrees, NaN when the arm has none or
	// when it has a Grid.
	Param float64
	// Grid holds the parameters of a hierarchical arm (degrees, in the
	// parameter bandit's arm order); nil for a single-follow-up arm.
	Grid []float64
	// Reward is the main arm's reward on a violation (0 otherwise): 1 in
	// the hierarchical and basic scenarios, the halving reward of the
	// angle in the flat rotation and shear scenarios (as the original).
	Reward float64
}

// A Variant is one concrete follow-up of a scenario: a main arm and, for a
// hierarchical arm, an index into its grid (-1 otherwise).
type Variant struct {
	Arm, Param int
	MR         string
	// Degrees is the follow-up's parameter, NaN for MRs without one.
	Degrees float64
}

// Key returns "mr" or "mr:degrees", the key used in verdict tables and in
// record.Run.Params.
func (v Variant) Key() string { return variantKey(v.MR, v.Degrees) }

func variantKey(mr string, deg float64) string {
	return record.Verdict{MR: mr, Param: deg}.ParamKey()
}

// Variants returns every follow-up of the scenario in canonical order:
// arms in order, a hierarchical arm's grid in grid order.
func (s Scenario) Variants() []Variant {
	var out []Variant
	for i, a := range s.Arms {
		if len(a.Grid) == 0 {
			out = append(out, Variant{Arm: i, Param: -1, MR: a.MR, Degrees: a.Param})
			continue
		}
		for j, d := range a.Grid {
			out = append(out, Variant{Arm: i, Param: j, MR: a.MR, Degrees: d})
		}
	}
	return out
}

// Variant returns the follow-up for a choice of main arm and parameter
// index, or an error when the choice is out of range.
func (s Scenario) Variant(arm, param int) (Variant, error) {
	if arm < 0 || arm >= len(s.Arms) {
		return Variant{}, fmt.Errorf("scenario %s: arm %d out of range [0,%d)", s.Name, arm, len(s.Arms))
	}
	a := s.Arms[arm]
	if len(a.Grid) == 0 {
		if param != -1 {
			return Variant{}, fmt.Errorf("scenario %s: arm %s has no parameters, got parameter index %d", s.Name, a.Name, param)
		}
		return Variant{Arm: arm, Param: -1, MR: a.MR, Degrees: a.Param}, nil
	}
	if param < 0 || param >= len(a.Grid) {
		return Variant{}, fmt.Errorf("scenario %s: arm %s: parameter index %d out of range [0,%d)", s.Name, a.Name, param, len(a.Grid))
	}
	return Variant{Arm: arm, Param: param, MR: a.MR, Degrees: a.Grid[param]}, nil
}

// Validate checks that the scenario is usable: at least one arm, unique arm
// names, unique follow-ups, finite parameters.
func (s Scenario) Validate() error {
	if len(s.Arms) == 0 {
		return fmt.Errorf("scenario %q has no arms", s.Name)
	}
	names := map[string]bool{}
	keys := map[string]bool{}
	for _, a := range s.Arms {
		if a.Name == "" || a.MR == "" {
			return fmt.Errorf("scenario %q: arm with empty name or MR", s.Name)
		}
		if names[a.Name] {
			return fmt.Errorf("scenario %q: duplicate arm %q", s.Name, a.Name)
		}
		names[a.Name] = true
		if len(a.Grid) > 0 && !math.IsNaN(a.Param) {
			return fmt.Errorf("scenario %q: arm %q has both a fixed parameter and a grid", s.Name, a.Name)
		}
		if math.IsInf(a.Param, 0) || math.IsNaN(a.Reward) || a.Reward <= 0 {
			return fmt.Errorf("scenario %q: arm %q: bad parameter %v or reward %v", s.Name, a.Name, a.Param, a.Reward)
		}
		for _, d := range a.Grid {
			if math.IsNaN(d) || math.IsInf(d, 0) {
				return fmt.Errorf("scenario %q: arm %q: bad grid value %v", s.Name, a.Name, d)
			}
		}
	}
	for _, v := range s.Variants() {
		if keys[v.Key()] {
			return fmt.Errorf("scenario %q: follow-up %s appears twice", s.Name, v.Key())
		}
		keys[v.Key()] = true
	}
	return nil
}

// HalvingReward is the original's parameter reward on a violation:
// 10000 / 2^(|deg|/5 − 1), the same for ±deg; the smallest violating angle
// earns the most.
func HalvingReward(deg float64) float64 {
	return 10000 / math.Pow(2, math.Abs(deg)/5-1)
}

// ScenarioNames lists the built-in scenarios (the original's action sets).
func ScenarioNames() []string { return mr.ActionSetNames() }

// BuiltinScenario returns one of the original's action sets (package mr's
// built-in sets):
//
//   - hierarchical: blur, fliplr, flipud, grayscale, invert, rotation (grid
//     −90…90 step 5 without 0), shear (−45…45 step 5): 7 main arms, 59
//     follow-ups, in Tetraband order;
//   - basic: the five simple MRs, rotation ±30, shear ±20 (9 flat arms);
//   - rotation: 36 flat rotation arms; shear: 18 flat shear arms, each
//     rewarded with the halving reward of its angle.
func BuiltinScenario(name string) (Scenario, error) {
	set, err := mr.BuiltinActionSet(name)
	if err != nil {
		return Scenario{}, err
	}
	return ScenarioFromActionSet(set, name == "rotation" || name == "shear")
}
