package analysis

import (
	"fmt"
	"math"

	"github.com/amt-dev/amt/experiments/record"
)

// The comparison of agents over the environments of an agent benchmark
// (amt suite), done as the field compares algorithms over many data sets:
//
//   - per environment, each agent's mean score over the seeds with its 95 %
//     Student-t interval, and its normalised score
//     s = (agent − random) / (per-image oracle − random), where random is
//     the exact expected score of uniform random selection and the
//     per-image oracle the score of choosing every image's best follow-up
//     (0 = random, 1 = the oracle; undefined when the oracle equals random);
//   - a win/tie/loss matrix: agent A wins over B on an environment when
//     its mean is higher and the two-sided paired t-test over the seeds
//     (the same seed gives both the same image order) has p < 0.05 after
//     Holm's adjustment over the environments of the pair — the Contextual
//     Bandit Bake-off's rule (Bietti, Agarwal & Langford, JMLR 22(133),
//     2021, §5: a win needs a significant difference), with Holm making
//     the pair's family of tests honest;
//   - the agents' mean ranks over the environments, the Friedman test and
//     the Nemenyi critical difference at α = 0.05 (Demšar, JMLR 7, 2006,
//     §3.2.2), drawn as his critical-difference diagram.

// SuiteAlpha is the significance level of the suite's tests.
const SuiteAlpha = 0.05

// SuiteAgentEnv is one agent on one environment.
type SuiteAgentEnv struct {
	// Score is the mean score over the seeds with its interval; Rate the
	// mean violation rate.
	Score CI
	Rate  float64
	// Norm is the normalised score of the mean (NaN when undefined).
	Norm float64
	// VsReference is the paired comparison with the reference agent
	// (agent − reference); VsReferenceHolm its p-value after Holm over the
	// environments.
	VsReference     Paired
	VsReferenceHolm float64
}

// WTL counts an ordered pair's wins, ties and losses over the environments.
type WTL struct{ Win, Tie, Loss int }

// SuiteComparison is the analysis of a suite.
type SuiteComparison struct {
	Suite record.Suite
	// Cells is indexed [env][agent].
	Cells [][]SuiteAgentEnv
	// MeanNorm is each agent's mean normalised score over the
	// environments where it is defined.
	MeanNorm []float64
	// Pairs is indexed [a][b]: a's wins, ties and losses against b;
	// Outcomes [a][b][env] is +1 for a win of a, −1 for a loss, 0 a tie.
	Pairs    [][]WTL
	Outcomes [][][]int
	// Friedman is the Friedman test of the mean scores (higher is better;
	// rank 1 = best), CD the Nemenyi critical difference of the mean ranks.
	Friedman Friedman
	CD       float64
	// BeatsBestVariant counts, per agent, the environments where its mean
	// score exceeds the best single variant in hindsight.
	BeatsBestVariant []int
}

