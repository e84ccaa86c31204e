package record

import "errors"

// The files of a corruption report (experiments.CorruptionConfig), beside
// the usual ones: the verdict table of the reference SUT and the record
// of which model that is.
const (
	CorruptionFile        = "corruption.json"
	VerdictsReferenceFile = "sweep-reference.csv"
)

// Corruption is the content of corruption.json: the reference SUT of a
// corruption report's corruption errors (CE, mCE: Hendrycks & Dietterich,
// ICLR 2019), whose exhaustive table is sweep-reference.csv, and the run
// it belongs to.
type Corruption struct {
	Identity
	Reference File `json:"reference"`
	// VerdictsSHA256 is the sha256 of sweep-reference.csv.
	VerdictsSHA256 string `json:"verdicts_sha256"`
}

// check validates a decoded corruption.json.
func (c Corruption) check() error {
	if c.Reference.Path == "" {
		return errors.New("no reference model")
	}
	return nil
}

// WriteCorruption writes c as indented JSON to path, atomically.
func WriteCorruption(path string, c Corruption) error {
	return writeJSON(path, c, "  ")
}

// ReadCorruption reads a corruption.json, rejecting unknown fields.
func ReadCorruption(path string) (Corruption, error) {
	return readChecked[Corruption](path)
}
