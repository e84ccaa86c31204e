package bandit_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/scenario"
)

// An agent over any action space: here a shop choosing what to show a
// visitor — a banner, or a discount whose size a parameter bandit picks —
// rewarded 1 for a sale and, for a discount, most for the smallest one
// that sells (the halving reward, halving every 10 percentage points).
func ExampleNew() {
	discount := scenario.Param{Name: "discount", Unit: "percent", Symbol: "PCT", Min: 0, Max: 50, Scale: 10}
	shop := scenario.Scenario{Name: "shop", Objective: scenario.Paper, Arms: []scenario.Arm{
		{Name: "banner", Action: "banner"},
		{Name: "discount", Action: "discount", Param: discount, Values: []float64{10, 20, 30}},
	}}
	agent, err := bandit.New("cover", shop, bandit.Layout{Dim: 4}, bandit.Options{"hidden": "8"}, 1)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2)) // the caller's seeded generator
	visitor := []float32{0.1, 0.7, 0.0, 1.2}
	c, err := agent.Choose(visitor, rng)
	if err != nil {
		panic(err)
	}
	v, err := shop.Variant(c.Arm, c.Param)
	if err != nil {
		panic(err)
	}
	sold := v.Action == "discount" // what the visitor did
	if err := agent.Update(visitor, c, sold); err != nil {
		panic(err)
	}
	// First decision: every cover policy is untrained, so the probability
	// is uniform over the ≤ 3 arms they pick, rounded as the original did.
	fmt.Println(c.ArmProb == 1 || c.ArmProb == 0.5)
	// Output: true
}
