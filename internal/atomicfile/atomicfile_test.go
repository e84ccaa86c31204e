package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// names returns the names in dir, to check that no temporary file is left.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	for _, tc := range []struct {
		data string
		perm fs.FileMode
	}{{"first", 0o644}, {"second, longer than the first", 0o600}, {"", 0o640}} {
		if err := WriteFile(p, []byte(tc.data), tc.perm); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != tc.data {
			t.Fatalf("content %q, %v; want %q", got, err, tc.data)
		}
		st, _ := os.Stat(p)
		if runtime.GOOS != "windows" && st.Mode().Perm() != tc.perm {
			t.Errorf("mode %v, want %v", st.Mode().Perm(), tc.perm)
		}
		if n := names(t, dir); len(n) != 1 {
			t.Fatalf("files left behind: %v", n)
		}
	}
	// A missing directory is an error naming it, and creates nothing.
	missing := filepath.Join(dir, "no", "such", "f")
	if err := WriteFile(missing, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "no", "such")) {
		t.Errorf("missing directory: %v", err)
	}
}

// Until Commit, readers see the old content; Commit replaces it whole.
func TestCreateCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log.jsonl")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Cleanup()
	if f.Name() != p {
		t.Errorf("Name %q", f.Name())
	}
	var want strings.Builder
	for i := range 20000 { // more than the buffer
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		if _, err := f.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if i == 10000 {
			if got, _ := os.ReadFile(p); string(got) != "old\n" {
				t.Fatalf("destination changed before Commit: %d bytes", len(got))
			}
		}
	}
	if n := names(t, dir); len(n) != 2 || !strings.HasPrefix(n[0], ".log.jsonl.tmp") {
		t.Fatalf("want the destination and one hidden temporary file, got %v", n)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != want.String() {
		t.Fatalf("committed %d bytes, want %d", len(got), want.Len())
	}
	if n := names(t, dir); len(n) != 1 {
		t.Fatalf("files left behind: %v", n)
	}
	if err := f.Cleanup(); err != nil {
		t.Errorf("Cleanup after Commit: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != want.String() {
		t.Fatal("Cleanup after Commit changed the destination")
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("Write after Commit accepted")
	}
	if err := f.Commit(); err == nil {
		t.Error("second Commit accepted")
	}
}

// Cleanup without Commit discards everything and keeps the old file.
func TestCleanup(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.bin")
	os.WriteFile(p, []byte("kept"), 0o644)
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("discarded"))
	if err := f.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "kept" {
		t.Fatalf("destination %q after Cleanup", got)
	}
	if n := names(t, dir); len(n) != 1 {
		t.Fatalf("files left behind: %v", n)
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit after Cleanup accepted")
	}
}

// A failing rename (the destination is a non-empty directory) reports the
// error and removes the temporary file.
func TestCommitFailureRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(p, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("x"), 0o644); err == nil {
		t.Fatal("renaming over a non-empty directory succeeded")
	}
	if n := names(t, dir); len(n) != 1 || n[0] != "taken" {
		t.Fatalf("files left behind: %v", n)
	}
}
