package data

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePNG(t *testing.T, path string, w, h int, seed byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, testImage(w, h, seed)); err != nil {
		t.Fatal(err)
	}
}

func TestFolder(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "b.png"), 4, 3, 1)
	writePNG(t, filepath.Join(dir, "A.PNG"), 5, 2, 2)
	writePNG(t, filepath.Join(dir, "c.jpeg"), 2, 2, 3) // a PNG named .jpeg: decoded by content
	writePNG(t, filepath.Join(dir, ".hidden.png"), 2, 2, 4)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not an image"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub.png"), 0o755)

	f, err := OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Names(), ","); got != "A.PNG,b.png,c.jpeg" {
		t.Fatalf("names %s, want A.PNG,b.png,c.jpeg", got)
	}
	want := []struct {
		w, h int
		seed byte
	}{{5, 2, 2}, {4, 3, 1}, {2, 2, 3}}
	for i, w := range want {
		cs, err := f.Case(i)
		if err != nil {
			t.Fatal(err)
		}
		if !cs.Image.Equal(testImage(w.w, w.h, w.seed)) || cs.Label != -1 || cs.Index != i || cs.ID != int64(i) || cs.Name != f.Names()[i] {
			t.Errorf("case %d = %s %dx%d label %d", i, cs.Name, cs.Image.W, cs.Image.H, cs.Label)
		}
	}
	if info := f.Info(); info.Format != "folder" || info.Len != 3 || info.Path != dir {
		t.Errorf("Info %+v", info)
	}

	// A corrupt image is an error naming the file.
	os.WriteFile(filepath.Join(dir, "b.png"), []byte("garbage"), 0o644)
	if _, err := f.Case(1); err == nil || !strings.Contains(err.Error(), "b.png") || !strings.Contains(err.Error(), "not a PNG or JPEG") {
		t.Errorf("corrupt image: error %v", err)
	}
	// A folder without images is an error.
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "x.txt"), nil, 0o644)
	if _, err := OpenFolder(empty); err == nil || !strings.Contains(err.Error(), "no .png, .jpg or .jpeg") {
		t.Errorf("empty folder: error %v", err)
	}
	if _, err := OpenFolder(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing folder: error %v", err)
	}
}
