package experiments

import (
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/data"
)

// writePNG writes a 2×2 image of one grey level.
func writePNG(t *testing.T, path string, level uint8) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	for i := range 4 {
		img.Set(i%2, i/2, color.RGBA{level, level, level, 255})
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// The data hash of a COCO data set covers the images the JSON lists, not
// only the JSON: changing an image's pixels changes the hash (and so the
// verdict and feature cache keys), restoring it restores the hash, and
// files the JSON does not list do not matter.
func TestDataHashCoversCOCOImages(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "instances.json")
	if err := os.WriteFile(js, []byte(`{"images": [{"id": 1, "file_name": "a.png", "width": 2, "height": 2},
		{"id": 2, "file_name": "b.png", "width": 2, "height": 2}],
		"annotations": [], "categories": [{"id": 1, "name": "thing"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	writePNG(t, filepath.Join(dir, "a.png"), 10)
	writePNG(t, filepath.Join(dir, "b.png"), 20)
	hash := func() string {
		t.Helper()
		src, err := data.Open(data.Spec{Format: "coco", Path: js})
		if err != nil {
			t.Fatal(err)
		}
		h, err := dataHash(context.Background(), js, src)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h1 := hash()
	jsonOnly, err := fileHash(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	if h1 == jsonOnly {
		t.Fatal("the data hash of a COCO data set is the JSON's hash alone")
	}
	writePNG(t, filepath.Join(dir, "b.png"), 21)
	if h2 := hash(); h2 == h1 {
		t.Error("changing an image's pixels left the data hash unchanged")
	}
	writePNG(t, filepath.Join(dir, "b.png"), 20)
	if h3 := hash(); h3 != h1 {
		t.Error("restoring the image did not restore the data hash")
	}
	writePNG(t, filepath.Join(dir, "unlisted.png"), 99)
	if h4 := hash(); h4 != h1 {
		t.Error("a file the JSON does not list changed the data hash")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src, _ := data.Open(data.Spec{Format: "coco", Path: js})
	if _, err := dataHash(ctx, js, src); err == nil {
		t.Error("a cancelled context: no error")
	}
}
