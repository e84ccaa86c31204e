package nn

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
)

// TestHostileModels loads every crafted file of onnxtest.Hostile (issue
// #12) and checks that each fails with a one-line *ModelError naming the
// file and the expected reason, and no internal error.
func TestHostileModels(t *testing.T) {
	for _, c := range ot.Hostile() {
		t.Run(c.Name, func(t *testing.T) {
			_, err := LoadBytes(c.File, "crafted.onnx")
			if err == nil {
				t.Fatal("no error")
			}
			var me *ModelError
			if !errors.As(err, &me) {
				t.Errorf("error %q (%T) is not a *ModelError", err, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "invalid model crafted.onnx: ") || !strings.Contains(msg, c.Want) {
				t.Errorf("error %q: want \"invalid model crafted.onnx: …%s…\"", msg, c.Want)
			}
			if strings.ContainsAny(msg, "\n\r") || strings.Contains(msg, "internal error") {
				t.Errorf("error %q spans lines or is internal", msg)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite testdata/crafted from onnxtest.Hostile")

// craftedEntry is one file of testdata/crafted/index.json.
type craftedEntry struct {
	Name string `json:"name"`
	File string `json:"file"`
	Want string `json:"want"` // a substring of the load error
}

// TestCraftedFiles checks that testdata/crafted holds the files of
// onnxtest.Hostile of up to 64 KiB, for tests of the command line and
// manual checks (amt infer -model nn/testdata/crafted/…); -update
// rewrites them.
func TestCraftedFiles(t *testing.T) {
	dir := filepath.Join("testdata", "crafted")
	var index []craftedEntry
	files := map[string][]byte{}
	for i, c := range ot.Hostile() {
		if len(c.File) > 64<<10 {
			continue
		}
		name := fmt.Sprintf("%02d-%s.onnx", i, slug(c.Name))
		index = append(index, craftedEntry{c.Name, name, c.Want})
		files[name] = c.File
	}
	js, err := json.MarshalIndent(index, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files["index.json"] = append(js, '\n')
	if *update {
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v (run go test ./nn -run TestCraftedFiles -update)", err)
	}
	if len(got) != len(files) {
		t.Errorf("%s holds %d files, want %d (run go test ./nn -run TestCraftedFiles -update)", dir, len(got), len(files))
	}
	for name, want := range files {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s differs from onnxtest.Hostile (run go test ./nn -run TestCraftedFiles -update)", name)
		}
	}
}

// slug returns s in lower case with runs of other characters than letters
// and digits replaced by "-".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
