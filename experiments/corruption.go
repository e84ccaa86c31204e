package experiments

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
)

// CorruptionConfig is the corruption section of a configuration: the
// experiment is a corruption report (issue #37) on the common corruptions
// of Hendrycks & Dietterich (ICLR 2019, ImageNet-C/CIFAR-10-C; the
// corruptions scenarios). Its sweep also sweeps Reference, the model the
// corruption errors are normalised by (CE_c = Σ_s E_{s,c} / Σ_s E^ref_{s,c},
// mCE their mean over corruptions), into sweep-reference.csv, and its runs
// count every follow-up's top-1 error besides its violation
// (record.Run.ParamErrors), so amt plot can set an agent's estimate of
// the error profile against the exhaustive one.
type CorruptionConfig struct {
	// Reference is the reference SUT (in the paper AlexNet; here a model
	// of the configuration's data, such as ResNet-20 for CIFAR-10); without
	// a model there is no corruption report.
	Reference SUTConfig
	// Audit is the share of every run's follow-ups spent on an audit
	// sample (as amt check's check.audit: a uniform arm, then a uniform
	// value, whatever the context and the verdicts; the agent chooses the
	// others and never sees them). A run with one estimates the error
	// profile from its audit follow-ups alone — a uniform sample, so
	// unbiased — while the agent seeks violations with the rest; without
	// one the estimate comes from the agent's own follow-ups, which an
	// agent that seeks violations biases towards the worst corruptions.
	Audit float64
}

// CorruptionReport reports whether the configuration is a corruption
// report.
func (c *Config) CorruptionReport() bool { return c.Corruption.Reference.Model != "" }

// corruptionSection checks the corruption section against the keys read
// before it.
func corruptionSection(c *Config) string {
	switch {
	case c.CaseStudy != "classification":
		return "a corruption report measures top-1 errors: it needs case_study classification"
	case !strings.HasPrefix(c.Scenario.Name, "corruptions"):
		return fmt.Sprintf("a corruption report needs a corruptions scenario (action_set: corruptions or corruptions-flat), not %q", c.Scenario.Name)
	case c.Regressing():
		return "a corruption report compares two SUTs on the same images, not one after the other: leave regression out"
	}
	return ""
}

// ReferenceTable returns the table of a corruption report's reference SUT
// once Sweep has computed it, and nil otherwise.
func (e *Experiment) ReferenceTable() *Table { return e.referenceTable }

// writeReferenceFiles writes a corruption report's reference table
// (ReferenceTable, which sweepTables computed), its scenario's rows, to
// Output/sweep-reference.csv and names the model in Output/corruption.json.
// A reference equal to the SUT costs nothing: its sweep is the SUT's,
// cached under the same keys.
func (e *Experiment) writeReferenceFiles() error {
	sum, err := writeTableCSV(e.referenceTable, filepath.Join(e.Config.Output, record.VerdictsReferenceFile), e.Config.Scenario.Variants())
	if err != nil {
		return err
	}
	c := record.Corruption{Identity: e.id, VerdictsSHA256: sum,
		Reference: record.File{Path: e.reference.Config.SUT.Model, SHA256: e.reference.modelHash}}
	return record.WriteCorruption(filepath.Join(e.Config.Output, record.CorruptionFile), c)
}
