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
