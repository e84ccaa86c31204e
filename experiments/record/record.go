// Package record defines amt's result files, their names and their
// content, and reads and writes them: the run metadata (run.json: what ran,
// with which inputs and scenario), the per-agent summary (summary.json),
// the per-run progress logs (JSON lines, cumulative counts like the
// original Tetraband logs), the measured times (timing.json) and the
// exhaustive verdict table (CSV). The experiment runner writes them and the
// plots package reads them, so this package is the whole contract between
// the two (see folder.go for the folder's layout).
//
// Every writer is atomic (WriteFileAtomic, through internal/atomicfile): it
// writes a temporary file in the destination directory and renames it into
// place, so an interrupted run never leaves a half-written file behind.
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/amt-dev/amt/internal/atomicfile"
)

// Counts is how often an arm (or parameter) was chosen and how many of
// those choices revealed a violation.
type Counts struct {
	Count      int `json:"count"`
	Violations int `json:"violations"`
}

// Rate returns Violations/Count, or 0 when Count is 0.
func (c Counts) Rate() float64 {
	if c.Count == 0 {
		return 0
	}
	return float64(c.Violations) / float64(c.Count)
}

// Add returns the element-wise sum of c and o.
func (c Counts) Add(o Counts) Counts {
	return Counts{Count: c.Count + o.Count, Violations: c.Violations + o.Violations}
}

// Run is the final state of one agent run (one seed).
type Run struct {
	Seed       uint64 `json:"seed"`
	Iterations int    `json:"iterations"`
	Violations int    `json:"violations"`
	// Arms maps a main arm's name ("blur", "rotation", …) to its counts.
	Arms map[string]Counts `json:"arms"`
	// Params maps "mr:degrees" ("rotation:-90") to its counts; empty for
	// scenarios without parameterised arms.
	Params map[string]Counts `json:"params"`
	// Audit maps a variant key ("fliplr", "rotation:-30") to the counts of
	// the run's audit follow-ups (amt check's audit sample: drawn
	// uniformly, whatever the context and the verdicts); they are also
	// counted in Arms and Params. Absent when the run had none.
	Audit map[string]Counts `json:"audit,omitempty"`
	// OriginalScore and ModifiedScore are the summed SUT scores on the
	// source and follow-up inputs: 1/0 correctness for classification,
	// per-image mAP for detection (as the original's original_score and
	// modified_score). Divide by Iterations for the accuracy.
	OriginalScore float64 `json:"original_score"`
	ModifiedScore float64 `json:"modified_score"`
	// MeanIterationMS is the mean wall time of one iteration in
	// milliseconds as the original timed it (RunTiming.MeanIterationMS:
	// features for agents that read them, choose, transform and run the
	// SUT or look up the verdict, learn; not loading the image). It is
	// measured, so it is the one field that differs between otherwise
	// identical runs; it is omitted (0) when timing is disabled.
	MeanIterationMS float64 `json:"mean_iteration_ms,omitempty"`
}

// Summary is the content of an agent's summary.json.
type Summary struct {
	// Identity is the run's (see Identity); Logs maps the name of every
	// progress log of the run to its sha256.
	Identity
	Logs     map[string]string `json:"logs,omitempty"`
	Agent    string            `json:"agent"`
	Scenario string            `json:"scenario"`
	Mode     string            `json:"mode,omitempty"` // "online" or "replay"
	Runs     []Run             `json:"runs"`
	// MeanDecisionUS is the mean time of one decision (choose + learn) in
	// microseconds over all runs; 0 when timing is disabled.
	MeanDecisionUS float64 `json:"mean_decision_us,omitempty"`
}

// LogLine is one line of a run's progress log: cumulative state after
// Iteration iterations, written every log interval and at the last
// iteration (the original's JSON log format, in snake case).
type LogLine struct {
	Agent      string            `json:"agent"`
	Scenario   string            `json:"scenario"`
	Seed       uint64            `json:"seed"`
	Iteration  int               `json:"iteration"`
	Violations int               `json:"violations"`   // cumulative ("success" in the original)
	Reward     float64           `json:"total_reward"` // cumulative main-arm reward
	Arms       map[string]Counts `json:"arms"`
	Params     map[string]Counts `json:"params,omitempty"`
	// OriginalAccuracy and ModifiedAccuracy are OriginalScore/Iteration and
	// ModifiedScore/Iteration so far.
	OriginalAccuracy float64 `json:"original_accuracy"`
	ModifiedAccuracy float64 `json:"modified_accuracy"`
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename (internal/atomicfile), creating the directory if
// needed. Result files are ordinary files, readable like any other output
// (mode 0644).
func WriteFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// WriteSummary writes s as indented JSON to path, atomically.
func WriteSummary(path string, s Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("record: encoding %s: %w", path, err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// ReadSummary reads a summary.json.
func ReadSummary(path string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("record: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("record: %s: %w", path, err)
	}
	if s.Agent == "" {
		return s, fmt.Errorf("record: %s: missing field \"agent\"", path)
	}
	return s, nil
}

// WriteLog writes the lines as JSON lines to path, atomically, and
// returns the hex sha256 of what it wrote (what a summary records of its
// logs). (An AgentFolder writes the logs of a run.)
func WriteLog(path string, lines []LogLine) (string, error) {
	b, err := encodeLog(lines)
	if err != nil {
		return "", fmt.Errorf("record: encoding %s: %w", path, err)
	}
	return SHA256(b), WriteFileAtomic(path, b)
}

// encodeLog returns the JSON lines of a progress log.
func encodeLog(lines []LogLine) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// ReadLog reads a JSON-lines progress log.
func ReadLog(path string) ([]LogLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	return readLog(f, path)
}

func readLog(r io.Reader, name string) ([]LogLine, error) {
	var out []LogLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l LogLine
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("record: %s:%d: %w", name, n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("record: %s: %w", name, err)
	}
	return out, nil
}
