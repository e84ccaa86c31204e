package record

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Decision is one line of a run's decision log,
// <agent>/decisions-seed-<n>.jsonl (written by amt run -log-decisions and
// amt replay -log-decisions): one iteration's context, the follow-up the
// agent chose, the probability with which it chose it and what it cost.
// It is a record of amt ope's log format (package bandit/ope): Arm is the
// follow-up's index among the scenario's variants (run.json's
// scenario.variants), Prob the probability with which the agent drew the
// main arm and the parameter together (the product of the two bandits'
// probabilities, exactly as drawn: with round: true the bandits learnt
// from their rounded values), Cost the scenario's main cost of the
// verdict (in the paper's scenario: 0 for a violation, 1 otherwise). The
// context is the one the agent was given (computed after the iteration,
// outside its time, for agents that do not read it).
type Decision struct {
	Seed      uint64    `json:"seed"`
	Iteration int       `json:"iteration"` // 1-based
	Image     int       `json:"image"`     // the source case (its row in the verdict table)
	Variant   string    `json:"variant"`   // the follow-up's key, "rotation:-30"
	Arm       int       `json:"arm"`
	Prob      float64   `json:"prob"`
	Cost      float64   `json:"cost"`
	Violated  bool      `json:"violated"`
	Context   []float32 `json:"context"`
}

// DecisionsFile returns the name of seed's decision log
// ("decisions-seed-3.jsonl").
func DecisionsFile(seed uint64) string {
	return "decisions-seed-" + strconv.FormatUint(seed, 10) + ".jsonl"
}

// DecisionsGlob matches the names of the decision logs in an agent folder.
const DecisionsGlob = "decisions-seed-*.jsonl"

// isDecisionsFile reports whether name is the name of a decision log
// (DecisionsFile of some seed).
func isDecisionsFile(name string) bool {
	rest, ok := strings.CutPrefix(name, "decisions-")
	seed, log := ParseLogFile(rest)
	return ok && log && DecisionsFile(seed) == name
}

// WriteDecisions writes seed's decision log (DecisionsFile(seed)) into the
// folder being written.
func (f *AgentFolder) WriteDecisions(seed uint64, ds []Decision) error {
	return WriteDecisions(filepath.Join(f.tmp, DecisionsFile(seed)), ds)
}

// WriteDecisions writes the decisions as JSON lines to path, atomically.
func WriteDecisions(path string, ds []Decision) error {
	return writeLines(path, ds)
}
