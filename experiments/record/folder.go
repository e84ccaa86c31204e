package record

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/scenario"
)

// The names of the files of an experiment's result folder (the package
// doc describes the layout). Writers and readers use these names; nobody
// else spells them.
const (
	MetaFile     = "run.json"
	ConfigFile   = "config.yaml"
	VerdictsFile = "sweep.csv"
	SummaryFile  = "summary.json"
	TimingFile   = "timing.json"
	ReportFile   = "report.md"
	FiguresDir   = "figures"
	TablesDir    = "tables"
	// LogGlob matches the progress logs of an agent folder.
	LogGlob = "seed-*.jsonl"
)

// LogFile returns the name of seed's progress log ("seed-3.jsonl").
func LogFile(seed uint64) string { return "seed-" + strconv.FormatUint(seed, 10) + ".jsonl" }

// ParseLogFile returns the seed of a progress log's name; ok is false for
// a name that is not seed-<n>.jsonl.
func ParseLogFile(name string) (seed uint64, ok bool) {
	s, ok1 := strings.CutPrefix(name, "seed-")
	s, ok2 := strings.CutSuffix(s, ".jsonl")
	n, err := strconv.ParseUint(s, 10, 64)
	return n, ok1 && ok2 && err == nil
}

// RunTiming holds one run's measured wall times, means per iteration.
type RunTiming struct {
	// MeanDecisionUS is the mean time of choose + update in microseconds.
	MeanDecisionUS float64 `json:"mean_decision_us"`
	// MeanIterationMS is the mean time of an iteration in milliseconds as
	// the original timed it (act + step + update): the context features
	// (only for agents that read them; the original's random agent
	// computed none), the choice, the evaluation of the follow-up
	// (transform and SUT on source and follow-up, or the table lookup)
	// and the update — not loading the source image.
	MeanIterationMS float64 `json:"mean_iteration_ms"`
	// The components: loading the source image (outside the iteration's
	// time), the features, the choice, the evaluation, the update.
	MeanLoadMS     float64 `json:"mean_load_ms"`
	MeanFeaturesMS float64 `json:"mean_features_ms"`
	MeanChooseUS   float64 `json:"mean_choose_us"`
	MeanEvaluateMS float64 `json:"mean_evaluate_ms"`
	MeanUpdateUS   float64 `json:"mean_update_us"`
}

// Timing is the content of timing.json: measured times per seed and their
// means. It is the one result file that is not reproducible.
type Timing struct {
	Identity
	Agent          string      `json:"agent"`
	MeanDecisionUS float64     `json:"mean_decision_us"`
	MeanIterMS     float64     `json:"mean_iteration_ms"`
	Runs           []RunTiming `json:"runs"`
}

// WriteTiming writes t as indented JSON to path, atomically.
func WriteTiming(path string, t Timing) error {
	return writeJSON(path, t, "  ")
}

// ReadTiming reads a timing.json.
func ReadTiming(path string) (Timing, error) {
	return readJSON[Timing](path, limits.JSONBytes)
}

// Meta is the content of run.json: what an experiment ran, written by the
// runner before any result, so that readers (the plots) need not parse the
// configuration to learn it.
type Meta struct {
	// Identity is the run's; every other result file of the folder must
	// carry the same (see Identity).
	Identity
	// VerdictsSHA256 is the sha256 of the folder's sweep.csv, "" when the
	// run wrote none.
	VerdictsSHA256 string `json:"verdicts_sha256,omitempty"`
	Experiment     string `json:"experiment"`
	Description    string `json:"description,omitempty"`
	// CaseStudy is "classification" or "detection".
	CaseStudy string `json:"case_study"`
	// Mode is "online" or "replay".
	Mode     string       `json:"mode"`
	SUT      File         `json:"sut"`
	Features FeaturesMeta `json:"features"`
	Data     DataMeta     `json:"data"`
	Scenario ScenarioMeta `json:"scenario"`
	Agents   []AgentMeta  `json:"agents"`
	Seeds    []uint64     `json:"seeds"`
	Passes   int          `json:"passes"`
	// Iterations is the number of iterations of each run.
	Iterations int `json:"iterations"`
	// Version is amt's module version, "devel" for a build outside a
	// module version.
	Version string `json:"amt_version"`
}

// File is an input file and the sha256 of its content (of a folder: of
// its files' names and hashes; of a COCO data set: of the JSON's hash and
// the names and hashes of the images it lists, in its order).
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// FeaturesMeta is the context feature extractor.
type FeaturesMeta struct {
	// Kind is "model", "phash" or "none".
	Kind  string `json:"kind"`
	Model *File  `json:"model,omitempty"`
	// Output is the model's tensor the features come from (empty: its
	// graph output).
	Output string `json:"output,omitempty"`
}

// DataMeta is the data set.
type DataMeta struct {
	Format string `json:"format"`
	File
	// Images is the number of images used (after any limit).
	Images int `json:"images"`
	// Classes names the classes by class index (CIFAR-10's
	// batches.meta.txt, COCO's categories in ascending id, or sut.labels);
	// empty when the data set has none (image folders).
	Classes []string `json:"classes,omitempty"`
}

