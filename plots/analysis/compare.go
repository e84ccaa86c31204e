package analysis

import (
	"fmt"
	"math"

	"github.com/amt-dev/amt/experiments/record"
)

// NamedRuns is one agent's runs, under the name the reports give it (its
// results folder).
type NamedRuns struct {
	Name string
	Runs []record.Run
}

// AgentCI is one agent's violation rate over seeds.
type AgentCI struct {
	Name string
	// Rates are the per-seed violation rates (SeedRates).
	Rates map[uint64]float64
	// CI is the mean of the per-seed rates with its t interval.
	CI CI
}

// PairTest is one paired comparison of a report's family.
type PairTest struct {
	Agent, Reference string
	Paired
	// PHolm and WilcoxonPHolm are P and WilcoxonP adjusted by Holm's
	// method over the family of all the comparison's tests (NaN where the
	// test could not be run).
	PHolm, WilcoxonPHolm float64
}

// Comparison is the statistical comparison of a set of agents: each one's
// mean violation rate over seeds with its confidence interval, and paired
// tests of every agent against each reference agent, adjusted together
// for multiple comparisons.
type Comparison struct {
	Level  float64
	Agents []AgentCI
	// Tests are, for each reference in the order given, every other
	// agent in the order given, against it (a reference already tested
	// against this one is not tested again the other way round).
	Tests []PairTest
}

// CompareAgents computes the comparison of agents at the confidence level:
// each agent's per-seed violation rates and their mean with a t interval,
// then for each reference (an agent's name; names no agent has are
// skipped) the paired tests of every other agent against it, by seed. The
// family Holm's adjustment runs over is all of these tests (the t-tests'
// p-values and, separately, the signed-rank tests').
func CompareAgents(agents []NamedRuns, references []string, level float64) (Comparison, error) {
	c := Comparison{Level: level}
	byName := map[string]int{}
	for _, a := range agents {
		if _, dup := byName[a.Name]; dup {
			return c, fmt.Errorf("analysis: agent %q given twice", a.Name)
		}
		rates, err := SeedRates(a.Runs)
		if err != nil {
			return c, fmt.Errorf("analysis: agent %s: %w", a.Name, err)
		}
		byName[a.Name] = len(c.Agents)
		c.Agents = append(c.Agents, AgentCI{Name: a.Name, Rates: rates, CI: MeanCI(Values(rates), level)})
	}
	var pt, pw []float64
	done := map[[2]string]bool{}
	for _, ref := range references {
		r, ok := byName[ref]
		if !ok {
			continue
		}
		for i, a := range c.Agents {
			if i == r || done[[2]string{ref, a.Name}] {
				continue // itself, or the reverse of a test made
			}
			done[[2]string{a.Name, ref}] = true
			p := PairTest{Agent: a.Name, Reference: ref, Paired: PairedTest(a.Rates, c.Agents[r].Rates, level)}
			c.Tests = append(c.Tests, p)
			pt = append(pt, p.P)
			pw = append(pw, p.WilcoxonP)
		}
	}
	ht, hw := Holm(pt), Holm(pw)
	for i := range c.Tests {
		c.Tests[i].PHolm, c.Tests[i].WilcoxonPHolm = ht[i], hw[i]
	}
	return c, nil
}

// Significant reports whether a test rejects "no difference" at the
// family-wise level alpha (its Holm-adjusted t-test p-value is below
// alpha).
func (p PairTest) Significant(alpha float64) bool {
	return !math.IsNaN(p.PHolm) && p.PHolm < alpha
}
