package bandit_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/amt-dev/amt/bandit"
)

// The paper's loop: choose a relation (and parameter) for a context, run
// it, teach the agent whether it found a violation.
func ExampleNew() {
	spec := bandit.Hierarchical()
	agent, err := bandit.New("cover", spec, 4, bandit.Options{"hidden": "8"}, 1)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2)) // the caller's seeded generator
	ctx := []float32{0.1, 0.7, 0.0, 1.2}
	c, err := agent.Choose(ctx, rng)
	if err != nil {
		panic(err)
	}
	arm := spec.Arms[c.Arm]
	violated := arm.Name == "invert" // the system under test's verdict
	if err := agent.Update(ctx, c, violated); err != nil {
		panic(err)
	}
	// First decision: every cover policy is untrained, so the probability
	// is uniform over the ≤ 3 arms they pick, rounded as the original did.
	fmt.Println(c.ArmProb == 1 || c.ArmProb == 0.5 || c.ArmProb == 0.33)
	// Output: true
}
