package record

import (
	"fmt"
	"math"
)

// SuiteFile is the result of amt suite (Suite) in the suite's folder.
const SuiteFile = "suite.json"

// Suite is the content of suite.json: every agent's runs on every
// environment of an agent benchmark (amt suite). An environment is one
// system under test's exhaustive table with one scenario and one
// objective; every agent runs once per seed, one pass over the images, and
// its score on a run is the run's total reward per iteration under the
// environment's objective (the violation rate under the fault objective and
// under the paper's objective on the hierarchical and basic scenarios,
// whose main arms earn 1 per violation; the mean halving reward on the
// rotation and shear scenarios).
type Suite struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Seeds are the evaluation seeds, in run order.
	Seeds []uint64 `json:"seeds"`
	// Agents lists the agents' ids, in the configuration's order.
	Agents []SuiteAgent `json:"agents"`
	// Recommended is the id of the agent the suite checks as the
	// recommended one ("" for none).
	Recommended string `json:"recommended,omitempty"`
	// Reference is the id of the agent that normalised scores and the
	// "never worse than" claims compare with (random selection).
	Reference string `json:"reference"`
	// SUTs describes the systems under test.
	SUTs []SuiteSUT `json:"suts"`
	// Envs are the environments, SUT-major, then scenario, then objective
	// in the configuration's orders.
	Envs []SuiteEnv `json:"environments"`
	// Tuning records how tuned agents' options were chosen (none without
	// a tune section); Agents holds the chosen options.
	Tuning []SuiteTuning `json:"tuning,omitempty"`
	// Version is amt's version that ran the suite.
	Version string `json:"amt_version"`
}

// SuiteAgent is one agent of a suite.
type SuiteAgent struct {
	ID      string            `json:"id"`
	Name    string            `json:"name"`
	Options map[string]string `json:"options,omitempty"`
}

// SuiteTuning is how one agent's options were chosen on the suite: every
// setting of its grid ran on every environment with the tuning seeds
// (disjoint from the evaluation seeds); the setting of the best mean
// normalised score over the environments was chosen.
type SuiteTuning struct {
	Agent    string         `json:"agent"`
	Seeds    []uint64       `json:"tune_seeds"`
	Settings []SuiteSetting `json:"settings"`
	Chosen   int            `json:"chosen"`
}

// SuiteSetting is one point of a tuning grid: the agent's options (its
// configured ones with the grid's) and its mean normalised score.
type SuiteSetting struct {
	Options  map[string]string `json:"options"`
	MeanNorm float64           `json:"mean_normalised_score"`
}

// SuiteSUT is one system under test of a suite.
type SuiteSUT struct {
	Name      string `json:"name"`
	CaseStudy string `json:"case_study"`
	Model     File   `json:"model"`
	Data      File   `json:"data"`
	// Features is the context features' model ("" without one).
	Features File `json:"features"`
	// DataFormat is the data set's format; Images the number used.
	DataFormat string `json:"data_format"`
	Images     int    `json:"images"`
	// Grey is true when the images are grey (R = G = B), on which the
	// grayscale relation is the identity.
	Grey bool `json:"grey,omitempty"`
	// SutContext is true when the agents' context ends with the grey-box
	// block (features.kind has sut): the SUT's own answer on the image.
	SutContext bool `json:"sut_context,omitempty"`
}

// SuiteEnv is one environment and every agent's runs on it.
type SuiteEnv struct {
	// Name is "<sut>/<scenario>/<objective>".
	Name      string `json:"name"`
	SUT       string `json:"sut"`
	Scenario  string `json:"scenario"`
	Objective string `json:"objective"`
	Images    int    `json:"images"`
	// Oracles are the reference scores computed from the exhaustive
	// table (one pass over the images, as the agents run).
	Oracles SuiteOracles `json:"oracles"`
	// Runs holds each agent's runs, in Suite.Agents order.
	Runs []SuiteRuns `json:"runs"`
}

