package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idxFile returns an IDX file of unsigned bytes with the given magic,
// dimensions and values.
func idxFile(magic uint32, dims []uint32, vals []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, vals...)
}

func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeIDXPair writes a 3-image 2×3 IDX data set (images and labels,
// gzipped or not) into a temporary folder and returns the image path.
func writeIDXPair(t *testing.T, gz bool) string {
	t.Helper()
	dir := t.TempDir()
	pix := make([]byte, 3*2*3)
	for i := range pix {
		pix[i] = byte(10 * i)
	}
	img, lab := idxFile(idxImagesMagic, []uint32{3, 2, 3}, pix), idxFile(idxLabelsMagic, []uint32{3}, []byte{9, 0, 4})
	ext := ""
	if gz {
		img, lab, ext = gzipped(t, img), gzipped(t, lab), ".gz"
	}
	p := filepath.Join(dir, "t10k-images-idx3-ubyte"+ext)
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t10k-labels-idx1-ubyte"+ext), lab, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestIDX reads a small IDX pair, plain and gzipped, through Open with
// format detection: grey values become R = G = B, labels and class names
// come along.
func TestIDX(t *testing.T) {
	for _, gz := range []bool{false, true} {
		p := writeIDXPair(t, gz)
		format, err := DetectFormat(p)
		if err != nil || format != "idx" {
			t.Fatalf("gzip %v: DetectFormat = %q, %v; want idx", gz, format, err)
		}
		for _, format := range []string{"idx", "fashion-mnist"} {
			src, err := Open(Spec{Format: format, Path: p})
			if err != nil {
				t.Fatalf("gzip %v, %s: %v", gz, format, err)
			}
			if src.Len() != 3 {
				t.Fatalf("Len %d, want 3", src.Len())
			}
			c, err := src.Case(1)
			if err != nil {
				t.Fatal(err)
			}
			if c.Label != 0 || c.Image.W != 3 || c.Image.H != 2 {
				t.Fatalf("case 1: label %d, %dx%d; want 0, 3x2", c.Label, c.Image.W, c.Image.H)
			}
			for p := 0; p < 6; p++ {
				v := byte(10 * (6 + p))
				if got := c.Image.Pix[3*p : 3*p+3]; got[0] != v || got[1] != v || got[2] != v {
					t.Fatalf("case 1 pixel %d = %v, want %d thrice", p, got, v)
				}
			}
			info := src.Info()
			wantName := "9"
			if format == "fashion-mnist" {
				wantName = "Ankle boot"
			}
			if info.Format != format || info.Width != 3 || info.Height != 2 || len(info.Classes) < 10 || info.Classes[9].Name != wantName || info.Classes[9].Count != 1 {
				t.Fatalf("%s: info %+v", format, info)
			}
		}
	}
}

// TestIDXUnlabelled: without a label file beside the images the cases
// are unlabelled; a label file named explicitly must exist.
func TestIDXUnlabelled(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "imgs-idx3-ubyte")
	if err := os.WriteFile(p, idxFile(idxImagesMagic, []uint32{2, 1, 1}, []byte{1, 2}), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := OpenIDX(p, "", "idx")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := src.Case(0); c.Label != -1 || src.Labelled() {
		t.Fatalf("label %d, want -1", c.Label)
	}
	if _, err := OpenIDX(p, filepath.Join(dir, "missing"), "idx"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a missing label file named explicitly: %v", err)
	}
}

// TestIDXErrors: every malformed file is an error naming the file and
// what is wrong, before any large allocation.
func TestIDXErrors(t *testing.T) {
	good := idxFile(idxImagesMagic, []uint32{3, 2, 3}, make([]byte, 18))
	cases := []struct {
		name string
		img  []byte
		lab  []byte
		want string
	}{
		{"empty", nil, nil, "header"},
		{"short header", good[:9], nil, "header"},
		{"label magic for images", idxFile(idxLabelsMagic, []uint32{3, 2, 3}, nil), nil, "magic number 0x00000801"},
		{"float type", idxFile(0x00000d03, []uint32{3, 2, 3}, nil), nil, "magic number"},
		{"truncated", good[:len(good)-7], nil, "record 1 of 3 is incomplete"},
		{"trailing bytes", append(append([]byte(nil), good...), 0), nil, "bytes after"},
		{"huge claim", idxFile(idxImagesMagic, []uint32{1 << 31, 1 << 16, 1 << 16}, nil), nil, "claim more than"},
		{"zero width", idxFile(idxImagesMagic, []uint32{3, 2, 0}, nil), nil, "images of 0×2"},
		{"no images", idxFile(idxImagesMagic, []uint32{0, 28, 28}, nil), nil, "no images"},
		{"label count", good, idxFile(idxLabelsMagic, []uint32{2}, []byte{1, 2}), "2 labels"},
		{"truncated labels", good, idxFile(idxLabelsMagic, []uint32{3}, []byte{1, 2}), "truncated"},
		{"bad gzip", []byte{0x1f, 0x8b, 1, 2, 3}, nil, "gzip"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "x-images-idx3-ubyte")
			if err := os.WriteFile(p, c.img, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.lab != nil {
				if err := os.WriteFile(filepath.Join(dir, "x-labels-idx1-ubyte"), c.lab, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := OpenIDX(p, "", "idx")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) && c.name != "no images" {
				t.Fatalf("err = %v, want one naming the file and %q", err, c.want)
			}
			if strings.Count(err.Error(), "\n") > 0 || len(err.Error()) > 400 {
				t.Fatalf("not a one-line error: %q", err)
			}
		})
	}
	// A Fashion-MNIST label beyond its ten classes.
	dir := t.TempDir()
	p := filepath.Join(dir, "x-images-idx3-ubyte")
	os.WriteFile(p, good, 0o644)
	os.WriteFile(filepath.Join(dir, "x-labels-idx1-ubyte"), idxFile(idxLabelsMagic, []uint32{3}, []byte{1, 12, 2}), 0o644)
	if _, err := OpenIDX(p, "", "fashion-mnist"); err == nil || !strings.Contains(err.Error(), "record 1 has label 12") {
		t.Fatalf("label 12: %v", err)
	}
}

// FashionMNISTDir is where Debian's dataset-fashion-mnist installs the
// official files.
const fashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// TestFashionMNISTPackage reads the official test set that Debian's
// package installs (.ci/run installs it): 10,000 28×28 images with their
// labels, 1,000 per class, and the first label is 9 (ankle boot), as in
// the data set's own documentation.
func TestFashionMNISTPackage(t *testing.T) {
	p := filepath.Join(fashionMNISTDir, "t10k-images-idx3-ubyte.gz")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install Debian's dataset-fashion-mnist: %v", err)
		}
		t.Skipf("Debian's dataset-fashion-mnist is not installed: %v", err)
	}
	src, err := Open(Spec{Format: "fashion-mnist", Path: p})
	if err != nil {
		t.Fatal(err)
	}
	info := src.Info()
	if info.Len != 10000 || info.Width != 28 || info.Height != 28 || len(info.Classes) != 10 {
		t.Fatalf("info %+v", info)
	}
	for _, c := range info.Classes {
		if c.Count != 1000 {
			t.Fatalf("class %d (%s): %d images, want 1000", c.Index, c.Name, c.Count)
		}
	}
	c, err := src.Case(0)
	if err != nil || c.Label != 9 {
		t.Fatalf("case 0: label %d, %v", c.Label, err)
	}
}

func FuzzIDX(f *testing.F) {
	f.Add(idxFile(idxImagesMagic, []uint32{2, 2, 2}, make([]byte, 8)))
	f.Add(gzipped(f, idxFile(idxImagesMagic, []uint32{1, 3, 1}, []byte{1, 2, 3})))
	f.Add(idxFile(idxImagesMagic, []uint32{1 << 30, 1 << 10, 1 << 10}, nil))
	f.Add(idxFile(idxImagesMagic, []uint32{5, 4, 4}, make([]byte, 30)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		dims, vals, err := decodeIDX(bytes.NewReader(raw), "fuzz", idxImagesMagic, 1<<20, "images")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if len(dims) != 3 || dims[0]*dims[1]*dims[2] != len(vals) {
			t.Fatalf("dims %v for %d values", dims, len(vals))
		}
	})
}
