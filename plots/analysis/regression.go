package analysis

import (
	"fmt"

	"github.com/amt-dev/amt/experiments/record"
)

// RegressionStat is one results folder of a regression experiment: its
// per-seed violation rates before the change, after it, and in the first
// iterations after it, each with its mean and t interval.
type RegressionStat struct {
	ID, Agent, State      string
	Before, After, Window map[uint64]float64
	BeforeCI, AfterCI     CI
	WindowCI              CI
}

// RegressionStats returns the statistics of every results folder of a
// regression experiment, in its order.
func RegressionStats(r record.Regression, level float64) ([]RegressionStat, error) {
	var out []RegressionStat
	for _, a := range r.Agents {
		s := RegressionStat{ID: a.ID, Agent: a.Agent, State: a.State,
			Before: map[uint64]float64{}, After: map[uint64]float64{}, Window: map[uint64]float64{}}
		for _, run := range a.Runs {
			if _, dup := s.Before[run.Seed]; dup {
				return nil, fmt.Errorf("analysis: regression agent %s: two runs of seed %d", a.ID, run.Seed)
			}
			s.Before[run.Seed] = Rate(run.Before)
			s.After[run.Seed] = Rate(run.After)
			s.Window[run.Seed] = Rate(run.AfterWindow)
		}
		s.BeforeCI = MeanCI(Values(s.Before), level)
		s.AfterCI = MeanCI(Values(s.After), level)
		s.WindowCI = MeanCI(Values(s.Window), level)
		out = append(out, s)
	}
	return out, nil
}

// RegressionTest is one paired comparison of a regression experiment, on
// one of its metrics ("after", the whole run after the change, or
// "window", its first iterations).
type RegressionTest struct {
	Metric string
	PairTest
}

// RegressionTests compares, for every configured agent but the reference,
// its carried and fresh runs after the change (over the window and over
// the whole rest), and every carried run against the reference's carried
// run (after the change); the tests are paired by seed and Holm-adjusted
// as one family. reference is a configured agent's id ("random"); an
// absent one gives only the carried-vs-fresh tests.
func RegressionTests(stats []RegressionStat, reference string, level float64) []RegressionTest {
	byAgent := map[string]map[string]RegressionStat{}
	var agents []string
	for _, s := range stats {
		if byAgent[s.Agent] == nil {
			byAgent[s.Agent] = map[string]RegressionStat{}
			agents = append(agents, s.Agent)
		}
		byAgent[s.Agent][s.State] = s
	}
	var out []RegressionTest
	add := func(metric string, a, b RegressionStat, x, y map[uint64]float64) {
		out = append(out, RegressionTest{Metric: metric, PairTest: PairTest{Agent: a.ID, Reference: b.ID, Paired: PairedTest(x, y, level)}})
	}
	for _, ag := range agents {
		c, okc := byAgent[ag][record.Carried]
		f, okf := byAgent[ag][record.Fresh]
		if ag == reference || !okc || !okf {
			continue
		}
		add("window", c, f, c.Window, f.Window)
		add("after", c, f, c.After, f.After)
	}
	if ref, ok := byAgent[reference][record.Carried]; ok {
		for _, ag := range agents {
			if c, ok := byAgent[ag][record.Carried]; ok && ag != reference {
				add("after", c, ref, c.After, ref.After)
			}
		}
	}
	var pt, pw []float64
	for _, t := range out {
		pt, pw = append(pt, t.P), append(pw, t.WilcoxonP)
	}
	ht, hw := Holm(pt), Holm(pw)
	for i := range out {
		out[i].PHolm, out[i].WilcoxonPHolm = ht[i], hw[i]
	}
	return out
}

// WindowRates turns averaged cumulative progress into the violation rate
// of each logged window: at Iterations[i], the mean violations between the
// previous logged iteration (0 for the first) and this one, divided by the
// window's length.
func WindowRates(p Progress) (ends []int, rates []float64) {
	prevIt, prevV := 0, 0.0
	for i, it := range p.Iterations {
		ends = append(ends, it)
		rates = append(rates, (p.Violations[i].Mean-prevV)/float64(it-prevIt))
		prevIt, prevV = it, p.Violations[i].Mean
	}
	return ends, rates
}