// SuiteOracles are an environment's reference scores, each the mean over
// the images of a reward per image.
type SuiteOracles struct {
	// Random is the expected score of uniform random selection (an arm
	// uniformly, then a value of its grid uniformly), computed exactly.
	Random float64 `json:"random"`
	// BestVariant is the score of always applying the follow-up
	// (relation and value) that scores best over the table — the best
	// fixed choice in hindsight, what a practitioner would do without an
	// agent; BestVariantKey names it.
	BestVariant    float64 `json:"best_variant"`
	BestVariantKey string  `json:"best_variant_key"`
	// PerImage is the score of choosing, for every image, its best
	// follow-up: no selection can score more.
	PerImage float64 `json:"per_image"`
	// BestPerClass (classifiers only; 0 and omitted for a detector) is the
	// score of applying to every image the follow-up that scores best, in
	// hindsight, over the images the classifier puts in the same class on
	// the source: the best fixed choice per predicted class. An agent whose
	// context holds the grey-box block sees that class, so its lead over
	// BestVariant is the headroom the system under test's own answer leaves
	// a contextual agent over the best fixed choice.
	BestPerClass float64 `json:"best_per_class,omitempty"`
}

// Norm returns the normalised score of score, which puts random selection
// at 0 and the per-image oracle at 1: (score − Random) / (PerImage −
// Random). It is defined (ok) only when PerImage > Random; an environment
// where random selection already scores the most normalises nothing.
// Suite tuning (experiments) and the suite report (plots/analysis) both
// rank agents by it.
func (o SuiteOracles) Norm(score float64) (norm float64, ok bool) {
	if o.PerImage > o.Random {
		return (score - o.Random) / (o.PerImage - o.Random), true
	}
	return 0, false
}

// SuiteRuns are one agent's runs on one environment, one entry per seed in
// Suite.Seeds order.
type SuiteRuns struct {
	Agent      string    `json:"agent"`
	Scores     []float64 `json:"scores"`
	Violations []int     `json:"violations"`
	Iterations []int     `json:"iterations"`
}

// WriteSuite writes s as indented JSON to path, atomically.
func WriteSuite(path string, s Suite) error {
	return writeJSON(path, s, " ")
}

// ReadSuite reads and checks a suite.json: at most limits.JSONBytes,
// strict JSON (no unknown fields), every environment with one run list per
// agent in order, one value per seed, counts that make sense and finite
// scores.
func ReadSuite(path string) (Suite, error) {
	return readChecked[Suite](path)
}

// check validates a decoded suite.
func (s Suite) check() error {
	if len(s.Seeds) == 0 || len(s.Agents) == 0 || len(s.Envs) == 0 {
		return fmt.Errorf("want seeds, agents and environments (%d, %d, %d)", len(s.Seeds), len(s.Agents), len(s.Envs))
	}
	ids := map[string]bool{}
	for _, a := range s.Agents {
		if a.ID == "" || ids[a.ID] {
			return fmt.Errorf("agent id %q empty or given twice", a.ID)
		}
		ids[a.ID] = true
	}
	if !ids[s.Reference] || (s.Recommended != "" && !ids[s.Recommended]) {
		return fmt.Errorf("reference %q or recommended %q is not an agent", s.Reference, s.Recommended)
	}
	for _, e := range s.Envs {
		if len(e.Runs) != len(s.Agents) {
			return fmt.Errorf("environment %s has runs of %d agents, want %d", e.Name, len(e.Runs), len(s.Agents))
		}
		o := e.Oracles
		for _, v := range []float64{o.Random, o.BestVariant, o.PerImage, o.BestPerClass} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("environment %s: oracle score %v, want a finite score ≥ 0", e.Name, v)
			}
		}
		for k, r := range e.Runs {
			if r.Agent != s.Agents[k].ID {
				return fmt.Errorf("environment %s: run list %d is agent %q's, want %q's", e.Name, k, r.Agent, s.Agents[k].ID)
			}
			if len(r.Scores) != len(s.Seeds) || len(r.Violations) != len(s.Seeds) || len(r.Iterations) != len(s.Seeds) {
				return fmt.Errorf("environment %s, agent %s: want %d values per list (one per seed)", e.Name, r.Agent, len(s.Seeds))
			}
			for j := range r.Scores {
				if math.IsNaN(r.Scores[j]) || math.IsInf(r.Scores[j], 0) || r.Iterations[j] < 1 || r.Violations[j] < 0 || r.Violations[j] > r.Iterations[j] {
					return fmt.Errorf("environment %s, agent %s, seed %d: score %v, %d violations in %d iterations", e.Name, r.Agent, s.Seeds[j], r.Scores[j], r.Violations[j], r.Iterations[j])
				}
			}
		}
	}
	return nil
}
