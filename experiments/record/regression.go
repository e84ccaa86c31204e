package record

import "fmt"

// The files of a regression experiment, beside the usual ones: the
// verdict table of the SUT after the change and the record of the change.
const (
	RegressionFile    = "regression.json"
	VerdictsAfterFile = "sweep-after.csv"
)

// The states of a regression experiment's agents at the change.
const (
	// Carried agents continue after the change with the state saved just
	// before it (through a state file, as continuous-integration runs do).
	Carried = "carried"
	// Fresh agents start anew at the change.
	Fresh = "fresh"
)

// Regression is the content of regression.json: a regression experiment
// ran every agent for Switch iterations on SUTBefore, then (same images,
// the seed's next passes) on SUTAfter, once carrying its state across the
// change and once starting afresh; each such agent has its own results
// folder (ID) with the usual summary and progress logs over the whole run.
type Regression struct {
	// Switch is the number of iterations before the change.
	Switch int `json:"switch_iteration"`
	// Window is the number of iterations right after the change whose
	// violations AfterWindow counts (how fast an agent adapts).
	Window    int               `json:"window"`
	SUTBefore File              `json:"sut_before"`
	SUTAfter  File              `json:"sut_after"`
	Agents    []RegressionAgent `json:"agents"`
}

// RegressionAgent is one results folder of a regression experiment.
type RegressionAgent struct {
	// ID is the results folder, Agent the configured agent's id, State
	// Carried or Fresh.
	ID    string          `json:"id"`
	Agent string          `json:"agent"`
	State string          `json:"state"`
	Runs  []RegressionRun `json:"runs"`
}

// RegressionRun is one seed's counts before and after the change.
type RegressionRun struct {
	Seed   uint64 `json:"seed"`
	Before Counts `json:"before"`
	After  Counts `json:"after"`
	// AfterWindow counts the first Window iterations after the change.
	AfterWindow Counts `json:"after_window"`
}

// check validates a decoded regression.json.
func (r Regression) check() error {
	if r.Switch <= 0 || r.Window <= 0 {
		return fmt.Errorf("switch_iteration %d and window %d must be positive", r.Switch, r.Window)
	}
	for _, a := range r.Agents {
		if a.State != Carried && a.State != Fresh {
			return fmt.Errorf("agent %s: state %q, want %s or %s", a.ID, a.State, Carried, Fresh)
		}
		for _, run := range a.Runs {
			if run.Before.Count != r.Switch || run.AfterWindow.Count > run.After.Count || run.AfterWindow.Count > r.Window ||
				run.Before.Violations > run.Before.Count || run.After.Violations > run.After.Count || run.AfterWindow.Violations > run.AfterWindow.Count {
				return fmt.Errorf("agent %s, seed %d: inconsistent counts %+v", a.ID, run.Seed, run)
			}
		}
	}
	return nil
}

// WriteRegression writes r as indented JSON to path, atomically.
func WriteRegression(path string, r Regression) error {
	return writeJSON(path, r, "  ")
}

// ReadRegression reads a regression.json and checks that its counts are
// consistent with it.
func ReadRegression(path string) (Regression, error) {
	return readChecked[Regression](path)
}
