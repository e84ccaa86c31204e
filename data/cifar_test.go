package data

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/rgb"
)

// testImage returns a w×h image whose pixels depend on seed.
func testImage(w, h int, seed byte) rgb.Image {
	m := rgb.New(w, h)
	for i := range m.Pix {
		m.Pix[i] = byte(i*7) ^ seed
	}
	return m
}

func TestCIFAR10RoundTrip(t *testing.T) {
	var raw []byte
	want := []rgb.Image{testImage(32, 32, 1), testImage(32, 32, 2), testImage(32, 32, 3)}
	labels := []int{9, 0, 4}
	for i, m := range want {
		var err error
		if raw, err = AppendCIFAR10Record(raw, m, labels[i]); err != nil {
			t.Fatal(err)
		}
	}
	if len(raw) != 3*CIFARRecordSize {
		t.Fatalf("3 records are %d bytes, want %d", len(raw), 3*CIFARRecordSize)
	}
	// The record layout: label, then the R plane, G plane, B plane.
	if raw[CIFARRecordSize] != 0 || raw[1] != want[0].Pix[0] || raw[1+1024] != want[0].Pix[1] || raw[1+2048+5] != want[0].Pix[5*3+2] {
		t.Fatal("record layout is not label + R, G, B planes")
	}
	c, err := NewCIFAR10(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 3 {
		t.Fatalf("Len = %d, want 3", c.Len())
	}
	for i := range want {
		cs, err := c.Case(i)
		if err != nil {
			t.Fatal(err)
		}
		if !cs.Image.Equal(want[i]) || cs.Label != labels[i] || cs.Index != i || cs.ID != int64(i) || cs.Annotations != nil {
			t.Errorf("case %d = %+v, want image %d label %d", i, cs.Name, i, labels[i])
		}
		if cs.Name != "cifar10["+string(rune('0'+i))+"]" {
			t.Errorf("case %d name %q", i, cs.Name)
		}
	}
	for _, i := range []int{-1, 3} {
		if _, err := c.Case(i); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Case(%d) error = %v, want out of range", i, err)
		}
	}
	info := c.Info()
	if info.Len != 3 || info.Format != "cifar10" || len(info.Classes) != 10 || info.Classes[9].Count != 1 || info.Classes[0].Count != 1 || info.Classes[1].Count != 0 || info.Classes[9].Name != "truck" {
		t.Errorf("Info = %+v", info)
	}
	if _, err := AppendCIFAR10Record(nil, testImage(31, 32, 0), 0); err == nil {
		t.Error("AppendCIFAR10Record accepted a 31×32 image")
	}
	if _, err := AppendCIFAR10Record(nil, testImage(32, 32, 0), 256); err == nil {
		t.Error("AppendCIFAR10Record accepted label 256")
	}
}

