package plots

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/limits"
)

// Experiment is everything read from one experiment's result folder
// (package record's doc describes its layout): every file is optional but
// an agent folder's summary.json.
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
	// Tuning is how amt tune chose the agents' options; nil when the
	// folder has no tune.json.
	Tuning *record.Tuning
	// Regression is the SUT change of a regression experiment and
	// VerdictsAfter the exhaustive table of the SUT after it; nil when the
	// folder has no regression.json (VerdictsAfter: no sweep-after.csv).
	Regression    *record.Regression
	VerdictsAfter []record.Verdict
	// Corruption names a corruption report's reference SUT and
	// VerdictsReference is its exhaustive table; both nil when the folder
	// has no corruption.json.
	Corruption        *record.Corruption
	VerdictsReference []record.Verdict
	// Config is the folder's config.yaml, the snapshot of the
	// configuration the results were made with (verbatim); nil when the
	// folder has none.
	Config []byte
	// Unchecked lists the files whose run could not be checked (a
	// sweep.csv in a folder without run.json), for the report's caveats.
	Unchecked []string
	// Legacy is true for a folder written by an amt that did not record
	// run identities (no file carries one): it loads, but that its files
	// belong together could not be checked (a caveat of the report).
	Legacy bool
}

// Agent is one agent folder of an experiment.
type Agent struct {
	// Name is the folder name, which tells apart agents of the same kind
	// with different options (ablations); Summary.Agent is the agent's id
	// (the folder name under amt run, the kind under amt replay), and
	// Experiment.Kind its kind.
	Name    string
	Summary record.Summary
	// Logs are the progress logs in ascending seed order (may be empty).
	Logs [][]record.LogLine
	// TimesFromFile is set when the runs' times were filled in from the
	// agent's timing.json because summary.json had none (replay runs keep
	// measured times out of the byte-reproducible summary).
	TimesFromFile bool
	// Timing is the agent's timing.json (nil when there is none): the
	// measured times of every run, with their components.
	Timing *record.Timing
}

// Kind is the agent's kind (the name of package bandit's agent table, as
// "cover" for an agent with id "cover-linear"): run.json's entry for the
// folder's configured id (a regression experiment's folder, such as
// cover-carried, names it in regression.json), else the summary's agent
// (what amt replay writes).
func (e *Experiment) Kind(a Agent) string {
	id := a.Name
	if e.Regression != nil {
		for _, r := range e.Regression.Agents {
			if r.ID == a.Name {
				id = r.Agent
				break
			}
		}
	}
	if e.Meta != nil {
		for _, m := range e.Meta.Agents {
			if m.ID == id && m.Name != "" {
				return m.Name
			}
		}
	}
	return a.Summary.Agent
}

// rerun is the advice of an error about files that do not belong together.
const rerun = "run amt run (or amt sweep) with the experiment's configuration again, or delete the stale file"

