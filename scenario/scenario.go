// Package scenario defines what an adaptive-testing agent chooses from and
// what its choices earn: a Scenario is a named list of arms, each an action
// (for amt, a metamorphic relation named by its registry name) that takes
// no parameter, a fixed parameter value, or a grid of values explored by a
// second-level (parameter) bandit; its Objective gives each level its
// reward. Every other package uses this one definition: package mr builds
// the paper's scenarios from its registry of relations, package bandit
// learns over them without knowing what an action is, the experiment
// runner records them, and the plots read their variant keys back.
//
// The package imports nothing of amt, so it can describe action spaces
// outside image testing.
package scenario

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Param describes the parameter an action takes: what it is, its valid
// range and the step of its halving reward. Package mr declares one per
// parametric relation in its registry.
type Param struct {
	// Name says what the value is ("angle"), Unit how it is measured
	// ("degrees"), Symbol how usage text writes it ("DEG", as in
	// "rotation:DEG").
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Symbol string `json:"symbol"`
	// Min and Max bound the values the action accepts (inclusive).
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Scale is the distance from zero over which the halving reward halves
	// (the 5 of the paper's 10000/2^(|deg|/5 − 1) for angles).
	Scale float64 `json:"scale"`
}

// Describe returns "angle in degrees in [-360, 360]".
func (p Param) Describe() string {
	return fmt.Sprintf("%s in %s in [%v, %v]", p.Name, p.Unit, p.Min, p.Max)
}

// Arm is one arm of a scenario's main bandit.
type Arm struct {
	// Name identifies the arm in result files: the action's name for an arm
	// without a fixed value ("blur", "rotation"), its variant key for an
	// arm with one ("rotation:-30").
	Name string
	// Action is what the arm does, for amt a relation's registry name
	// ("rotation"). Agents never interpret it.
	Action string
	// Param describes the action's parameter; the zero Param for an action
	// without one.
	Param Param
	// Values are the parameter values: none for an action without a
	// parameter, one for an arm with a fixed value (a flat arm), several
	// for an arm whose value a parameter bandit chooses, in that bandit's
	// arm order.
	Values []float64
}

// Hierarchical reports whether a parameter bandit chooses the arm's value
// (the arm has more than one).
func (a Arm) Hierarchical() bool { return len(a.Values) > 1 }

// value returns the arm's fixed parameter value, NaN when it has none or
// several.
func (a Arm) value() float64 {
	if len(a.Values) == 1 {
		return a.Values[0]
	}
	return math.NaN()
}

// Variant is one concrete follow-up of a scenario: an arm and, for a
// hierarchical arm, one of its values.
type Variant struct {
	// Index is the position in Scenario.Variants.
	Index int
	// Arm is the index of the arm in Scenario.Arms.
	Arm int
	// Param is the index into the arm's Values for a hierarchical arm, -1
	// otherwise (the agent's parameter choice).
	Param int
	// Action is the arm's action.
	Action string
	// Value is the parameter value, NaN for an action without one.
	Value float64
}

// Key returns the variant's key (see Key).
func (v Variant) Key() string { return Key(v.Action, v.Value) }

// Key returns the key of an action at a parameter value: "blur" when value
// is NaN (no parameter), otherwise "rotation:-30". Keys name the columns of
// verdict tables, the parameter counts of result files, the cache key of a
// sweep and flat arms; ParseKey reads them back.
func Key(action string, value float64) string {
	if math.IsNaN(value) {
		return action
	}
	return action + ":" + FormatValue(value)
}

// FormatValue formats a parameter value as the shortest decimal that reads
// back as the same number ("30", "-7.5"); "" for NaN.
func FormatValue(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// ParseKey splits a key "rotation:-30" into the action and the value. ok
// is false for a key without a (finite) value.
func ParseKey(key string) (action string, value float64, ok bool) {
	i := strings.LastIndexByte(key, ':')
	if i <= 0 {
		return "", 0, false
	}
	d, err := strconv.ParseFloat(key[i+1:], 64)
	if err != nil || math.IsNaN(d) || math.IsInf(d, 0) {
		return "", 0, false
	}
	return key[:i], d, true
}

// Scenario is an action space and its rewards.
type Scenario struct {
	Name      string
	Arms      []Arm
	Objective Objective
}

// Variants returns every follow-up of the scenario in canonical order (the
// order of verdict tables): arms in order, a hierarchical arm's values in
// order.
func (s Scenario) Variants() []Variant {
	var out []Variant
	for i, a := range s.Arms {
		if !a.Hierarchical() {
			out = append(out, Variant{Index: len(out), Arm: i, Param: -1, Action: a.Action, Value: a.value()})
			continue
		}
		for j, v := range a.Values {
			out = append(out, Variant{Index: len(out), Arm: i, Param: j, Action: a.Action, Value: v})
		}
	}
	return out
}

// Keys returns the keys of Variants, in the same order.
func (s Scenario) Keys() []string {
	vs := s.Variants()
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Key()
	}
	return out
}

