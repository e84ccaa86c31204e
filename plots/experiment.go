package plots

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/amt-dev/amt/experiments/record"
)

// Experiment is everything read from one experiment's result folder (see
// package record for its layout):
//
//	results/<experiment>/run.json               what ran (optional)
//	results/<experiment>/sweep.csv              exhaustive verdict table (optional)
//	results/<experiment>/<agent>/summary.json   final state of every seed's run
//	results/<experiment>/<agent>/seed-<n>.jsonl progress log of seed n (optional)
//	results/<experiment>/<agent>/timing.json    measured times (optional)
//	results/<experiment>/config.yaml            the experiment's config (optional, quoted verbatim)
type Experiment struct {
	Name string // folder name
	Dir  string
	// Meta is the run metadata; nil when the folder has no run.json (then
	// the report says what it cannot tell).
	Meta *record.Meta
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

// Load reads an experiment's result folder. configFile, when not empty, is
// the experiment's YAML config to quote in the report; otherwise
// dir/config.yaml (or config.yml) is used when present. The config is only
// quoted, never parsed: what ran comes from run.json. It fails when the
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
	mp := filepath.Join(dir, record.MetaFile)
	if _, err := os.Stat(mp); err == nil {
		m, err := record.ReadMeta(mp)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		e.Meta = &m
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("plots: %w", err)
	}
	vp := filepath.Join(dir, record.VerdictsFile)
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
		if !en.IsDir() || en.Name() == record.FiguresDir || en.Name() == record.TablesDir {
			continue
		}
		sp := filepath.Join(dir, en.Name(), record.SummaryFile)
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
		return nil, fmt.Errorf("plots: %s holds no results: want %s or <agent>/%s", dir, record.VerdictsFile, record.SummaryFile)
	}
	if configFile == "" {
		for _, name := range []string{record.ConfigFile, "config.yml"} {
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
	s, err := record.ReadSummary(filepath.Join(dir, record.SummaryFile))
	if err != nil {
		return Agent{}, fmt.Errorf("plots: %w", err)
	}
	a := Agent{Name: filepath.Base(dir), Summary: s}
	if err := a.readTiming(filepath.Join(dir, record.TimingFile)); err != nil {
		return Agent{}, err
	}
	matches, err := filepath.Glob(filepath.Join(dir, record.LogGlob))
	if err != nil {
		return Agent{}, fmt.Errorf("plots: %w", err)
	}
	type seedFile struct {
		seed uint64
		path string
	}
	var files []seedFile
	for _, m := range matches {
		n, ok := record.ParseLogFile(filepath.Base(m))
		if !ok {
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
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	tf, err := record.ReadTiming(path)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if len(tf.Runs) != len(a.Summary.Runs) {
		return fmt.Errorf("plots: %s has %d runs, its %s %d", path, len(tf.Runs), record.SummaryFile, len(a.Summary.Runs))
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
