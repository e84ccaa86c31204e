package mr

import (
	"fmt"
	"slices"
	"strings"

	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/scenario"
)

// NewScenario returns the scenario of arms whose actions are registered
// relations, rewarded by obj. Each arm's Param is filled in from the
// registry; an empty arm name becomes the relation's name, or for an arm
// with one value its variant key ("rotation:-30"). The scenario is
// checked with Check. The arms are copied.
func NewScenario(name string, obj scenario.Objective, arms []scenario.Arm) (scenario.Scenario, error) {
	s := scenario.Scenario{Name: name, Objective: obj, Arms: make([]scenario.Arm, len(arms))}
	for i, a := range arms {
		a.Values = slices.Clone(a.Values)
		if in, ok := Lookup(a.Action); ok {
			a.Param = in.Param
		}
		if a.Name == "" {
			a.Name = a.Action
			if len(a.Values) == 1 {
				a.Name = scenario.Key(a.Action, a.Values[0])
			}
		}
		s.Arms[i] = a
	}
	if err := Check(s); err != nil {
		return scenario.Scenario{}, err
	}
	return s, nil
}

// Check checks a scenario whose actions are relations: it must be valid
// (see scenario.Scenario.Validate), every action a registered relation
// with that relation's parameter description, and every parameter value
// within the relation's range.
func Check(s scenario.Scenario) error {
	for i, a := range s.Arms {
		in, ok := Lookup(a.Action)
		if !ok {
			return fmt.Errorf("scenario %q arm %d (%q): %w", s.Name, i, a.Name, unknownRelation(a.Action))
		}
		if a.Param != in.Param {
			return fmt.Errorf("scenario %q arm %d (%q): parameter %+v is not relation %q's %+v", s.Name, i, a.Name, a.Param, a.Action, in.Param)
		}
	}
	if err := s.Validate(); err != nil {
		return err
	}
	for _, a := range s.Arms {
		for _, v := range a.Values {
			if _, err := New(a.Action, v); err != nil {
				return fmt.Errorf("scenario %q arm %q: %w", s.Name, a.Name, err)
			}
		}
	}
	return nil
}

// paper returns the registry entries of the paper's relations, in
// registry order.
func paper() []Info { return slices.DeleteFunc(Relations(), func(in Info) bool { return !in.Paper }) }

// corruptionEntries returns the registry entries of the common
// corruptions, in registry order.
func corruptionEntries() []Info {
	return slices.DeleteFunc(Relations(), func(in Info) bool { return !in.Corruption })
}

// banditArms returns one arm per entry, a parametric one with a parameter
// bandit over its grid.
func banditArms(ins ...Info) []scenario.Arm {
	var arms []scenario.Arm
	for _, in := range ins {
		arms = append(arms, scenario.Arm{Action: in.Name, Values: in.Grid})
	}
	return arms
}

// flatArms returns one flat arm per entry without a parameter and one per
// value of each parametric entry's grid, in order.
func flatArms(ins ...Info) []scenario.Arm {
	var arms []scenario.Arm
	for _, in := range ins {
		if !in.Parametric() {
			arms = append(arms, scenario.Arm{Action: in.Name})
			continue
		}
		for _, v := range in.Grid {
			arms = append(arms, scenario.Arm{Action: in.Name, Values: []float64{v}})
		}
	}
	return arms
}

func mustScenario(name string, obj scenario.Objective, arms []scenario.Arm) scenario.Scenario {
	s, err := NewScenario(name, obj, arms)
	if err != nil {
		panic("mr: built-in scenario: " + err.Error())
	}
	return s
}

// Hierarchical returns the paper's hierarchical scenario: one arm per
// paper relation (blur, fliplr, flipud, grayscale, invert, rotation,
// shear), each parametric one with a parameter bandit over its grid
// (rotation −90…90, shear −45…45, steps of 5 without 0): 7 arms, 59
// variants in the original tool's order, objective scenario.Paper.
func Hierarchical() scenario.Scenario {
	return mustScenario("hierarchical", scenario.Paper, banditArms(paper()...))
}

// Basic returns the paper's basic scenario: 9 flat arms, the paper's
// relations without a parameter, then rotation ±30° and shear ±20°,
// objective scenario.Paper.
func Basic() scenario.Scenario {
	arms := flatArms(slices.DeleteFunc(paper(), Info.Parametric)...)
	for _, a := range []struct {
		mr string
		v  float64
	}{{"rotation", -30}, {"rotation", 30}, {"shear", -20}, {"shear", 20}} {
		arms = append(arms, scenario.Arm{Action: a.mr, Values: []float64{a.v}})
	}
	return mustScenario("basic", scenario.Paper, arms)
}