// Actions returns the arms' actions (for amt, the relations), each once,
// in arm order.
func (s Scenario) Actions() []string {
	var out []string
	for _, a := range s.Arms {
		if !slices.Contains(out, a.Action) {
			out = append(out, a.Action)
		}
	}
	return out
}

// Variant returns the follow-up for a choice of arm and parameter index
// (-1 for an arm that is not hierarchical).
func (s Scenario) Variant(arm, param int) (Variant, error) {
	if arm < 0 || arm >= len(s.Arms) {
		return Variant{}, fmt.Errorf("scenario %s: arm %d out of range [0,%d)", s.Name, arm, len(s.Arms))
	}
	idx := 0
	for _, a := range s.Arms[:arm] {
		idx += max(len(a.Values), 1)
	}
	a := s.Arms[arm]
	if !a.Hierarchical() {
		if param != -1 {
			return Variant{}, fmt.Errorf("scenario %s: arm %s has no parameter bandit, got parameter index %d", s.Name, a.Name, param)
		}
		return Variant{Index: idx, Arm: arm, Param: -1, Action: a.Action, Value: a.value()}, nil
	}
	if param < 0 || param >= len(a.Values) {
		return Variant{}, fmt.Errorf("scenario %s: arm %s: parameter index %d out of range [0,%d)", s.Name, a.Name, param, len(a.Values))
	}
	return Variant{Index: idx + param, Arm: arm, Param: param, Action: a.Action, Value: a.Values[param]}, nil
}

// Validate checks that the scenario is usable: a name, at least one arm,
// an objective, arms with names and actions, unique arm names, parameter
// values only for arms with a parameter (and finite ones), and no variant
// twice.
func (s Scenario) Validate() error {
	if strings.TrimSpace(s.Name) == "" {
		return fmt.Errorf("scenario has no name")
	}
	if len(s.Arms) == 0 {
		return fmt.Errorf("scenario %q has no arms", s.Name)
	}
	if s.Objective.Main == nil || s.Objective.Param == nil {
		return fmt.Errorf("scenario %q has no objective", s.Name)
	}
	names := map[string]int{}
	for i, a := range s.Arms {
		where := fmt.Sprintf("scenario %q arm %d (%q)", s.Name, i, a.Name)
		if a.Name == "" || a.Action == "" {
			return fmt.Errorf("%s: empty arm name or action", where)
		}
		if j, dup := names[a.Name]; dup {
			return fmt.Errorf("%s: name already used by arm %d", where, j)
		}
		names[a.Name] = i
		if a.Param == (Param{}) && len(a.Values) > 0 {
			return fmt.Errorf("%s: action %q takes no parameter, got %v", where, a.Action, a.Values)
		}
		if a.Param != (Param{}) && len(a.Values) == 0 {
			return fmt.Errorf("%s: action %q needs at least one parameter (%s)", where, a.Action, a.Param.Unit)
		}
		for _, v := range a.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: parameter %v is not a finite number", where, v)
			}
		}
	}
	seen := map[string]string{}
	for _, v := range s.Variants() {
		k := v.Key()
		if prev, dup := seen[k]; dup {
			return fmt.Errorf("scenario %q arm %q: variant %s already in arm %q", s.Name, s.Arms[v.Arm].Name, k, prev)
		}
		seen[k] = s.Arms[v.Arm].Name
	}
	return nil
}

// MainReward returns what a violation by arm earns the main bandit (a
// choice without a violation earns 0).
func (s Scenario) MainReward(arm int) float64 {
	a := s.Arms[arm]
	return s.Objective.Main.Reward(a.Param, a.value())
}

// MainMax returns the largest main reward of any arm (the original's
// env.max_reward); a main cost is MainMax − reward.
func (s Scenario) MainMax() float64 {
	m := 0.0
	for i := range s.Arms {
		m = max(m, s.MainReward(i))
	}
	return m
}

// MainCost returns the main bandit's cost of a choice of arm.
func (s Scenario) MainCost(arm int, violated bool) float64 {
	r := 0.0
	if violated {
		r = s.MainReward(arm)
	}
	return s.MainMax() - r
}

// ParamReward returns what a violation at the param-th value of a
// hierarchical arm earns its parameter bandit.
func (s Scenario) ParamReward(arm, param int) float64 {
	a := s.Arms[arm]
	return s.Objective.Param.Reward(a.Param, a.Values[param])
}

// ParamMax returns the parameter bandits' largest reward, the rule's bound
// (the original's max_reward_sub = 10000); a parameter cost is ParamMax −
// reward.
func (s Scenario) ParamMax() float64 { return s.Objective.Param.Bound() }

// ParamCost returns the parameter bandit's cost of a choice of the
// param-th value of arm.
func (s Scenario) ParamCost(arm, param int, violated bool) float64 {
	r := 0.0
	if violated {
		r = s.ParamReward(arm, param)
	}
	return s.ParamMax() - r
}
