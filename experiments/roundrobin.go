package experiments

import (
	"math/rand/v2"

	"github.com/amt-dev/amt/scenario"
)

// roundRobin is the fixed-design baseline of the gate power study (see
// PowerStudy): it takes the scenario's arms in turn and, within an arm, its
// parameter values in turn — follow-up k of the session is arm k mod K,
// and that arm's j-th visit is its value j mod |values| — whatever the
// context and the verdicts. It is the deterministic counterpart of the
// random agent (uniform arm, then uniform value): the same allocation in
// expectation, without its sampling noise. Its state, carried from one
// check to the next like a bandit's, is where each turn stands.
type roundRobin struct {
	sc   scenario.Scenario
	next int   // the next arm
	val  []int // the next value of each arm
}

func newRoundRobin(sc scenario.Scenario) *roundRobin {
	return &roundRobin{sc: sc, val: make([]int, len(sc.Arms))}
}

// Choose implements Agent.
func (r *roundRobin) Choose([]float32, *rand.Rand) (Choice, error) {
	arm := r.next
	r.next = (r.next + 1) % len(r.sc.Arms)
	c := Choice{Arm: arm, Param: -1, Prob: 1}
	if n := len(r.sc.Arms[arm].Values); n > 1 {
		c.Param = r.val[arm]
		r.val[arm] = (r.val[arm] + 1) % n
	}
	return c, nil
}

// Update implements Agent: the design does not learn.
func (r *roundRobin) Update([]float32, Choice, bool) error { return nil }

// UsesContext implements contextReader.
func (r *roundRobin) UsesContext() bool { return false }

// clone returns a copy of the design's state (what a check saves for the
// next one).
func (r *roundRobin) clone() *roundRobin {
	c := *r
	c.val = append([]int(nil), r.val...)
	return &c
}
