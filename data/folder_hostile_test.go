//go:build unix

package data

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFolderSpecialFiles checks that a FIFO named like an image is an
// error naming it, at once, instead of an open() that blocks forever, and
// that a symbolic link to a folder named like an image is skipped as a
// subfolder is, not read as an empty file (#34, class 8).
func TestFolderSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"), 4, 4, 1)
	sub := t.TempDir()
	if err := os.Symlink(sub, filepath.Join(dir, "dir.png")); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFolder(dir)
	if err != nil || f.Len() != 1 {
		t.Fatalf("a link to a folder named dir.png: %v, %v", f, err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "x.png"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := OpenFolder(dir)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "x.png is not a regular file (a FIFO)") {
			t.Errorf("a FIFO named x.png: err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OpenFolder blocked on a FIFO named x.png")
	}
}

// TestFolderSkippedSaid checks that the files a folder does not read are
// listed with the reason (#34, class 8): in Info, and in the error of a
// folder with no image it reads.
func TestFolderSkippedSaid(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.gif", "b.webp", ".c.png"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	_, err := OpenFolder(dir)
	if err == nil || !strings.Contains(err.Error(), "skipped .c.png: hidden; a.gif: not PNG or JPEG") {
		t.Errorf("no readable image: err = %v", err)
	}
	writePNG(t, filepath.Join(dir, "d.png"), 4, 4, 1)
	f, err := OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Info().Skipped; len(s) != 3 || !strings.HasPrefix(s[2], "b.webp: not PNG or JPEG") {
		t.Errorf("Info().Skipped = %q", s)
	}
	// A folder named like an image (here a link to one) is said too, and
	// the note amt run, sweep and check print lists the first three.
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "e.png")); err != nil {
		t.Fatal(err)
	}
	if f, err = OpenFolder(dir); err != nil {
		t.Fatal(err)
	}
	if note := f.Info().SkippedNote(); !strings.HasPrefix(note, dir+": 4 files not read (skipped .c.png: hidden; a.gif: not PNG or JPEG") ||
		!strings.HasSuffix(note, "; and 1 more)") || strings.Contains(note, "\n") {
		t.Errorf("SkippedNote() = %q", note)
	}
	if s := f.Info().Skipped; len(s) != 4 || s[3] != "e.png: a folder" {
		t.Errorf("Info().Skipped = %q", s)
	}
	if note := (Info{}).SkippedNote(); note != "" {
		t.Errorf("nothing skipped: SkippedNote() = %q", note)
	}
}