// CompareSuite analyses a suite's runs.
func CompareSuite(s record.Suite) (SuiteComparison, error) {
	c := SuiteComparison{Suite: s}
	na, ne := len(s.Agents), len(s.Envs)
	ref := -1
	for k, a := range s.Agents {
		if a.ID == s.Reference {
			ref = k
		}
	}
	if ref < 0 {
		return c, fmt.Errorf("analysis: the suite's reference agent %q ran on no environment", s.Reference)
	}
	perSeed := func(xs []float64) map[uint64]float64 {
		m := make(map[uint64]float64, len(xs))
		for j, v := range xs {
			m[s.Seeds[j]] = v
		}
		return m
	}
	c.Cells = make([][]SuiteAgentEnv, ne)
	means := make([][]float64, ne)
	c.MeanNorm = make([]float64, na)
	c.BeatsBestVariant = make([]int, na)
	normN := make([]int, na)
	for i, e := range s.Envs {
		c.Cells[i] = make([]SuiteAgentEnv, na)
		means[i] = make([]float64, na)
		o := e.Oracles
		for k, r := range e.Runs {
			rates := make([]float64, len(r.Violations))
			for j := range rates {
				rates[j] = float64(r.Violations[j]) / float64(r.Iterations[j])
			}
			cell := SuiteAgentEnv{Score: MeanCI(r.Scores, Level95), Rate: meanOf(rates), Norm: math.NaN()}
			if norm, ok := o.Norm(cell.Score.Mean); ok {
				cell.Norm = norm
				c.MeanNorm[k] += cell.Norm
				normN[k]++
			}
			cell.VsReference = PairedTest(perSeed(r.Scores), perSeed(e.Runs[ref].Scores), Level95)
			if cell.Score.Mean > o.BestVariant {
				c.BeatsBestVariant[k]++
			}
			c.Cells[i][k] = cell
			means[i][k] = cell.Score.Mean
		}
	}
	for k := range c.MeanNorm {
		c.MeanNorm[k] /= float64(max(normN[k], 1))
		if normN[k] == 0 {
			c.MeanNorm[k] = math.NaN()
		}
	}
	// Holm over the environments, per agent, for the reference comparison.
	for k := range na {
		ps := make([]float64, ne)
		for i := range ne {
			ps[i] = pOrOne(c.Cells[i][k].VsReference.P)
		}
		for i, p := range Holm(ps) {
			c.Cells[i][k].VsReferenceHolm = p
		}
	}
	c.Pairs, c.Outcomes = make([][]WTL, na), make([][][]int, na)
	for a := range na {
		c.Pairs[a], c.Outcomes[a] = make([]WTL, na), make([][]int, na)
		for b := range na {
			c.Outcomes[a][b] = make([]int, ne)
		}
	}
	for a := range na {
		for b := a + 1; b < na; b++ {
			ps := make([]float64, ne)
			diffs := make([]float64, ne)
			for i, e := range s.Envs {
				p := PairedTest(perSeed(e.Runs[a].Scores), perSeed(e.Runs[b].Scores), Level95)
				ps[i], diffs[i] = pOrOne(p.P), p.Diff.Mean
			}
			for i, p := range Holm(ps) {
				switch {
				case p < SuiteAlpha && diffs[i] > 0:
					c.Pairs[a][b].Win++
					c.Pairs[b][a].Loss++
					c.Outcomes[a][b][i], c.Outcomes[b][a][i] = 1, -1
				case p < SuiteAlpha && diffs[i] < 0:
					c.Pairs[a][b].Loss++
					c.Pairs[b][a].Win++
					c.Outcomes[a][b][i], c.Outcomes[b][a][i] = -1, 1
				default:
					c.Pairs[a][b].Tie++
					c.Pairs[b][a].Tie++
				}
			}
		}
	}
	if ne >= 2 && na >= 2 {
		f, err := FriedmanTest(means, true)
		if err != nil {
			return c, fmt.Errorf("analysis: suite %s: %w", s.Name, err)
		}
		c.Friedman = f
		c.CD = NemenyiCD(na, ne, SuiteAlpha)
	}
	return c, nil
}

// pOrOne returns p, or 1 for NaN (no test possible: no evidence).
func pOrOne(p float64) float64 {
	if math.IsNaN(p) {
		return 1
	}
	return p
}

// meanOf returns the mean of xs (0 for none).
func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(max(len(xs), 1))
}

// TopGroup returns the agents whose mean rank is within the critical
// difference of the best mean rank: the top group of the
// critical-difference diagram.
func (c SuiteComparison) TopGroup() []int {
	best := math.Inf(1)
	for _, r := range c.Friedman.MeanRanks {
		best = min(best, r)
	}
	var out []int
	for k, r := range c.Friedman.MeanRanks {
		if r-best < c.CD {
			out = append(out, k)
		}
	}
	return out
}

// LossFree returns the share of the environments on which agent a has no
// significant loss (Holm-adjusted, as in Pairs) against any other agent.
func (c SuiteComparison) LossFree(a int) float64 {
	n := 0
	for i := range c.Suite.Envs {
		lost := false
		for b := range c.Outcomes[a] {
			lost = lost || c.Outcomes[a][b][i] < 0
		}
		if !lost {
			n++
		}
	}
	return float64(n) / float64(len(c.Suite.Envs))
}
