package record

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/scenario"
)

// The files amt check adds to a result folder, and the gallery that amt run
// draws too:
//
//	check.json                  the gate's decision (Check), written by amt check
//	summary.md                  the decision for a CI job summary (plots.WriteCheckReports)
//	junit.xml                   the decision as JUnit XML (plots.WriteCheckReports)
//	<agent>/violations.jsonl    violating follow-ups (Violation per line)
//	gallery/<agent>/<mr>.png    contact sheets of violating cases, one per MR
//
// amt check keeps every violation of its session in violations.jsonl; amt
// run keeps the first few of each MR of every agent's first seed (the
// gallery's cases).
const (
	CheckFile        = "check.json"
	CheckSummaryFile = "summary.md"
	JUnitFile        = "junit.xml"
	ViolationsFile   = "violations.jsonl"
	GalleryDir       = "gallery"
)

// GalleryFile returns the contact sheet of an agent's violations of one
// MR, relative to the result folder, with forward slashes (it is also the
// link in the reports): "gallery/cover/rotation.png".
func GalleryFile(agent, mr string) string { return path.Join(GalleryDir, agent, mr+".png") }

// Verdicts of a check.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
)

// Status of one condition of a check.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusSkipped = "skipped" // nothing to judge: the MR was not tried (in both runs)
)

// Condition kinds.
const (
	// ConditionRate: the session's overall violation rate must not exceed
	// Limit.
	ConditionRate = "violation_rate"
	// ConditionMRRate: MR's violation rate must not exceed Limit.
	ConditionMRRate = "mr_rate"
	// ConditionRegression: MR's violation rate must not have risen by more
	// than Limit percentage points over the baseline's, with statistical
	// support (P after Holm's adjustment at most Alpha).
	ConditionRegression = "regression"
)

// Violation is one violating follow-up found by a run: a line of
// <agent>/violations.jsonl.
type Violation struct {
	Seed      uint64 `json:"seed"`
	Iteration int    `json:"iteration"` // 1-based, in the run
	// Image is the case's index in the data set; ID the data set's own id
	// of it (COCO image id; = Image otherwise).
	Image int   `json:"image"`
	ID    int64 `json:"id"`
	// Name is the image's file name in an image folder data set; "" for
	// the others, whose images have no file of their own.
	Name string `json:"name,omitempty"`
	// Variant is the follow-up's key ("rotation:-30", "blur"); MR its
	// relation.
	Variant string `json:"variant"`
	MR      string `json:"mr"`
	// PredOriginal and PredTransformed are a classifier's top-1 classes on
	// the source and the follow-up, Label the source's label; −1 when
	// unknown (always for detection).
	PredOriginal    int `json:"pred_original"`
	PredTransformed int `json:"pred_transformed"`
	Label           int `json:"label"`
	// ScoreOriginal and ScoreTransformed are the SUT's scores (Run's
	// OriginalScore and ModifiedScore of this iteration): 1/0 correctness
	// for classification, the per-image COCO AP for detection.
	ScoreOriginal    float64 `json:"score_original"`
	ScoreTransformed float64 `json:"score_transformed"`
}

// Param returns the follow-up's parameter value; ok is false for a
// relation without one.
func (v Violation) Param() (value float64, ok bool) {
	_, value, ok = scenario.ParseKey(v.Variant)
	return value, ok
}

// VariantText writes a follow-up key of the scenario for people, with its
// parameter's unit: "rotation −30°", "blur", "brightness 40 levels".
func (m ScenarioMeta) VariantText(key string) string {
	action, value, ok := scenario.ParseKey(key)
	if !ok {
		return key
	}
	num := strings.Replace(scenario.FormatValue(value), "-", "−", 1)
	switch unit := m.Params[action].Unit; unit {
	case "degrees":
		return action + " " + num + "°"
	case "":
		return action + " " + num
	default:
		return action + " " + num + " " + unit
	}
}

// WriteViolations writes vs as JSON lines to path, atomically.
func WriteViolations(path string, vs []Violation) error {
	return writeLines(path, vs)
}

// ReadViolations reads a violations.jsonl; unknown fields are errors.
func ReadViolations(path string) ([]Violation, error) {
	b, err := limits.ReadFile(path, limits.LogBytes)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	var out []Violation
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v Violation
		if err := decodeStrict(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("record: %s:%d: %w", path, n, err)
		}
		if v.Variant == "" || v.MR == "" || v.Image < 0 || v.Iteration < 1 {
			return nil, fmt.Errorf("record: %s:%d: want a variant, an MR, an image ≥ 0 and an iteration ≥ 1", path, n)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("record: %s: %w", path, err)
	}
	return out, nil
}

