package record

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/limits"
)

// zeros is an endless reader of NUL bytes: a sparse file.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// sparse returns a sparse file of n bytes in a temporary folder.
func sparse(t *testing.T, name string, n int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(n); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// TestBoundedReaders checks the size budget of every reader of the
// package (#34, class 1): a 2 GB sparse file, an endless line, a huge
// field or an endless table end in a *limits.TooLargeError naming the
// input, and an error quotes at most the start of a field.
func TestBoundedReaders(t *testing.T) {
	big := sparse(t, "summary.json", 2<<30)
	var tl *limits.TooLargeError
	for name, read := range map[string]func(string) error{
		"ReadSummary":     func(p string) error { _, err := ReadSummary(p); return err },
		"ReadMeta":        func(p string) error { _, err := ReadMeta(p); return err },
		"ReadTiming":      func(p string) error { _, err := ReadTiming(p); return err },
		"ReadCheck":       func(p string) error { _, err := ReadCheck(p); return err },
		"ReadViolations":  func(p string) error { _, err := ReadViolations(p); return err },
		"ReadTuning":      func(p string) error { _, err := ReadTuning(p); return err },
		"ReadRegression":  func(p string) error { _, err := ReadRegression(p); return err },
		"ReadLog":         func(p string) error { _, err := ReadLog(p); return err },
		"ReadVerdictsCSV": func(p string) error { _, err := ReadVerdictsCSV(p); return err },
	} {
		if err := read(big); !errors.As(err, &tl) || !strings.Contains(err.Error(), big) {
			t.Errorf("%s of a 2 GB sparse file: err = %v, want a *limits.TooLargeError naming the file", name, err)
		}
		if err := read(t.TempDir()); !errors.Is(err, limits.ErrNotRegular) {
			t.Errorf("%s of a folder: err = %v, want limits.ErrNotRegular", name, err)
		}
	}
	// An endless line, and an endless table of short lines.
	if _, err := DecodeVerdictsCSV(zeros{}, "z.csv"); !errors.As(err, &tl) || !strings.Contains(err.Error(), "line 1 of z.csv") {
		t.Errorf("endless line: err = %v", err)
	}
	lines := io.MultiReader(strings.NewReader("image,mr,param,violation\n"), repeat("0,blur,,0\n"))
	if _, err := DecodeVerdictsCSV(lines, "long.csv"); !errors.As(err, &tl) {
		t.Errorf("endless table: err = %v", err)
	}
	if _, err := DecodeLog(zeros{}, "z.jsonl"); !errors.As(err, &tl) {
		t.Errorf("endless log line: err = %v", err)
	}
	// A field over limits.FieldBytes, and a bad field's quote.
	huge := strings.Repeat("x", limits.FieldBytes+1)
	_, err := DecodeVerdictsCSV(strings.NewReader("image,mr,param,violation\n0,"+huge+",,0\n"), "f.csv")
	if !errors.As(err, &tl) || len(err.Error()) > 200 {
		t.Errorf("huge field: err = %.300v", err)
	}
	_, err = DecodeVerdictsCSV(strings.NewReader("image,mr,param,violation\n"+strings.Repeat("9", 5000)+",blur,,0\n"), "q.csv")
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("bad long field: err = %.400v", err)
	}
}

// repeat is an endless reader of s.
func repeat(s string) io.Reader { return &repeater{s: s} }

type repeater struct {
	s   string
	off int
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}
