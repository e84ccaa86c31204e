package record

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/amt-dev/amt/internal/limits"
)

// Files of a gate power study's results folder (amt gate-power).
const (
	// GatePowerFile describes the study (GatePower).
	GatePowerFile = "study.json"
	// GatePowerOutcomesFile holds one line per CI cycle (GatePowerOutcome).
	GatePowerOutcomesFile = "outcomes.csv"
)

// GatePower describes a gate power study: what was replayed, so that the
// report can be drawn from it and the outcomes alone.
type GatePower struct {
	Experiment string `json:"experiment"`
	// Agent is the check agent (its name and options), Audit the audit
	// share of the adaptive+audit design, CheckAudit amt check's audit
	// share as configured (check.audit): the design the check runs.
	Agent        string            `json:"agent"`
	AgentOptions map[string]string `json:"agent_options,omitempty"`
	Audit        float64           `json:"audit"`
	CheckAudit   float64           `json:"check_audit"`
	// Alpha and MarginPP are the regression test's (check.regression).
	Alpha    float64 `json:"alpha"`
	MarginPP float64 `json:"margin_pp"`
	// Scenario is the action set; Relations its relations in order.
	Scenario  string   `json:"scenario"`
	Relations []string `json:"relations"`
	// Data, Images and Features are the sweeps' inputs; Models the
	// models of the pairs (by file name, with their sha256).
	Data     File   `json:"data"`
	Images   int    `json:"images"`
	Features string `json:"features"`
	Models   []File `json:"models"`
	// Pairs, Budgets, Methods and Cycles span the outcomes.
	Pairs   []GatePowerPair `json:"pairs"`
	Budgets []int           `json:"budgets"`
	Methods []string        `json:"methods"`
	Cycles  []uint64        `json:"cycles"`
}

// GatePowerPair is one model change of a study.
type GatePowerPair struct {
	Name string `json:"name"`
	// Old and New are the models' file names.
	Old    string `json:"old"`
	New    string `json:"new"`
	Reseed bool   `json:"reseed"`
	// Regressed is the relation the change regressed ("" for none).
	Regressed string `json:"regressed,omitempty"`
}

// GatePowerOutcome is the decision of one CI cycle's second check.
type GatePowerOutcome struct {
	Pair   string
	Method string
	Budget int
	Cycle  uint64
	// Failed are the relations whose regression condition failed (none:
	// the check passed).
	Failed []string
}

// WriteGatePower writes g as indented JSON to path, atomically.
func WriteGatePower(path string, g GatePower) error {
	return writeJSON(path, g, "  ")
}

// ReadGatePower reads a study's description.
func ReadGatePower(path string) (GatePower, error) {
	return readJSON[GatePower](path, limits.JSONBytes)
}

// gatePowerHeader is the header of outcomes.csv.
var gatePowerHeader = []string{"pair", "method", "budget", "cycle", "failed"}

// EncodeGatePowerOutcomes writes outcomes as CSV: pair, method, budget,
// cycle and the failing relations joined by ";" (empty: passed).
func EncodeGatePowerOutcomes(w io.Writer, outs []GatePowerOutcome) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(gatePowerHeader); err != nil {
		return err
	}
	for _, o := range outs {
		rec := []string{o.Pair, o.Method, strconv.Itoa(o.Budget), strconv.FormatUint(o.Cycle, 10), strings.Join(o.Failed, ";")}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteGatePowerOutcomes writes outcomes.csv atomically.
func WriteGatePowerOutcomes(path string, outs []GatePowerOutcome) error {
	var b bytes.Buffer
	if err := EncodeGatePowerOutcomes(&b, outs); err != nil {
		return fmt.Errorf("record: %s: %w", path, err)
	}
	return WriteFileAtomic(path, b.Bytes())
}

// ReadGatePowerOutcomes reads outcomes.csv.
func ReadGatePowerOutcomes(path string) ([]GatePowerOutcome, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = len(gatePowerHeader)
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("record: %s: %w", path, err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(gatePowerHeader, ",") {
		return nil, fmt.Errorf("record: %s: want the header %s", path, strings.Join(gatePowerHeader, ","))
	}
	var out []GatePowerOutcome
	for i, r := range recs[1:] {
		b, err1 := strconv.Atoi(r[2])
		c, err2 := strconv.ParseUint(r[3], 10, 64)
		if err1 != nil || err2 != nil || b <= 0 {
			return nil, fmt.Errorf("record: %s: line %d: budget %q and cycle %q must be a positive integer and a seed", path, i+2, r[2], r[3])
		}
		o := GatePowerOutcome{Pair: r[0], Method: r[1], Budget: b, Cycle: c}
		if r[4] != "" {
			o.Failed = strings.Split(r[4], ";")
		}
		out = append(out, o)
	}
	return out, nil
}