// Check is the content of check.json: what amt check ran and decided.
type Check struct {
	// Verdict is VerdictPass or VerdictFail.
	Verdict string `json:"verdict"`
	// Agent is the agent's id (its folder), Seed the run's seed.
	Agent string `json:"agent"`
	Seed  uint64 `json:"seed"`
	// Budget is the iteration budget; TimeBudget the wall-clock budget
	// ("" for none, else a Go duration such as "1m0s").
	Budget     int    `json:"budget"`
	TimeBudget string `json:"time_budget,omitempty"`
	// Iterations and Violations are what the session did and found;
	// StoppedBy says why it ended: "budget" or "time".
	Iterations int    `json:"iterations"`
	Violations int    `json:"violations"`
	StoppedBy  string `json:"stopped_by"`
	// Audit is the share of the budget spent on the audit sample
	// (check.audit), AuditIterations the audit follow-ups the session
	// made: the regression conditions compare them with the baseline's.
	Audit           float64 `json:"audit"`
	AuditIterations int     `json:"audit_iterations"`
	// State is the agent state file, when the check keeps one.
	State *CheckState `json:"state,omitempty"`
	// Baseline is the previous results the regression conditions compare
	// with; nil without one.
	Baseline *CheckBaseline `json:"baseline,omitempty"`
	// Conditions are the conditions judged, in order: the overall rate,
	// the MR rates, the regressions.
	Conditions []Condition `json:"conditions"`
	// MRs are the scenario's relations with their counts, in scenario
	// order.
	MRs []CheckMR `json:"mrs"`
}

// CheckState is the agent state a check continued from and saved.
type CheckState struct {
	Path string `json:"path"`
	// Loaded is true when the check continued from a state saved by an
	// earlier run, false when it started a new agent.
	Loaded bool `json:"loaded"`
}

// CheckBaseline is the result folder a check compared with.
type CheckBaseline struct {
	Dir        string `json:"dir"`
	Experiment string `json:"experiment"`
	SUT        File   `json:"sut"`
	// Runs and Iterations count the baseline's runs (agents × seeds) and
	// their iterations, pooled.
	Runs       int `json:"runs"`
	Iterations int `json:"iterations"`
	// Alpha is the significance level and MarginPP the tolerated rise in
	// percentage points of the regression conditions.
	Alpha    float64 `json:"alpha"`
	MarginPP float64 `json:"margin_pp"`
}

// Condition is one pass/fail condition of a check and how it came out.
type Condition struct {
	// Kind is ConditionRate, ConditionMRRate or ConditionRegression; MR
	// the relation it is about ("" for the overall rate).
	Kind string `json:"kind"`
	MR   string `json:"mr,omitempty"`
	// Limit is the highest passing rate (a fraction) or, for a
	// regression, the tolerated rise in percentage points.
	Limit float64 `json:"limit"`
	// Value is the observed rate, or for a regression the rise in
	// percentage points (stratified by parameter value).
	Value float64 `json:"value"`
	// Count is the number of follow-ups the value is computed from.
	Count int `json:"count"`
	// P is a regression's one-sided p-value, PAdjusted the same after
	// Holm's adjustment over the MRs compared.
	P         float64 `json:"p,omitempty"`
	PAdjusted float64 `json:"p_adjusted,omitempty"`
	// Status is StatusPass, StatusFail or StatusSkipped.
	Status string `json:"status"`
	// Message says it in one line.
	Message string `json:"message"`
}

// CheckMR is one relation's counts in a check, and in its baseline.
type CheckMR struct {
	MR string `json:"mr"`
	Counts
	// Baseline is the baseline's counts (zero without a baseline).
	Baseline Counts `json:"baseline"`
	// Failed is true when a condition on this MR failed.
	Failed bool `json:"failed"`
}

// check validates a decoded check.
func (c Check) check() error {
	if c.Verdict != VerdictPass && c.Verdict != VerdictFail {
		return fmt.Errorf("verdict %q, want %s or %s", clip(c.Verdict), VerdictPass, VerdictFail)
	}
	if err := (Counts{Count: c.Iterations, Violations: c.Violations}).Check(); err != nil {
		return fmt.Errorf("iterations: %w", err)
	}
	if err := CheckName(c.Agent); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	for i, m := range c.MRs {
		if err := m.Counts.Check(); err != nil {
			return fmt.Errorf("mrs[%d] (%s): %w", i, clip(m.MR), err)
		}
		if err := m.Baseline.Check(); err != nil {
			return fmt.Errorf("mrs[%d] (%s): baseline: %w", i, clip(m.MR), err)
		}
	}
	return nil
}

// WriteCheck writes c as indented JSON to path, atomically.
func WriteCheck(path string, c Check) error {
	return writeJSON(path, c, "  ")
}

// ReadCheck reads a check.json; unknown fields are errors.
func ReadCheck(path string) (Check, error) {
	return readChecked[Check](path)
}