// AgentMeta is one agent of the experiment.
type AgentMeta struct {
	ID      string            `json:"id"`
	Name    string            `json:"name"`
	Options map[string]string `json:"options,omitempty"`
}

// ScenarioMeta describes the experiment's scenario.
type ScenarioMeta struct {
	Name string `json:"name"`
	// Objective names its rewards (scenario.ObjectiveByName).
	Objective string    `json:"objective"`
	Arms      []ArmMeta `json:"arms"`
	// Variants are the keys of its variants in canonical order: the rows
	// of sweep.csv, and what an agent of the scenario can choose.
	Variants []string `json:"variants"`
	// Params describe the parameter of each parametric action, by action.
	Params map[string]scenario.Param `json:"params,omitempty"`
}

// ArmMeta is one arm of a scenario.
type ArmMeta struct {
	Name   string    `json:"name"`
	Action string    `json:"action"`
	Values []float64 `json:"values,omitempty"`
}

// DescribeScenario returns the metadata of s.
func DescribeScenario(s scenario.Scenario) ScenarioMeta {
	m := ScenarioMeta{Name: s.Name, Objective: s.Objective.Name, Variants: s.Keys()}
	for _, a := range s.Arms {
		m.Arms = append(m.Arms, ArmMeta{Name: a.Name, Action: a.Action, Values: a.Values})
		if a.Param != (scenario.Param{}) {
			if m.Params == nil {
				m.Params = map[string]scenario.Param{}
			}
			m.Params[a.Action] = a.Param
		}
	}
	return m
}

// Version returns amt's module version from the build information, or
// "devel".
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Build returns the sha256 of the running amt executable ("" when it
// cannot be read): two runs of the same Build run the same code, whatever
// the VCS says (a results folder inside the checkout makes the tree
// "modified" as soon as a run writes it). It reads the executable once.
func Build() string {
	buildOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			return
		}
		f, err := os.Open(exe)
		if err != nil {
			return
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			buildSum = hex.EncodeToString(h.Sum(nil))
		}
	})
	return buildSum
}

var (
	buildOnce sync.Once
	buildSum  string
)

// RunStampFile, at the root of a results folder, says which run the
// folder's agent results are and which amt executable made them
// (RunStamp), so that amt run can tell it has nothing to do. It is
// bookkeeping, not a result: hidden, and not committed with the results.
const RunStampFile = ".amt-run.json"

// RunStamp is RunStampFile's content: the Identity of a complete amt run
// and the Build of the executable that made it.
type RunStamp struct {
	Identity
	Build string `json:"amt_build"`
}

// WriteRunStamp writes s as JSON to path, atomically.
func WriteRunStamp(path string, s RunStamp) error {
	return writeJSON(path, s, "")
}

// ReadRunStamp reads a RunStampFile.
func ReadRunStamp(path string) (RunStamp, error) {
	return readJSON[RunStamp](path, limits.JSONBytes)
}

// check validates a decoded run.json.
func (m Meta) check() error {
	if m.Scenario.Name == "" || len(m.Scenario.Variants) == 0 {
		return errors.New("missing scenario name or variants")
	}
	switch m.CaseStudy {
	case "classification", "detection":
	default:
		return fmt.Errorf("case_study %q, want classification or detection", clip(m.CaseStudy))
	}
	ids := map[string]bool{}
	for i, a := range m.Agents {
		if err := CheckName(a.ID); err != nil {
			return fmt.Errorf("agents[%d].id: %w", i, err)
		}
		if ids[a.ID] {
			return fmt.Errorf("agents[%d].id %q listed twice", i, a.ID)
		}
		ids[a.ID] = true
	}
	if m.Iterations < 0 || m.Iterations > limits.Counts || m.Passes < 0 {
		return fmt.Errorf("%d iterations of %d passes, want 0 to %d iterations and passes >= 0", m.Iterations, m.Passes, limits.Counts)
	}
	return nil
}

// WriteMeta writes m as indented JSON to path, atomically.
func WriteMeta(path string, m Meta) error {
	return writeJSON(path, m, "  ")
}

// ReadMeta reads a run.json; unknown fields are errors.
func ReadMeta(path string) (Meta, error) {
	return readChecked[Meta](path)
}

// CheckName reports whether s can name a file or folder inside a results
// folder (an agent id): not empty, not . or .., at most 255 bytes, without
// slashes, backslashes, spaces or control characters. A name read from a
// file is checked before it is joined to a path, so that a results folder
// cannot make amt read or write outside itself ("../../x").
func CheckName(s string) error {
	if s == "" || s == "." || s == ".." || len(s) > 255 {
		return fmt.Errorf("%q is not a plain name (empty, . or .., or longer than 255 bytes)", clip(s))
	}
	for _, r := range s {
		if r == '/' || r == '\\' || r == ' ' || r < 0x20 || r == 0x7f {
			return fmt.Errorf("%q is not a plain name: it contains %q", clip(s), r)
		}
	}
	return nil
}
