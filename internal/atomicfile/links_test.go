//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWriteThroughLinks checks that a write through a symbolic link
// replaces the link's target and leaves the link a link (#34, class 6):
// an absolute and a relative link, a chain of two, and a dangling link,
// whose target is created.
func TestWriteThroughLinks(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	target := filepath.Join(sub, "target.csv")
	os.WriteFile(target, []byte("old"), 0o644)
	abs := filepath.Join(dir, "abs.csv")
	rel := filepath.Join(dir, "rel.csv")
	chain := filepath.Join(dir, "chain.csv")
	dangling := filepath.Join(dir, "dangling.csv")
	os.Symlink(target, abs)
	os.Symlink("sub/target.csv", rel)
	os.Symlink("rel.csv", chain)
	os.Symlink("sub/new.csv", dangling)
	for _, link := range []string{abs, rel, chain} {
		if err := WriteFile(link, []byte(link), 0o644); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symbolic link (%v)", link, err)
		}
		if b, _ := os.ReadFile(target); string(b) != link {
			t.Errorf("after writing %s the target holds %q", link, b)
		}
	}
	if err := WriteFile(dangling, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(sub, "new.csv")); err != nil || string(b) != "new" {
		t.Errorf("dangling link: the target holds %q, %v", b, err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symbolic link (%v)", dangling, err)
	}
	loop := filepath.Join(dir, "loop")
	os.Symlink("loop", loop)
	if err := WriteFile(loop, nil, 0o644); err == nil {
		t.Error("a link to itself: no error")
	}
	if err := WriteFile(sub, nil, 0o644); !errors.Is(err, errIsDir) {
		t.Errorf("a folder: err = %v", err)
	}
	ents, _ := os.ReadDir(sub)
	for _, e := range ents {
		if e.Name() != "target.csv" && e.Name() != "new.csv" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestWriteSpecialInPlace checks that a FIFO (and /dev/null) is written
// in place, not replaced by a regular file.
func TestWriteSpecialInPlace(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	if err := WriteFile(fifo, []byte("through the pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if string(b) != "through the pipe" {
			t.Errorf("the reader got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the FIFO's reader got nothing")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO (%v)", fifo, err)
	}
	if err := WriteFile(os.DevNull, []byte("x"), 0o644); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s is no longer a device (%v)", os.DevNull, err)
	}
}
