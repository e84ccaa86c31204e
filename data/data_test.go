package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	rec, _ := AppendCIFAR10Record(nil, testImage(32, 32, 0), 2)
	os.WriteFile(filepath.Join(dir, "x.bin"), rec, 0o644)
	os.Mkdir(filepath.Join(dir, "imgs"), 0o755)
	writePNG(t, filepath.Join(dir, "imgs", "a.png"), 3, 3, 0)
	cocoJSON := cocoFixture(t, smallCOCO, smallCOCOImages())

	tests := []struct {
		spec       Spec
		wantFormat string
		wantLen    int
		wantErr    string
	}{
		{Spec{Path: filepath.Join(dir, "x.bin")}, "cifar10", 1, ""},
		{Spec{Format: "cifar10", Path: filepath.Join(dir, "x.bin")}, "cifar10", 1, ""},
		{Spec{Path: filepath.Join(dir, "imgs")}, "folder", 1, ""},
		{Spec{Path: cocoJSON}, "coco", 3, ""},
		{Spec{Format: "coco", Path: cocoJSON, Images: filepath.Dir(cocoJSON)}, "coco", 3, ""},
		{Spec{}, "", 0, "no path"},
		{Spec{Format: "mnist", Path: filepath.Join(dir, "x.bin")}, "", 0, `unknown format "mnist"`},
		{Spec{Path: filepath.Join(dir, "nope.bin")}, "", 0, "nope.bin"},
		{Spec{Format: "cifar10", Path: filepath.Join(dir, "imgs", "a.png")}, "", 0, "not a multiple"},
	}
	for _, tt := range tests {
		src, err := Open(tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Open(%+v) error %v, want %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%+v): %v", tt.spec, err)
			continue
		}
		if info := src.Info(); info.Format != tt.wantFormat || src.Len() != tt.wantLen {
			t.Errorf("Open(%+v) = %s with %d cases, want %s with %d", tt.spec, info.Format, src.Len(), tt.wantFormat, tt.wantLen)
		}
	}
}

func TestAssetsDirAndResolve(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "cifar10"), 0o755)
	rec, _ := AppendCIFAR10Record(nil, testImage(32, 32, 0), 2)
	os.WriteFile(filepath.Join(dir, "cifar10", "t.bin"), rec, 0o644)

	t.Setenv(AssetsEnvVar, dir)
	if got, err := AssetsDir(); err != nil || got != dir {
		t.Fatalf("AssetsDir = %q, %v; want %q", got, err, dir)
	}
	// A relative path not found here is found in the assets folder.
	got, err := ResolvePath("cifar10/t.bin")
	if err != nil || got != filepath.Join(dir, "cifar10", "t.bin") {
		t.Errorf("ResolvePath = %q, %v", got, err)
	}
	src, err := Open(Spec{Path: "cifar10/t.bin"})
	if err != nil || src.Len() != 1 {
		t.Errorf("Open via assets: %v", err)
	}
	if _, err := ResolvePath("cifar10/none.bin"); err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "working directory") {
		t.Errorf("unresolvable path: error %v, want it to name both places", err)
	}
	// A path that exists relative to the working directory wins.
	if got, err := ResolvePath("data.go"); err != nil || got != "data.go" {
		t.Errorf("ResolvePath(data.go) = %q, %v", got, err)
	}
	t.Setenv(AssetsEnvVar, filepath.Join(dir, "missing"))
	if _, err := AssetsDir(); err == nil || !strings.Contains(err.Error(), AssetsEnvVar) {
		t.Errorf("bad $%s: error %v", AssetsEnvVar, err)
	}
	t.Setenv(AssetsEnvVar, filepath.Join(dir, "cifar10", "t.bin"))
	if _, err := AssetsDir(); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("file as $%s: error %v", AssetsEnvVar, err)
	}
}

func TestImagesAdapter(t *testing.T) {
	rec, _ := AppendCIFAR10Record(nil, testImage(32, 32, 4), 7)
	c, err := NewCIFAR10(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, label, err := Images{Source: c}.Image(0)
	if err != nil || label != 7 || !img.Equal(testImage(32, 32, 4)) {
		t.Errorf("Image(0) = label %d, %v", label, err)
	}
	if _, label, err := (Images{Source: c}).Image(1); err == nil || label != -1 {
		t.Errorf("Image(1) = label %d, error %v; want an out-of-range error", label, err)
	}
}
