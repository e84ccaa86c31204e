package limits

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: a file within the limit is read; one over it is a
// *TooLargeError before it is read; a folder is ErrNotRegular.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("12345"), 0o644)
	if b, err := ReadFile(p, 5); err != nil || string(b) != "12345" {
		t.Errorf("within the limit: %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(p, 4); !errors.As(err, &tl) || tl.Size != 5 || tl.Limit != 4 || !strings.Contains(err.Error(), p) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ReadFile(dir, 4); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a folder: %v", err)
	}
	if _, err := Open(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open of a folder: %v", err)
	}
}

// TestLineReader: the line and total budgets, and Err.
func TestLineReader(t *testing.T) {
	r := LineReader(strings.NewReader("abc\nabcdef\n"), "x", 100, 5)
	_, err := io.ReadAll(r)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "line 2 of x") || r.Err() != err {
		t.Errorf("a line of 6 bytes over 5: %v", err)
	}
	r = LineReader(strings.NewReader(strings.Repeat("ab\n", 10)), "y", 20, 5)
	if _, err := io.ReadAll(r); !errors.As(err, &tl) || tl.What != "y" {
		t.Errorf("30 bytes over 20: %v", err)
	}
	r = LineReader(strings.NewReader("ab\ncd\n"), "z", 6, 2)
	if b, err := io.ReadAll(r); err != nil || string(b) != "ab\ncd\n" || r.Err() != nil {
		t.Errorf("at the limits: %q, %v", b, err)
	}
}

// TestClip: a value within n bytes is kept, a longer one cut to n bytes
// with its length.
func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"", 0, ""},
		{"abcdef", 3, "abc… (6 bytes)"},
	} {
		if got := Clip(c.s, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
