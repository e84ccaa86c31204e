package experiments

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
)

// removeStaleFiles removes a tune.json left by an earlier amt tune, and
// the files of an earlier regression experiment unless this is one: they
// would describe other runs.
func (e *Experiment) removeStaleFiles() error {
	stale := []string{record.TuneFile}
	if !e.Config.Regressing() {
		stale = append(stale, record.RegressionFile, record.VerdictsAfterFile)
	}
	if !e.Config.CorruptionReport() {
		stale = append(stale, record.CorruptionFile, record.VerdictsReferenceFile)
	}
	for _, f := range stale {
		if err := os.Remove(filepath.Join(e.Config.Output, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// removeStaleAgents deletes the agent folders of the results folder that
// no agent of the configuration writes (an agent removed or renamed since
// an earlier run into the same folder), so that they are not read as
// results of this run. Only folders holding nothing but result files
// (summary.json, timing.json, seed-<n>.jsonl) are removed, each with a
// line to log; any other folder is left, and amt plot names it.
func (e *Experiment) removeStaleAgents(log io.Writer) error {
	out := e.Config.Output
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("results folder: %w", err)
	}
	agents := map[string]bool{record.FiguresDir: true, record.TablesDir: true}
	for _, a := range e.Config.Agents {
		agents[a.ID] = true
	}
	for _, en := range entries {
		if !en.IsDir() || agents[en.Name()] || strings.HasPrefix(en.Name(), ".") {
			continue
		}
		dir := filepath.Join(out, en.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("results folder: %w", err)
		}
		results := len(files) > 0
		for _, f := range files {
			results = results && f.Type().IsRegular() && record.IsAgentFile(f.Name())
		}
		if !results {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("removing the stale agent folder %s: %w", dir, err)
		}
		fmt.Fprintf(log, "%s: removed %s, an earlier run's: no agent of the configuration writes it\n", e.Config.Name, dir)
	}
	return nil
}

// meta returns the experiment's run metadata (run.json).
func (e *Experiment) meta() record.Meta {
	cfg := e.Config
	m := record.Meta{
		Identity:   e.id,
		Experiment: cfg.Name, Description: cfg.Description, CaseStudy: cfg.CaseStudy, Mode: cfg.Mode,
		SUT:      record.File{Path: cfg.SUT.Model, SHA256: e.modelHash},
		Features: record.FeaturesMeta{Kind: cfg.Features.kind()},
		Data:     record.DataMeta{Format: cfg.Data.Format, File: record.File{Path: cfg.Data.Path, SHA256: e.dataHash}, Images: e.src.Len(), Classes: e.classes},
		Scenario: record.DescribeScenario(cfg.Scenario),
		Seeds:    cfg.Seeds, Passes: cfg.Passes, Iterations: cfg.Iterations,
		Version: record.Version(),
	}
	if m.Iterations == 0 {
		m.Iterations = (cfg.Passes + cfg.Regression.Passes) * e.src.Len()
	}
	if cfg.Features.Model != "" {
		m.Features.Model = &record.File{Path: cfg.Features.Model, SHA256: e.featHash}
		m.Features.Output = cfg.Features.Output
	}
	for _, a := range cfg.Agents {
		if !cfg.Regressing() {
			m.Agents = append(m.Agents, record.AgentMeta{ID: a.ID, Name: a.Name, Options: a.Options})
			continue
		}
		for _, state := range []string{record.Carried, record.Fresh} {
			m.Agents = append(m.Agents, record.AgentMeta{ID: regressionID(a.ID, state), Name: a.Name, Options: a.Options})
		}
	}
	return m
}

// upToDate reports whether the results folder already holds this run, so
// that amt run has nothing to do: its run stamp (record.RunStamp, which
// Run writes last) names the experiment's identity (the configuration's
// bytes, the inputs' hashes, the sweep) and the same amt executable
// (record.Build), run.json has that identity, and every agent's folder
// holds the summary of all the configured seeds with it. Same
// configuration, inputs, code and seeds give the same results
// (timing.json aside). Never for a run that continues saved states, logs
// decisions, or is a regression or corruption experiment.
func (e *Experiment) upToDate() bool {
	cfg := e.Config
	if e.build == "" || cfg.State != "" || e.LogDecisions || cfg.Regressing() || cfg.CorruptionReport() {
		return false
	}
	st, err := record.ReadRunStamp(filepath.Join(cfg.Output, record.RunStampFile))
	if err != nil || st.Identity != e.id || st.Build != e.build {
		return false
	}
	m, err := record.ReadMeta(filepath.Join(cfg.Output, record.MetaFile))
	if err != nil || m.Identity != e.id || len(m.Agents) != len(cfg.Agents) {
		return false
	}
	for _, a := range cfg.Agents {
		s, err := record.ReadSummary(filepath.Join(cfg.Output, a.ID, record.SummaryFile))
		if err != nil || s.Identity != e.id || len(s.Runs) != len(cfg.Seeds) {
			return false
		}
	}
	return true
}

// writeRunStamp writes the results folder's run stamp (see upToDate), the
// last step of a complete run; nothing when amt's build is unknown.
func (e *Experiment) writeRunStamp() error {
	if e.build == "" {
		return nil
	}
	return record.WriteRunStamp(filepath.Join(e.Config.Output, record.RunStampFile), record.RunStamp{Identity: e.id, Build: e.build})
}

// writeRunFiles writes the configuration's snapshot config.yaml and
// run.json into the results folder; verdictsSHA256 is the sha256 of the
// folder's sweep.csv, "" for none.
func (e *Experiment) writeRunFiles(verdictsSHA256 string) error {
	out := e.Config.Output
	if err := record.WriteFileAtomic(filepath.Join(out, record.ConfigFile), e.Config.doc); err != nil {
		return err
	}
	m := e.meta()
	m.VerdictsSHA256 = verdictsSHA256
	return record.WriteMeta(filepath.Join(out, record.MetaFile), m)
}

// startFolder readies the results folder for the agents' runs: with
// runFiles it keeps the folder's sweep.csv if it is this experiment's
// (keepVerdicts) and writes config.yaml and run.json (writeRunFiles);
// then it removes the folders of agents the configuration no longer has
// (removeStaleAgents).
func (e *Experiment) startFolder(log io.Writer, runFiles bool) error {
	if runFiles {
		sum, err := e.keepVerdicts()
		if err != nil {
			return err
		}
		if err := e.writeRunFiles(sum); err != nil {
			return err
		}
	}
	return e.removeStaleAgents(log)
}

// keepVerdicts returns the sha256 of the results folder's sweep.csv when it
// belongs to this experiment (an earlier amt sweep of the same
// configuration wrote it, as run.json says), so that an online run keeps
// it; otherwise it removes a stale sweep.csv and returns "".
func (e *Experiment) keepVerdicts() (string, error) {
	out := e.Config.Output
	csv := filepath.Join(out, record.VerdictsFile)
	if _, err := os.Stat(csv); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if m, err := record.ReadMeta(filepath.Join(out, record.MetaFile)); err == nil && m.Identity == e.id && m.VerdictsSHA256 != "" {
		if sum, err := record.FileSHA256(csv); err == nil && sum == m.VerdictsSHA256 {
			return sum, nil
		}
	}
	if err := os.Remove(csv); err != nil {
		return "", fmt.Errorf("removing the stale %s: %w", csv, err)
	}
	return "", nil
}
