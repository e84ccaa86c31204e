//go:build unix

package experiments

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/data"
)

// TestFolderCacheKey checks that an image folder's data hash (the cache
// key of its verdicts and features) covers what the data set reads and
// only that (#34, class 4): re-pointing a symbolic link the folder reads
// through changes it; a README, a .DS_Store or a results file beside the
// images does not.
func TestFolderCacheKey(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"), 10)
	writePNG(t, filepath.Join(other, "x.png"), 20)
	writePNG(t, filepath.Join(other, "y.png"), 30)
	if err := os.Symlink(filepath.Join(other, "x.png"), filepath.Join(dir, "b.png")); err != nil {
		t.Fatal(err)
	}
	key := func() string {
		t.Helper()
		src, err := data.OpenFolder(dir)
		if err != nil {
			t.Fatal(err)
		}
		h, err := dataHash(context.Background(), dir, src)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	k0 := key()
	for _, f := range []string{"README.md", ".DS_Store", "summary.json", "sweep.csv"} {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	if k := key(); k != k0 {
		t.Error("files the data set does not read changed the key")
	}
	os.Remove(filepath.Join(dir, "b.png"))
	if err := os.Symlink(filepath.Join(other, "y.png"), filepath.Join(dir, "b.png")); err != nil {
		t.Fatal(err)
	}
	if k := key(); k == k0 {
		t.Error("re-pointing b.png's link to another image left the key unchanged: the old table would be reused")
	}
}