func TestCIFAR10BadSizes(t *testing.T) {
	rec, _ := AppendCIFAR10Record(nil, testImage(32, 32, 0), 1)
	tests := []struct {
		name string
		raw  []byte
		want string // substring of the error
	}{
		{"empty", nil, "empty file"},
		{"one byte short", rec[:CIFARRecordSize-1], "holds 0 whole records and 3072 extra bytes"},
		{"one byte long", append(append([]byte(nil), rec...), 0), "holds 1 whole records and 1 extra bytes"},
		{"2.5 records", append(append(append([]byte(nil), rec...), rec...), rec[:1500]...), "holds 2 whole records and 1500 extra bytes"},
		{"label 10", append([]byte{10}, rec[1:]...), "record 0 (byte offset 0) has label 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCIFAR10(tt.raw, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestOpenCIFAR10File(t *testing.T) {
	dir := t.TempDir()
	rec, _ := AppendCIFAR10Record(nil, testImage(32, 32, 0), 1)
	p := filepath.Join(dir, "x.bin")
	if err := os.WriteFile(p, append(rec, rec[:100]...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenCIFAR10(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "holds 1 whole records") {
		t.Fatalf("truncated file: error %v, want it to name the file and the whole records", err)
	}
	if err := os.WriteFile(p, rec, 0o644); err != nil {
		t.Fatal(err)
	}
	// Class names from batches.meta.txt beside the file.
	if err := os.WriteFile(filepath.Join(dir, "batches.meta.txt"), []byte("a\nbb\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := OpenCIFAR10(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classes(); len(got) != 2 || got[1] != "bb" {
		t.Errorf("classes %q, want [a bb]", got)
	}
	if info := c.Info(); info.Path != p || info.Classes[1].Count != 1 {
		t.Errorf("Info = %+v", info)
	}
	// A label beyond the listed classes is an error.
	if err := os.WriteFile(filepath.Join(dir, "batches.meta.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCIFAR10(p); err == nil || !strings.Contains(err.Error(), "label 1") {
		t.Errorf("label beyond classes: error %v", err)
	}
	if _, err := OpenCIFAR10(filepath.Join(dir, "missing.bin")); err == nil || !strings.Contains(err.Error(), "missing.bin") {
		t.Errorf("missing file: error %v", err)
	}
}

// TestCIFAR10Golden checks the shared CIFAR-10 file against the MR
// golden's original images (variant 0 of images 0..7) and labels.
func TestCIFAR10Golden(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	golden := sharedpath.ForTest(t, "golden/mr")
	c, err := OpenCIFAR10(filepath.Join(assets, "cifar10", "test_batch_first1017.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 1017 {
		t.Fatalf("Len = %d, want 1017", c.Len())
	}
	raw, err := os.ReadFile(filepath.Join(golden, "images_8x60x32x32x3.u8"))
	if err != nil {
		t.Fatal(err)
	}
	const img = 32 * 32 * 3
	labels := []int{3, 8, 8, 0, 6, 6, 1, 6}
	for i := 0; i < 8; i++ {
		cs, err := c.Case(i)
		if err != nil {
			t.Fatal(err)
		}
		want := raw[i*60*img : i*60*img+img]
		if !bytes.Equal(cs.Image.Pix, want) {
			t.Errorf("image %d differs from golden/mr variant 0", i)
		}
		if cs.Label != labels[i] {
			t.Errorf("image %d label %d, want %d", i, cs.Label, labels[i])
		}
	}
	info := c.Info()
	total := 0
	for _, cl := range info.Classes {
		total += cl.Count
	}
	if total != 1017 || info.Classes[0].Name != "airplane" || info.Classes[9].Name != "truck" {
		t.Errorf("Info classes %+v (sum %d)", info.Classes, total)
	}
	if testing.Short() {
		return
	}
	mixed, err := OpenCIFAR10(filepath.Join(assets, "cifar10", "test_batch_10000_mixed.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if mixed.Len() != 10000 {
		t.Fatalf("mixed Len = %d", mixed.Len())
	}
	for _, i := range []int{0, 500, 1016} {
		a, _ := c.Case(i)
		b, _ := mixed.Case(i)
		if !a.Image.Equal(b.Image) || a.Label != b.Label {
			t.Errorf("record %d differs between the two files", i)
		}
	}
}

func FuzzCIFAR10(f *testing.F) {
	rec, _ := AppendCIFAR10Record(nil, testImage(32, 32, 5), 3)
	f.Add(rec)
	f.Add(append(append([]byte(nil), rec...), rec...))
	f.Add(rec[:100])
	f.Add([]byte{})
	f.Add(append([]byte{200}, rec[1:]...))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := NewCIFAR10(raw, nil)
		if err != nil {
			if c != nil {
				t.Fatal("non-nil source with an error")
			}
			return
		}
		if c.Len() != len(raw)/CIFARRecordSize || c.Len() == 0 {
			t.Fatalf("Len %d for %d bytes", c.Len(), len(raw))
		}
		for i := 0; i < c.Len(); i++ {
			cs, err := c.Case(i)
			if err != nil {
				t.Fatal(err)
			}
			if cs.Image.Validate() != nil || cs.Label < 0 || cs.Label > 9 {
				t.Fatalf("case %d: bad image or label %d", i, cs.Label)
			}
		}
		_ = c.Info()
	})
}

func BenchmarkCIFAR10Case(b *testing.B) {
	var raw []byte
	for i := 0; i < 100; i++ {
		raw, _ = AppendCIFAR10Record(raw, testImage(32, 32, byte(i)), i%10)
	}
	c, err := NewCIFAR10(raw, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(CIFARRecordSize)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := c.Case(i % 100); err != nil {
			b.Fatal(err)
		}
	}
}
