package scenario

import (
	"fmt"
	"math"
	"strings"
)

// A Rule is the reward of one level of a scenario: what a violation earns
// (a choice without a violation earns 0). Costs, which the bandits learn,
// are the level's maximum minus the reward.
type Rule interface {
	// Reward returns what a violation earns for an action with parameter
	// p at value v (NaN: the choice has no single value).
	Reward(p Param, v float64) float64
	// Bound is the rule's largest reward, the maximum of a parameter
	// level.
	Bound() float64
	// String names the rule ("unit", "halving").
	String() string
}

// Unit rewards every violation with 1.
type Unit struct{}

// Reward implements Rule.
func (Unit) Reward(Param, float64) float64 { return 1 }

// Bound implements Rule.
func (Unit) Bound() float64 { return 1 }

func (Unit) String() string { return "unit" }

// Halving is the original tool's parameter reward: a violation at value v
// earns Top / 2^(|v|/p.Scale − 1), so the value closest to the identity
// earns the most, the reward halves with every further Scale, and ±v earn
// the same (for angles, Scale 5 and Top 10000: 10000 at ±5°, 5000 at ±10°).
// A choice without a single value (an action without a parameter, or a
// hierarchical arm on the main level) earns 1.
type Halving struct {
	Top float64
}

// Reward implements Rule.
func (h Halving) Reward(p Param, v float64) float64 {
	if math.IsNaN(v) || p.Scale <= 0 {
		return 1
	}
	return h.Top / math.Pow(2, math.Abs(v)/p.Scale-1)
}

// Bound implements Rule.
func (h Halving) Bound() float64 { return h.Top }

func (Halving) String() string { return "halving" }

// Objective gives both levels of a scenario their rewards: Main for the
// main bandit's choice of arm, Param for a parameter bandit's choice of
// value.
type Objective struct {
	// Name identifies the objective in configurations and run metadata.
	Name string
	// Doc is a one-line description.
	Doc         string
	Main, Param Rule
}

// The objectives. A new one is one value here and one entry in
// Objectives.
var (
	// paperHalving is the original's halving reward, maximum 10000.
	paperHalving = Halving{Top: 10000}

	// Paper is the objective of the paper's hierarchical and basic
	// scenarios: a main arm earns 1 per violation, a parameter the halving
	// reward of its value (maximum 10000).
	Paper = Objective{Name: "unit", Doc: "main arms earn 1 per violation, parameters the halving reward 10000/2^(|p|/scale − 1)",
		Main: Unit{}, Param: paperHalving}
	// PaperFlat is the objective of the paper's flat rotation and shear
	// scenarios: an arm with a fixed value earns the halving reward of its
	// value (the main maximum is then the largest of those), any other arm 1.
	PaperFlat = Objective{Name: "halving", Doc: "arms with a single value earn its halving reward 10000/2^(|p|/scale − 1), other arms 1; parameters as in unit",
		Main: paperHalving, Param: paperHalving}
	// Fault is the fault-finding objective (issue #13): every violation
	// earns 1 on both levels, so an agent finds as many as it can,
	// whatever the parameter.
	Fault = Objective{Name: "fault", Doc: "every violation earns 1, on both levels",
		Main: Unit{}, Param: Unit{}}
)

// Objectives lists the objectives a configuration may name.
func Objectives() []Objective { return []Objective{Paper, PaperFlat, Fault} }

// ObjectiveNames lists the names of Objectives.
func ObjectiveNames() []string {
	var out []string
	for _, o := range Objectives() {
		out = append(out, o.Name)
	}
	return out
}

// ObjectiveByName returns the objective with the given name.
func ObjectiveByName(name string) (Objective, error) {
	for _, o := range Objectives() {
		if o.Name == name {
			return o, nil
		}
	}
	return Objective{}, fmt.Errorf("unknown objective %q (known: %s)", name, strings.Join(ObjectiveNames(), ", "))
}