// Flat returns the paper's flat scenario of a parametric paper relation:
// one arm per value of its grid, objective scenario.PaperFlat (each arm
// earns the halving reward of its value).
func Flat(relation string) (scenario.Scenario, error) {
	in, ok := Lookup(relation)
	if !ok || !in.Paper || !in.Parametric() {
		return scenario.Scenario{}, fmt.Errorf("mr: %q is not a parametric relation of the paper", relation)
	}
	return NewScenario(relation, scenario.PaperFlat, flatArms(in))
}

// FlatAll returns the flat scenario of every follow-up of the
// hierarchical scenario: 59 arms (the paper's relations without a
// parameter, then one arm per rotation and shear angle of their grids), in
// the hierarchical scenario's variant order, objective scenario.Paper
// (every arm earns 1 per violation). It is the hierarchical scenario
// without its parameter level (issue #13).
func FlatAll() scenario.Scenario {
	return mustScenario("flat", scenario.Paper, flatArms(paper()...))
}

// Corruptions returns the corruptions scenario (issue #37): one arm per
// common corruption (Hendrycks & Dietterich), each with a parameter
// bandit over the severities 1…5, objective scenario.Paper: a main arm
// earns 1 per violation, a severity s the halving reward
// 10000/2^(s−1) (Scale 1: 10000, 5000, 2500, 1250, 625), so the mildest
// breaking severity is worth most.
func Corruptions() scenario.Scenario {
	return mustScenario("corruptions", scenario.Paper, banditArms(corruptionEntries()...))
}

// CorruptionsFlat returns the corruptions-flat scenario: one flat arm per
// corruption and severity, in the corruptions scenario's variant order,
// objective scenario.PaperFlat (an arm at severity s earns
// 10000/2^(s−1) per violation).
func CorruptionsFlat() scenario.Scenario {
	return mustScenario("corruptions-flat", scenario.PaperFlat, flatArms(corruptionEntries()...))
}

// builtins are the built-in scenarios, the original tool's action sets. A
// new one is one entry here.
var builtins = []struct {
	name, doc string
	build     func() scenario.Scenario
}{
	{"hierarchical", "the paper's 7 relations; rotation and shear with a parameter bandit over their grids", Hierarchical},
	{"basic", "the 5 relations without a parameter, rotation ±30°, shear ±20° (9 flat arms)", Basic},
	{"rotation", "one flat arm per rotation angle, each rewarded with its halving reward", func() scenario.Scenario { return mustFlat("rotation") }},
	{"shear", "one flat arm per shear angle, each rewarded with its halving reward", func() scenario.Scenario { return mustFlat("shear") }},
	{"flat", "every follow-up of the hierarchical scenario as a flat arm (59 arms), each rewarded 1 per violation", FlatAll},
	{"corruptions", "the common corruptions (ImageNet-C/CIFAR-10-C), each with a parameter bandit over severities 1-5 earning 10000/2^(s-1)", Corruptions},
	{"corruptions-flat", "every corruption at every severity as a flat arm, each earning 10000/2^(s-1) per violation", CorruptionsFlat},
}

func mustFlat(relation string) scenario.Scenario {
	s, err := Flat(relation)
	if err != nil {
		panic(err.Error())
	}
	return s
}

// BuiltinNames lists the built-in scenarios.
func BuiltinNames() []string {
	var out []string
	for _, b := range builtins {
		out = append(out, b.name)
	}
	return out
}

// BuiltinDoc returns the one-line description of a built-in scenario.
func BuiltinDoc(name string) string {
	for _, b := range builtins {
		if b.name == name {
			return b.doc
		}
	}
	return ""
}

// Builtin returns the built-in scenario with the given name (a fresh
// value).
func Builtin(name string) (scenario.Scenario, error) {
	for _, b := range builtins {
		if b.name == name {
			return b.build(), nil
		}
	}
	return scenario.Scenario{}, fmt.Errorf("mr: unknown scenario %q%s (built-in: %s)", name, suggest.DidYouMean(name, BuiltinNames()), strings.Join(BuiltinNames(), ", "))
}
