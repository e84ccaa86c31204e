package record

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/amt-dev/amt/internal/limits"
)

// readJSON reads the JSON file at path, at most limit bytes
// (limits.ReadFile), into a T, strictly: an unknown field is an error, so
// that a misspelt or foreign key is never silently dropped. The caller
// checks the decoded value. On a decoding error it returns what was
// decoded so far with the error.
func readJSON[T any](path string, limit int64) (T, error) {
	var v T
	b, err := limits.ReadFile(path, limit)
	if err != nil {
		return v, fmt.Errorf("record: %w", err)
	}
	if err := decodeStrict(b, &v); err != nil {
		return v, fmt.Errorf("record: %s: %w", path, err)
	}
	return v, nil
}

// checker is the content of a result file that validates itself once
// decoded; its errors do not name the file.
type checker interface{ check() error }

// readChecked reads the JSON file at path like readJSON, at most
// limits.JSONBytes, and checks the decoded value, naming path in the
// error. On an error it returns what was decoded with it.
func readChecked[T checker](path string) (T, error) {
	v, err := readJSON[T](path, limits.JSONBytes)
	if err != nil {
		return v, err
	}
	if err := v.check(); err != nil {
		return v, fmt.Errorf("record: %s: %w", path, err)
	}
	return v, nil
}

// decodeStrict decodes the first JSON value of b into v, refusing unknown
// fields.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// writeJSON writes v to path as JSON indented by indent, with a trailing
// newline, atomically (WriteFileAtomic).
func writeJSON(path string, v any, indent string) error {
	b, err := json.MarshalIndent(v, "", indent)
	if err != nil {
		return fmt.Errorf("record: encoding %s: %w", path, err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// encodeLines returns vs as JSON lines, one value a line.
func encodeLines[T any](vs []T) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// writeLines writes vs as JSON lines to path, atomically.
func writeLines[T any](path string, vs []T) error {
	b, err := encodeLines(vs)
	if err != nil {
		return fmt.Errorf("record: encoding %s: %w", path, err)
	}
	return WriteFileAtomic(path, b)
}
