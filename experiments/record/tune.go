package record

import "fmt"

// TuneFile is the tuning record of amt tune (Tuning), in the experiment's
// folder beside the evaluation runs of the chosen settings.
const TuneFile = "tune.json"

// Tuning is the content of tune.json: how amt tune chose agents' options.
// Every setting of each tuned agent's grid ran on the tuning seeds; the
// setting with the highest mean violation rate over them was chosen (the
// first in grid order on a tie), and the experiment's agents then ran with
// the chosen options on the evaluation seeds, which the tuning never saw.
type Tuning struct {
	// TuneSeeds and EvalSeeds are disjoint.
	TuneSeeds []uint64 `json:"tune_seeds"`
	EvalSeeds []uint64 `json:"evaluation_seeds"`
	// Metric is what the choice maximised ("violation rate": the mean over
	// the tuning seeds of each run's violations / iterations).
	Metric string       `json:"metric"`
	Agents []TunedAgent `json:"agents"`
}

// TunedAgent is one agent's grid and the runs of each of its settings.
type TunedAgent struct {
	// ID is the agent's id (its results folder), Name its kind.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Fixed are the options the configuration sets outside the grid.
	Fixed map[string]string `json:"fixed_options,omitempty"`
	// Grid lists each tuned option's values, in the order given.
	Grid map[string][]string `json:"grid"`
	// Settings are the grid's points, the last option varying fastest
	// (options in ascending key order).
	Settings []TuneSetting `json:"settings"`
	// Chosen is the index of the chosen setting.
	Chosen int `json:"chosen"`
}

// TuneSetting is one point of a grid and its result on the tuning seeds.
type TuneSetting struct {
	// Options are the grid's options at this point (Fixed not repeated).
	Options map[string]string `json:"options"`
	// Rates are the runs' violation rates, one per tuning seed in
	// TuneSeeds order.
	Rates []float64 `json:"rates"`
}

// check validates a decoded tune.json.
func (t Tuning) check() error {
	eval := map[uint64]bool{}
	for _, s := range t.EvalSeeds {
		eval[s] = true
	}
	for _, s := range t.TuneSeeds {
		if eval[s] {
			return fmt.Errorf("seed %d is both a tuning and an evaluation seed", s)
		}
	}
	for _, a := range t.Agents {
		if a.Chosen < 0 || a.Chosen >= len(a.Settings) {
			return fmt.Errorf("agent %s: chosen setting %d of %d", a.ID, a.Chosen, len(a.Settings))
		}
		for i, s := range a.Settings {
			if len(s.Rates) != len(t.TuneSeeds) {
				return fmt.Errorf("agent %s, setting %d: %d rates for %d tuning seeds", a.ID, i, len(s.Rates), len(t.TuneSeeds))
			}
		}
	}
	return nil
}

// WriteTuning writes t as indented JSON to path, atomically.
func WriteTuning(path string, t Tuning) error {
	return writeJSON(path, t, "  ")
}

// ReadTuning reads a tune.json and checks that it is consistent: disjoint
// seed sets, one rate per tuning seed, a chosen setting that exists.
func ReadTuning(path string) (Tuning, error) {
	return readChecked[Tuning](path)
}
