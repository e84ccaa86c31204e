package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/amt-dev/amt/internal/atomicfile"
	"github.com/amt-dev/amt/internal/limits"
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

// Check reports whether c can be the counts of a real run: 0 <= Violations
// <= Count <= limits.Counts. A loaded summary, log or baseline whose
// counts break it is corrupt: its rates would leave [0, 100] % and its
// statistics would compare nonsense.
func (c Counts) Check() error {
	if c.Count < 0 || c.Violations < 0 || c.Violations > c.Count || c.Count > limits.Counts {
		return fmt.Errorf("count %d with %d violations, want 0 <= violations <= count <= %d", c.Count, c.Violations, limits.Counts)
	}
	return nil
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
	// ParamErrors maps "mr:value" to the follow-ups of that parameterised
	// variant whose top-1 class differed from the source's label (the
	// follow-up's error, as opposed to its violation: the class changed
	// from the source's). Only a corruption report's runs
	// (experiments.CorruptionConfig) count them, for its error profile;
	// elsewhere it is nil and omitted.
	ParamErrors map[string]int `json:"param_errors,omitempty"`
	// Audit maps a variant key ("fliplr", "rotation:-30") to the counts of
	// the run's audit follow-ups (amt check's audit sample: drawn
	// uniformly, whatever the context and the verdicts); they are also
	// counted in Arms and Params. Absent when the run had none.
	Audit map[string]Counts `json:"audit,omitempty"`
	// AuditErrors maps a parameterised variant's key to the errors (as in
	// ParamErrors) among its audit follow-ups: a uniform sample of the
	// error profile whatever the agent seeks, from which a corruption
	// report estimates the profile. Only runs counting ParamErrors with
	// an audit sample have it; elsewhere it is nil and omitted.
	AuditErrors map[string]int `json:"audit_errors,omitempty"`
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

// check validates a loaded log line as Run.Check does a run's counts.
func (l LogLine) check() error {
	if err := (Counts{Count: l.Iteration, Violations: l.Violations}).Check(); err != nil {
		return fmt.Errorf("iteration: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(l.Arms)) {
		if err := l.Arms[k].Check(); err != nil {
			return fmt.Errorf("arm %q: %w", clip(k), err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(l.Params)) {
		if err := l.Params[k].Check(); err != nil {
			return fmt.Errorf("parameter %q: %w", clip(k), err)
		}
	}
	for _, a := range []float64{l.Reward, l.OriginalAccuracy, l.ModifiedAccuracy} {
		if math.IsNaN(a) || math.IsInf(a, 0) {
			return fmt.Errorf("a number is %v, want finite numbers", a)
		}
	}
	return nil
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

// check validates a decoded summary.json.
func (s Summary) check() error {
	if s.Agent == "" {
		return errors.New(`missing field "agent"`)
	}
	for i, r := range s.Runs {
		if err := r.Check(); err != nil {
			return fmt.Errorf("runs[%d] (seed %d): %w", i, r.Seed, err)
		}
	}
	return nil
}

// decodeFile opens the file at path (limits.Open) and decodes it with
// decode, which names path in its errors and bounds what it reads.
func decodeFile[T any](path string, decode func(r io.Reader, name string) (T, error)) (T, error) {
	f, err := limits.Open(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	return decode(f, path)
}

// WriteSummary writes s as indented JSON to path, atomically.
func WriteSummary(path string, s Summary) error {
	return writeJSON(path, s, "  ")
}

// ReadSummary reads a summary.json.
func ReadSummary(path string) (Summary, error) {
	return readChecked[Summary](path)
}

// Check validates a loaded run: every count valid (Counts.Check), the
// arms' counts adding up to the run's iterations and violations (each
// iteration tests one follow-up of one arm), each parameter's counts
// within its arm's, the scores finite within [0, iterations] (a score
// is at most 1 per iteration) and the timing finite and >= 0.
func (r Run) Check() error {
	if err := (Counts{Count: r.Iterations, Violations: r.Violations}).Check(); err != nil {
		return fmt.Errorf("iterations: %w", err)
	}
	var sum Counts
	for _, k := range slices.Sorted(maps.Keys(r.Arms)) {
		c := r.Arms[k]
		if err := c.Check(); err != nil {
			return fmt.Errorf("arm %q: %w", clip(k), err)
		}
		sum = sum.Add(c)
		if sum.Count > limits.Counts {
			break
		}
	}
	if len(r.Arms) > 0 && (sum.Count != r.Iterations || sum.Violations != r.Violations) {
		return fmt.Errorf("the arms' counts add up to %d follow-ups with %d violations, the run has %d with %d",
			sum.Count, sum.Violations, r.Iterations, r.Violations)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		c := r.Params[k]
		if err := c.Check(); err != nil {
			return fmt.Errorf("parameter %q: %w", clip(k), err)
		}
		if c.Count > r.Iterations {
			return fmt.Errorf("parameter %q: %d follow-ups, the run has %d", clip(k), c.Count, r.Iterations)
		}
	}
	n := float64(r.Iterations)
	for _, v := range []struct {
		name string
		x    float64
	}{{"original_score", r.OriginalScore}, {"modified_score", r.ModifiedScore}} {
		if !(v.x >= 0 && v.x <= n) {
			return fmt.Errorf("%s %v, want a number in [0, %d] (the iterations)", v.name, v.x, r.Iterations)
		}
	}
	if !(r.MeanIterationMS >= 0) || math.IsInf(r.MeanIterationMS, 0) {
		return fmt.Errorf("mean_iteration_ms %v, want a finite number >= 0", r.MeanIterationMS)
	}
	return nil
}

// WriteLog writes the lines as JSON lines to path, atomically, and
// returns the hex sha256 of what it wrote (what a summary records of its
// logs). (An AgentFolder writes the logs of a run.)
func WriteLog(path string, lines []LogLine) (string, error) {
	b, err := encodeLines(lines)
	if err != nil {
		return "", fmt.Errorf("record: encoding %s: %w", path, err)
	}
	return SHA256(b), WriteFileAtomic(path, b)
}

// ReadLog reads a JSON-lines progress log.
func ReadLog(path string) ([]LogLine, error) {
	return decodeFile(path, DecodeLog)
}

// DecodeLog reads a JSON-lines progress log from r, bounded by
// limits.LogBytes in all and limits.LineBytes a line; name is used in
// errors.
func DecodeLog(r io.Reader, name string) ([]LogLine, error) {
	var out []LogLine
	lr := limits.LineReader(r, name, limits.LogBytes, limits.LineBytes)
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 64<<10), limits.LineBytes+1)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l LogLine
		if err := decodeStrict(sc.Bytes(), &l); err != nil {
			if lerr := lr.Err(); lerr != nil {
				return nil, fmt.Errorf("record: %w", lerr) // it names the file and line
			}
			return nil, fmt.Errorf("record: %s:%d: %w", name, n, err)
		}
		if err := l.check(); err != nil {
			return nil, fmt.Errorf("record: %s:%d: %w", name, n, err)
		}
		out = append(out, l)
	}
	if err := lr.Err(); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("record: %s: %w", name, err)
	}
	return out, nil
}
