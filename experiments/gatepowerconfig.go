package experiments

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// PowerConfig is the power section of a configuration: the gate power
// study (amt gate-power, PowerStudy), which replays the CI cycle of amt
// check (examples/ci) over model pairs with a known ground truth, budgets,
// follow-up designs and cycle seeds. The configuration's other sections
// are the check's: data, features, action_set, agents (the check agent is
// check.agent), check.regression (margin, alpha); the SUT's settings apply
// to every model of the pairs, which replace sut.model.
type PowerConfig struct {
	// Pairs are the model changes, old → new.
	Pairs []PowerPairConfig
	// Budgets are the iterations of each check, ascending.
	Budgets []int
	// Cycles are the cycle seeds: each pair, design and budget runs one
	// CI cycle per seed.
	Cycles []uint64
	// Audit is the audit share of the adaptive+audit design.
	Audit float64
}

// PowerPairConfig is one pair of the study (see PowerPair).
type PowerPairConfig struct {
	Name      string
	Old, New  string // resolved model paths
	Reseed    bool
	Regressed string
}

// Powering reports whether the configuration is a gate power study.
func (c *Config) Powering() bool { return len(c.Power.Pairs) > 0 }

// powerSection checks the power section against the keys read before it.
func powerSection(c *Config) string {
	switch {
	case c.Tuning():
		return "a gate power study runs the check agent as configured: tune it apart"
	case c.Regressing():
		return "a gate power study names its models in power.pairs: leave regression out"
	}
	return ""
}

// powerPairs reads power.pairs: a list of mappings with distinct names.
func powerPairs() reader[[]PowerPairConfig] {
	return mappingList("a non-empty list of pairs (mappings of name, old, new, reseed, regressed)", "pairs", "name",
		func(p *PowerPairConfig) string { return p.Name },
		func(name string) string { return fmt.Sprintf("pair %q given twice", name) })
}

// budgetList reads power.budgets: a non-empty ascending list of positive
// iteration counts.
func budgetList() reader[[]int] {
	const want = "an ascending list of positive iteration counts"
	return reader[[]int]{want: want,
		parse: func(p *parser, n *yaml.Node, key string) ([]int, error) {
			if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
				return nil, p.errf(n, key, "want %s, got %s", want, kindName(n))
			}
			var out []int
			for _, e := range n.Content {
				v, err := strconv.Atoi(e.Value)
				if e.Kind != yaml.ScalarNode || err != nil || v < 1 || v > 1<<24 {
					return nil, p.errf(e, key, "%q is not an iteration count in [1, %d]", e.Value, 1<<24)
				}
				if len(out) > 0 && v <= out[len(out)-1] {
					return nil, p.errf(e, key, "%d after %d: want %s", v, out[len(out)-1], want)
				}
				out = append(out, v)
			}
			if c := p.cfg; c.Data.Limit > 0 && out[len(out)-1] > c.Passes*c.Data.Limit {
				return nil, p.errf(n, key, "%d is more than passes × data.limit = %d", out[len(out)-1], c.Passes*c.Data.Limit)
			}
			return out, nil
		}}
}

// regressedRelation reads a relation of the action set.
func regressedRelation() reader[string] {
	return listed("a relation of the action set", func(p *parser) []string { return p.cfg.Scenario.Actions() },
		func(s string, mrs []string) string {
			return fmt.Sprintf("%q is not a relation of the action set (%v)", s, mrs)
		})
}
