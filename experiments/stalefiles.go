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
