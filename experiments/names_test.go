package experiments

import (
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
)

// TestViolationNames checks that violations on an image folder carry the
// images' file names (#34, class 8), which violations.jsonl, summary.md,
// junit.xml and the gallery show beside the index.
func TestViolationNames(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "cat.png"), 10)
	writePNG(t, filepath.Join(dir, "dog.png"), 20)
	src, err := data.OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := &Experiment{data: src}
	vs := []record.Violation{{Image: 1}, {Image: 0}}
	if err := e.fillIDs(vs); err != nil {
		t.Fatal(err)
	}
	if vs[0].Name != "dog.png" || vs[1].Name != "cat.png" {
		t.Errorf("names %q, %q; want dog.png, cat.png", vs[0].Name, vs[1].Name)
	}
}
