package record

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReplaceWritten checks the list of files amt wrote (#34, class 6):
// a stale file is deleted only when amt listed it, under the prefixes
// given; a user's file beside it, another agent's sheets, a listed path
// that leaves the folder and a symbolic link stay.
func TestReplaceWritten(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"gallery/cover/blur.png", "gallery/cover/invert.png", "gallery/cover/mine.png", "gallery/random/blur.png"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	target := filepath.Join(t.TempDir(), "target.png")
	os.WriteFile(target, []byte("x"), 0o644)
	os.Symlink(target, filepath.Join(dir, "gallery/cover/link.png"))
	// Run 1 drew blur and invert for cover, blur for random.
	if err := ReplaceWritten(dir, []string{"gallery/cover"}, []string{"gallery/cover/blur.png", "gallery/cover/invert.png", "gallery/cover/link.png"}); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceWritten(dir, []string{"gallery/random"}, []string{"gallery/random/blur.png"}); err != nil {
		t.Fatal(err)
	}
	// Run 2 draws only blur for cover.
	if err := ReplaceWritten(dir, []string{"gallery/cover"}, []string{"gallery/cover/blur.png"}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{"gallery/cover/blur.png": true, "gallery/cover/invert.png": false,
		"gallery/cover/mine.png": true, "gallery/random/blur.png": true, "gallery/cover/link.png": true} {
		_, err := os.Lstat(filepath.Join(dir, f))
		if (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", f, err == nil, want)
		}
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the link's target: %v", err)
	}
}
