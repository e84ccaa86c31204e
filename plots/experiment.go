package plots

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
)

// File names inside an experiment's result folder.
const (
	// VerdictsFile is the exhaustive verdict table (the baseline).
	VerdictsFile = "sweep.csv"
	// SummaryFile is each agent's summary, in results/<experiment>/<agent>/.
	SummaryFile = "summary.json"
	// ReportFile is the report Render writes.
	ReportFile = "report.md"
	// FiguresDir and TablesDir hold Render's figures and tables.
	FiguresDir = "figures"
	TablesDir  = "tables"
)

// Experiment is everything read from one experiment's result folder:
//
//	results/<experiment>/sweep.csv             exhaustive verdict table (optional)
//	results/<experiment>/<agent>/summary.json  final state of every seed's run
//	results/<experiment>/<agent>/seed-<n>.jsonl progress log of seed n (optional)
//	results/<experiment>/config.yaml           the experiment's config (optional)
type Experiment struct {
	Name string // folder name
	Dir  string
	// Verdicts is the exhaustive table; nil when the folder has none.
	Verdicts []record.Verdict
	// Agents are the agent folders with a summary.json, sorted by name.
	Agents []Agent
	// Config is the experiment's YAML config (verbatim), ConfigFile its path;
	// both empty when none was found or given.
	Config     []byte
	ConfigFile string
}

// Agent is one agent folder of an experiment.
type Agent struct {
	// Name is the folder name, which tells apart agents of the same kind
	// with different options (ablations); Summary.Agent is the kind.
	Name    string
	Summary record.Summary
	// Logs are the progress logs in ascending seed order (may be empty).
	Logs [][]record.LogLine
	// TimesFromFile is set when the runs' times were filled in from the
	// agent's timing.json because summary.json had none (replay runs keep
	// measured times out of the byte-reproducible summary).
	TimesFromFile bool
}

// TimingFile is the agent folder's optional timing.json: measured times of
// each run, in the order of the summary's runs.
const TimingFile = "timing.json"

// timingFile is the part of timing.json that Load reads.
type timingFile struct {
	MeanDecisionUS float64 `json:"mean_decision_us"`
	Runs           []struct {
		MeanIterationMS float64 `json:"mean_iteration_ms"`
	} `json:"runs"`
}

// Load reads an experiment's result folder. configFile, when not empty, is
// the experiment's YAML config to quote in the report; otherwise
// dir/config.yaml (or config.yml) is used when present. It fails when the
// folder holds neither a verdict table nor an agent summary, and names the
// file of any result that cannot be read.
func Load(dir, configFile string) (*Experiment, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("plots: results folder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("plots: results folder %s is not a directory", dir)
	}
	e := &Experiment{Name: filepath.Base(filepath.Clean(dir)), Dir: dir}
	vp := filepath.Join(dir, VerdictsFile)
	if _, err := os.Stat(vp); err == nil {
		if e.Verdicts, err = record.ReadVerdictsCSV(vp); err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		if len(e.Verdicts) == 0 {
			return nil, fmt.Errorf("plots: %s has a header but no rows", vp)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("plots: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	for _, en := range entries { // ReadDir sorts by name
		if !en.IsDir() || en.Name() == FiguresDir || en.Name() == TablesDir {
			continue
		}
		sp := filepath.Join(dir, en.Name(), SummaryFile)
		if _, err := os.Stat(sp); err != nil {
			continue
		}
		a, err := loadAgent(filepath.Join(dir, en.Name()))
		if err != nil {
			return nil, err
		}
		e.Agents = append(e.Agents, a)
	}
	if e.Verdicts == nil && len(e.Agents) == 0 {
		return nil, fmt.Errorf("plots: %s holds no results: want %s or <agent>/%s", dir, VerdictsFile, SummaryFile)
	}
	if configFile == "" {
		for _, name := range []string{"config.yaml", "config.yml"} {
			if p := filepath.Join(dir, name); fileExists(p) {
				configFile = p
				break
			}
		}
	}
	if configFile != "" {
		if e.Config, err = os.ReadFile(configFile); err != nil {
			return nil, fmt.Errorf("plots: config: %w", err)
		}
		e.ConfigFile = configFile
	}
	return e, nil
}

func loadAgent(dir string) (Agent, error) {
	s, err := record.ReadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		return Agent{}, fmt.Errorf("plots: %w", err)
	}
	a := Agent{Name: filepath.Base(dir), Summary: s}
	if err := a.readTiming(filepath.Join(dir, TimingFile)); err != nil {
		return Agent{}, err
	}
	matches, err := filepath.Glob(filepath.Join(dir, "seed-*.jsonl"))
	if err != nil {
		return Agent{}, fmt.Errorf("plots: %w", err)
	}
	type seedFile struct {
		seed uint64
		path string
	}
	var files []seedFile
	for _, m := range matches {
		s := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "seed-"), ".jsonl")
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Agent{}, fmt.Errorf("plots: progress log %s: name is not seed-<n>.jsonl", m)
		}
		files = append(files, seedFile{n, m})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].seed < files[j].seed })
	for _, f := range files {
		lines, err := record.ReadLog(f.path)
		if err != nil {
			return Agent{}, fmt.Errorf("plots: %w", err)
		}
		if len(lines) == 0 {
			return Agent{}, fmt.Errorf("plots: progress log %s is empty", f.path)
		}
		a.Logs = append(a.Logs, lines)
	}
	return a, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// readTiming fills in the runs' times from timing.json when summary.json
// has none. A missing file is not an error.
func (a *Agent) readTiming(path string) error {
	timed := a.Summary.MeanDecisionUS > 0
	for _, r := range a.Summary.Runs {
		timed = timed || r.MeanIterationMS > 0
	}
	if timed {
		return nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	var tf timingFile
	if err := json.Unmarshal(b, &tf); err != nil {
		return fmt.Errorf("plots: %s: %w", path, err)
	}
	if len(tf.Runs) != len(a.Summary.Runs) {
		return fmt.Errorf("plots: %s has %d runs, its %s %d", path, len(tf.Runs), SummaryFile, len(a.Summary.Runs))
	}
	for i, r := range tf.Runs {
		if r.MeanIterationMS < 0 || math.IsNaN(r.MeanIterationMS) {
			return fmt.Errorf("plots: %s: run %d: mean_iteration_ms %v is not a duration", path, i+1, r.MeanIterationMS)
		}
		a.Summary.Runs[i].MeanIterationMS = r.MeanIterationMS
	}
	a.Summary.MeanDecisionUS = tf.MeanDecisionUS
	a.TimesFromFile = true
	return nil
}
