package data

import (
	"bytes"
	"errors"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
)

// TestFolderPixelBudget: images over the budget are refused when the
// folder is opened, from their headers alone, and the error names them.
func TestFolderPixelBudget(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"), 4, 3, 1)
	// A 61-byte PNG declaring 60000×60000 (a decompression bomb) and a
	// header declaring 10000×10000: neither is decoded.
	os.WriteFile(filepath.Join(dir, "bomb.png"), goldentest.BombPNG(60000, 60000), 0o644)
	os.WriteFile(filepath.Join(dir, "big.png"), goldentest.BombPNG(10000, 10000), 0o644)

	_, err := OpenFolder(dir)
	want := "folder: " + dir + ": 2 of the 3 images are larger than the limit of 33554432 pixels: big.png (10000×10000), bomb.png (60000×60000)"
	if err == nil || err.Error() != want {
		t.Fatalf("OpenFolder: error %v\nwant %s", err, want)
	}
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Max != DefaultMaxPixels || tl.Width != 10000 {
		t.Errorf("error %v: no TooLargeError with the budget in its chain (%+v)", err, tl)
	}
	// A larger budget admits the 10000×10000 header, not the bomb.
	_, err = Open(Spec{Path: dir, MaxPixels: 100_000_000})
	if err == nil || !strings.Contains(err.Error(), "1 of the 3 images is larger than the limit of 100000000 pixels: bomb.png (60000×60000)") {
		t.Errorf("MaxPixels 1e8: error %v", err)
	}
	// A smaller one refuses even the 4×3 image, and Info gives the
	// common size when there is one.
	os.Remove(filepath.Join(dir, "bomb.png"))
	os.Remove(filepath.Join(dir, "big.png"))
	if _, err := Open(Spec{Path: dir, MaxPixels: 11}); err == nil || !strings.Contains(err.Error(), "a.png (4×3)") {
		t.Errorf("MaxPixels 11: error %v", err)
	}
	writePNG(t, filepath.Join(dir, "b.png"), 4, 3, 2)
	src, err := Open(Spec{Path: dir, MaxPixels: 12})
	if err != nil {
		t.Fatal(err)
	}
	if info := src.Info(); info.Width != 4 || info.Height != 3 {
		t.Errorf("Info %+v, want 4×3", info)
	}
	writePNG(t, filepath.Join(dir, "c.png"), 3, 3, 2)
	if f, err := OpenFolder(dir); err != nil || f.Info().Width != 0 {
		t.Errorf("mixed sizes: %v, Info %+v, want width 0", err, f.Info())
	}
	// A file that is not an image is refused at once, by name.
	os.WriteFile(filepath.Join(dir, "d.jpg"), []byte("GIF89a"), 0o644)
	if _, err := OpenFolder(dir); err == nil || !strings.Contains(err.Error(), "d.jpg: not a PNG or JPEG file") {
		t.Errorf("non-image: error %v", err)
	}
}

// TestDecodeBudgetAfterLongHeader: the size check does not depend on the
// size being near the start of the file (a JPEG may carry hundreds of
// kilobytes of metadata before it).
func TestDecodeBudgetAfterLongHeader(t *testing.T) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(8, 8, 1), nil); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	// SOI, then 3 APP1 segments of 60 KB each, then the rest.
	long := append([]byte(nil), raw[:2]...)
	for range 3 {
		seg := make([]byte, 60000)
		long = append(long, 0xff, 0xe1, byte((len(seg)+2)>>8), byte(len(seg)+2))
		long = append(long, seg...)
	}
	long = append(long, raw[2:]...)
	img, err := Decoder{MaxPixels: 64}.Decode(bytes.NewReader(long))
	if err != nil || img.W != 8 {
		t.Fatalf("within the budget: %v", err)
	}
	var tl *TooLargeError
	if _, err := (Decoder{MaxPixels: 63}).Decode(bytes.NewReader(long)); !errors.As(err, &tl) {
		t.Fatalf("over the budget: error %v, want a TooLargeError", err)
	}
	for _, tc := range []struct {
		raw  []byte
		want string
	}{
		{nil, "empty file"},
		{[]byte("\x89PNG\r\n\x1a\n"), "PNG header: no image size"},
		{long[:100000], "JPEG header: no image size"},
		{goldentest.BombPNG(0, 5), "PNG header:"},
	} {
		if _, err := DecodeImage(bytes.NewReader(tc.raw)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("% x…: error %v, want %q", tc.raw[:min(len(tc.raw), 8)], err, tc.want)
		}
	}
}

// TestCOCOPixelBudget: a COCO image whose width × height in the JSON is
// over the budget is refused when the file is opened.
func TestCOCOPixelBudget(t *testing.T) {
	doc := strings.Replace(smallCOCO, `"file_name": "b.jpg", "width": 16, "height": 16`, `"file_name": "b.jpg", "width": 60000, "height": 60000`, 1)
	p := cocoFixture(t, doc, smallCOCOImages())
	_, err := OpenCOCO(p, "")
	var tl *TooLargeError
	if err == nil || !strings.Contains(err.Error(), "1 of the 3 images is larger than the limit of 33554432 pixels: images[1] b.jpg (60000×60000)") || !errors.As(err, &tl) {
		t.Fatalf("error %v", err)
	}
	// Within a budget that admits the JSON's size, the decoded image must
	// still match it; below the real image's 16×16 the header check refuses it.
	doc = strings.Replace(smallCOCO, `"file_name": "b.jpg", "width": 16, "height": 16`, `"file_name": "b.jpg", "width": 4, "height": 4`, 1)
	p = cocoFixture(t, doc, smallCOCOImages())
	c, err := Open(Spec{Path: p, MaxPixels: 200})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Case(1); !errors.As(err, &tl) || !strings.Contains(err.Error(), "b.jpg: 16×16 = 256 pixels, more than the limit of 200 pixels") {
		t.Errorf("Case: error %v", err)
	}
}

// FuzzDecodeImage: no file makes the decoder panic; an error is one line;
// a decoded image has the size its header declares, within the budget.
func FuzzDecodeImage(f *testing.F) {
	for _, name := range []string{"cmyk.jpg", "gray.jpg", "palette.png", "rgba.png"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte("\xff\xd8\xff"))
	d := Decoder{MaxPixels: 1 << 16} // small, so that the fuzzer reaches the budget
	f.Fuzz(func(t *testing.T, raw []byte) {
		img, err := d.Decode(bytes.NewReader(raw))
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		cfg, _, err := d.Config(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("decoded, but the header is refused: %v", err)
		}
		if img.W != cfg.Width || img.H != cfg.Height || int64(img.W)*int64(img.H) > 1<<16 {
			t.Fatalf("decoded %d×%d, header %d×%d, budget %d pixels", img.W, img.H, cfg.Width, cfg.Height, 1<<16)
		}
		if len(img.Pix) != 3*img.W*img.H {
			t.Fatalf("%d×%d image with %d values", img.W, img.H, len(img.Pix))
		}
	})
}