// Load reads an experiment's result folder and checks that its files
// belong together: every result file must carry run.json's identity
// (record.Identity; config.yaml must hash to its config_sha256, sweep.csv
// to its verdicts_sha256, each progress log to the sha256 its summary.json
// records) or, in a folder without run.json (amt replay's), all agents
// must carry the same one. A folder that mixes files of different runs is
// an error naming the file. A folder none of whose files carries an
// identity (written by an amt before they were recorded) loads with
// Legacy set; one that mixes such files with others is an error. It also
// fails when the folder holds neither a verdict table nor an agent
// summary, and names the file of any result that cannot be read. The configuration is only quoted, never parsed: what ran comes
// from run.json.
func Load(dir string) (*Experiment, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("plots: results folder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("plots: results folder %s is not a directory", dir)
	}
	e := &Experiment{Name: filepath.Base(filepath.Clean(dir)), Dir: dir}
	mp := filepath.Join(dir, record.MetaFile)
	if e.Meta, err = readOptional(mp, record.ReadMeta); err != nil {
		return nil, err
	}
	e.Legacy = e.Meta != nil && e.Meta.Identity.IsZero()
	cp := filepath.Join(dir, record.ConfigFile)
	if b, err := limits.ReadFile(cp, limits.JSONBytes); err == nil {
		if e.Meta != nil && !e.Legacy && record.SHA256(b) != e.Meta.ConfigSHA256 {
			return nil, fmt.Errorf("plots: %s is not the configuration of %s (its sha256 differs from config_sha256): it was edited or left by another run; %s", cp, mp, rerun)
		}
		e.Config = b
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("plots: %w", err)
	}
	vp := filepath.Join(dir, record.VerdictsFile)
	if b, err := limits.ReadFile(vp, limits.TableBytes); err == nil {
		switch {
		case e.Meta == nil:
			e.Unchecked = append(e.Unchecked, record.VerdictsFile)
		case e.Legacy: // the caveat covers every file
		case e.Meta.VerdictsSHA256 == "":
			return nil, fmt.Errorf("plots: %s is not recorded in %s: it was left by another run; %s", vp, mp, rerun)
		case record.SHA256(b) != e.Meta.VerdictsSHA256:
			return nil, fmt.Errorf("plots: %s is not the table recorded in %s (its sha256 differs from verdicts_sha256): it was edited or left by another run; %s", vp, mp, rerun)
		}
		if e.Verdicts, err = record.DecodeVerdictsCSV(bytes.NewReader(b), vp); err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		if len(e.Verdicts) == 0 {
			return nil, fmt.Errorf("plots: %s has a header but no rows", vp)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("plots: %w", err)
	}
	tp := filepath.Join(dir, record.TuneFile)
	if e.Tuning, err = readOptional(tp, record.ReadTuning); err != nil {
		return nil, err
	}
	rp := filepath.Join(dir, record.RegressionFile)
	if e.Regression, err = readOptional(rp, record.ReadRegression); err != nil {
		return nil, err
	}
	if e.Regression != nil {
		after, err := readOptional(filepath.Join(dir, record.VerdictsAfterFile), record.ReadVerdictsCSV)
		if err != nil {
			return nil, err
		}
		if after != nil {
			e.VerdictsAfter = *after
		}
	}
	if err := loadCorruption(e); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	// first is the summary whose identity the other agents must share
	// (in a folder without run.json).
	var first string
	for _, en := range entries { // ReadDir sorts by name
		if !en.IsDir() || en.Name() == record.FiguresDir || en.Name() == record.TablesDir || strings.HasPrefix(en.Name(), ".") {
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
		id := a.Summary.Identity
		if e.Meta == nil && len(e.Agents) == 0 {
			e.Legacy = id.IsZero()
		}
		switch {
		case e.Meta != nil && id != e.Meta.Identity:
			return nil, fmt.Errorf("plots: %s belongs to another run (%s) than %s (%s); %s", sp, id, mp, e.Meta.Identity, rerun)
		case e.Meta == nil && len(e.Agents) > 0 && id != e.Agents[0].Summary.Identity:
			return nil, fmt.Errorf("plots: %s belongs to another run (%s) than %s (%s); %s", sp, id, first, e.Agents[0].Summary.Identity, rerun)
		}
		if e.Meta != nil && !hasAgent(e.Meta, en.Name()) {
			return nil, fmt.Errorf("plots: %s is not an agent of %s (agents %s): it was left by another run; delete it", filepath.Join(dir, en.Name()), mp, agentIDs(e.Meta))
		}
		if first == "" {
			first = sp
		}
		e.Agents = append(e.Agents, a)
	}
	if e.Verdicts == nil && len(e.Agents) == 0 {
		return nil, fmt.Errorf("plots: %s holds no results: want %s or <agent>/%s", dir, record.VerdictsFile, record.SummaryFile)
	}
	return e, nil
}

func hasAgent(m *record.Meta, id string) bool {
	for _, a := range m.Agents {
		if a.ID == id {
			return true
		}
	}
	return false
}

func agentIDs(m *record.Meta) string {
	var ids []string
	for _, a := range m.Agents {
		ids = append(ids, a.ID)
	}
	return strings.Join(ids, ", ")
}

// loadAgent reads an agent folder and checks that its files belong to the
// run of its summary.json: timing.json carries the same identity, and the
// progress logs are exactly those the summary lists, with their sha256.
func loadAgent(dir string) (Agent, error) {
	sp := filepath.Join(dir, record.SummaryFile)
	s, err := record.ReadSummary(sp)
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
	for name := range s.Logs {
		if _, ok := record.ParseLogFile(name); !ok {
			return Agent{}, fmt.Errorf("plots: %s lists %q as a progress log: want seed-<n>.jsonl", sp, name)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return Agent{}, fmt.Errorf("plots: %s lists the progress log %s, which is missing: %v", sp, name, err)
		}
	}
	for _, f := range files {
		b, err := limits.ReadFile(f.path, limits.LogBytes)
		if err != nil {
			return Agent{}, fmt.Errorf("plots: %w", err)
		}
		// An older amt's summary lists no logs: nothing to check them
		// against (Load says so).
		if want, ok := s.Logs[filepath.Base(f.path)]; !s.Identity.IsZero() && !ok {
			return Agent{}, fmt.Errorf("plots: %s is not a log of the run of %s: it was left by another run; %s", f.path, sp, rerun)
		} else if ok && record.SHA256(b) != want {
			return Agent{}, fmt.Errorf("plots: %s is not the log %s records (its sha256 differs): it was edited or left by another run; %s", f.path, sp, rerun)
		}
		lines, err := record.DecodeLog(bytes.NewReader(b), f.path)
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

// readTiming reads timing.json into a.Timing, checks that it belongs to
// the summary's run and fills in the runs' times from it when summary.json
// has none. A missing file is not an error.
func (a *Agent) readTiming(path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	tf, err := record.ReadTiming(path)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if tf.Identity != a.Summary.Identity {
		return fmt.Errorf("plots: %s belongs to another run (%s) than its %s (%s); %s", path, tf.Identity, record.SummaryFile, a.Summary.Identity, rerun)
	}
	if len(tf.Runs) == 0 { // not timed
		return nil
	}
	if len(tf.Runs) != len(a.Summary.Runs) {
		return fmt.Errorf("plots: %s has %d runs, its %s %d", path, len(tf.Runs), record.SummaryFile, len(a.Summary.Runs))
	}
	for i, r := range tf.Runs {
		for _, v := range []float64{r.MeanIterationMS, r.MeanDecisionUS, r.MeanLoadMS, r.MeanFeaturesMS, r.MeanChooseUS, r.MeanEvaluateMS, r.MeanUpdateUS} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("plots: %s: run %d: a time of %v is not a duration", path, i+1, v)
			}
		}
	}
	a.Timing = &tf
	timed := a.Summary.MeanDecisionUS > 0
	for _, r := range a.Summary.Runs {
		timed = timed || r.MeanIterationMS > 0
	}
	if timed {
		return nil
	}
	for i, r := range tf.Runs {
		a.Summary.Runs[i].MeanIterationMS = r.MeanIterationMS
	}
	a.Summary.MeanDecisionUS = tf.MeanDecisionUS
	a.TimesFromFile = true
	return nil
}

// loadCorruption reads a corruption report's corruption.json and the
// reference SUT's table it records (by sha256), when the folder has them.
func loadCorruption(e *Experiment) error {
	cp := filepath.Join(e.Dir, record.CorruptionFile)
	c, err := readOptional(cp, record.ReadCorruption)
	if err != nil || c == nil {
		return err
	}
	if e.Meta != nil && !e.Legacy && c.Identity != e.Meta.Identity {
		return fmt.Errorf("plots: %s belongs to another run (%s) than %s (%s); %s", cp, c.Identity, record.MetaFile, e.Meta.Identity, rerun)
	}
	vp := filepath.Join(e.Dir, record.VerdictsReferenceFile)
	b, err := os.ReadFile(vp)
	if err != nil {
		return fmt.Errorf("plots: %s names a reference SUT but its table cannot be read: %w", cp, err)
	}
	if record.SHA256(b) != c.VerdictsSHA256 {
		return fmt.Errorf("plots: %s is not the table recorded in %s (its sha256 differs from verdicts_sha256); %s", vp, cp, rerun)
	}
	if e.VerdictsReference, err = record.DecodeVerdictsCSV(bytes.NewReader(b), vp); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	e.Corruption = c
	return nil
}

// readOptional reads the result file at path with read, or returns nil
// when there is none; other errors (a stat's or read's) are errors.
func readOptional[T any](path string, read func(string) (T, error)) (*T, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	v, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	return &v, nil
}
