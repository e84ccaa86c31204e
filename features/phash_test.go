package features

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/rgb"
)

// cifarImages returns the first n images of the 1,017 lossless CIFAR-10
// test images of the shared assets.
func cifarImages(t testing.TB, n int) []rgb.Image {
	t.Helper()
	assets := sharedpath.ForTest(t, "assets")
	src, err := data.OpenCIFAR10(filepath.Join(assets, "cifar10", "test_batch_first1017.bin"))
	if err != nil {
		t.Fatal(err)
	}
	imgs := make([]rgb.Image, n)
	for i := range imgs {
		c, err := src.Case(i)
		if err != nil {
			t.Fatal(err)
		}
		imgs[i] = c.Image
	}
	return imgs
}

// phashImages returns the 9 fixture images of testdata/gen_phash.py:
// CIFAR-10 test images 0..7 and the Pillow-decoded COCO image 22192.
func phashImages(t testing.TB) []rgb.Image {
	t.Helper()
	golden := sharedpath.ForTest(t, "golden/detection")
	imgs := cifarImages(t, 8)
	f, err := os.Open(filepath.Join(golden, "mr_22192_decoded_rgb.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	coco, err := data.DecodeImage(f)
	if err != nil {
		t.Fatal(err)
	}
	return append(imgs, coco)
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPHashStages checks each stage against Pillow 9.4 / scipy outputs
// (testdata/gen_phash.py): grey conversion and Lanczos resize bit-exact,
// DCT to 1e-9 relative, and the hash bits.
func TestPHashStages(t *testing.T) {
	imgs := phashImages(t)
	gray := readFixture(t, "phash_gray.u8")
	resized := readFixture(t, "phash_resized.u8")
	dctRaw := readFixture(t, "phash_dct.f64")
	bitLines := strings.Fields(string(readFixture(t, "phash_bits.txt")))
	if len(gray) != 8*32*32 || len(resized) != 9*64*64 || len(dctRaw) != 9*256*8 || len(bitLines) != 9 {
		t.Fatal("fixture sizes are wrong; rerun testdata/gen_phash.py")
	}
	const n = 256
	for i, m := range imgs {
		l := grayL(m)
		if i < 8 && !bytes.Equal(l, gray[i*1024:(i+1)*1024]) {
			t.Errorf("image %d: convert(L) differs from Pillow", i)
		}
		r := preprocess.ResizeGray(l, m.W, m.H, 64, 64, preprocess.Lanczos)
		if want := resized[i*4096 : (i+1)*4096]; !bytes.Equal(r, want) {
			diff := 0
			for j := range r {
				if r[j] != want[j] {
					diff++
				}
			}
			t.Errorf("image %d (%dx%d): Lanczos resize differs from Pillow in %d of 4096 pixels", i, m.W, m.H, diff)
		}
		// DCT of Pillow's resized pixels.
		d := phashDCT(resized[i*4096 : (i+1)*4096])
		var want [n]float64
		scale := 0.0
		for j := range want {
			want[j] = math.Float64frombits(binary.LittleEndian.Uint64(dctRaw[(i*n+j)*8:]))
			scale = max(scale, math.Abs(want[j]))
		}
		for j := range want {
			if math.Abs(d[j]-want[j]) > 1e-9*scale {
				t.Errorf("image %d: dct[%d] = %v, scipy %v", i, j, d[j], want[j])
				break
			}
		}
		// Bits: equal, except where scipy's value is within rounding of
		// the median (none in these images).
		med := median(want[:])
		bits := phashBits(m)
		ones := 0
		for j, b := range bits {
			if b {
				ones++
			}
			if b != (bitLines[i][j] == '1') && math.Abs(want[j]-med) > 1e-9*scale {
				t.Errorf("image %d: bit %d = %v, imagehash %c", i, j, b, bitLines[i][j])
			}
		}
		if ones != n/2 {
			t.Errorf("image %d: %d bits set, want 128 (256 distinct values split at their median)", i, ones)
		}
	}
}

// TestDCTByHand checks the DCT on an impulse, where scipy's formula gives
// X[u][v] = 4·cos(πu/128)·cos(πv/128), and on a constant image, where only
// X[0][0] = 4·64·64·c is non-zero.
func TestDCTByHand(t *testing.T) {
	px := make([]uint8, 64*64)
	px[0] = 1
	d := phashDCT(px)
	for u := range 16 {
		for v := range 16 {
			want := 4 * math.Cos(math.Pi*float64(u)/128) * math.Cos(math.Pi*float64(v)/128)
			if math.Abs(d[u*16+v]-want) > 1e-12 {
				t.Errorf("impulse: X[%d][%d] = %v, want %v", u, v, d[u*16+v], want)
			}
		}
	}
	for i := range px {
		px[i] = 7
	}
	d = phashDCT(px)
	if math.Abs(d[0]-4*64*64*7) > 1e-9 {
		t.Errorf("constant: X[0][0] = %v, want %v", d[0], 4*64*64*7)
	}
	for j := 1; j < 256; j++ {
		if math.Abs(d[j]) > 1e-9 {
			t.Errorf("constant: X[%d][%d] = %v, want 0", j/16, j%16, d[j])
		}
	}
}

func fliplr(m rgb.Image) rgb.Image {
	out := rgb.New(m.W, m.H)
	for y := range m.H {
		for x := range m.W {
			copy(out.Pix[(y*m.W+x)*3:(y*m.W+x)*3+3], m.Pix[(y*m.W+m.W-1-x)*3:])
		}
	}
	return out
}

func TestPHashInvariants(t *testing.T) {
	imgs := phashImages(t)[:4]
	var p PHash
	if p.Dim() != 256 {
		t.Fatalf("Dim = %d", p.Dim())
	}
	batch, err := p.Extract(imgs)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range imgs {
		one, err := p.Extract([]rgb.Image{m.Clone()})
		if err != nil {
			t.Fatal(err)
		}
		if len(batch[i]) != 256 || !equalRows(batch[i], one[0]) {
			t.Errorf("image %d: batch row differs from the single-image row", i)
		}
		for _, v := range batch[i] {
			if v != 0 && v != 1 {
				t.Fatalf("image %d: feature %v is not 0 or 1", i, v)
			}
		}
		// Mirroring flips the sign of the odd horizontal frequencies, so
		// the hash changes.
		fl, err := p.Extract([]rgb.Image{fliplr(m)})
		if err != nil {
			t.Fatal(err)
		}
		if equalRows(fl[0], batch[i]) {
			t.Errorf("image %d: fliplr left the hash unchanged", i)
		}
		// The even horizontal frequencies (v even) are unchanged by a
		// mirror, the DC term included, so most bits stay.
		same := 0
		for j := range 256 {
			if j%2 == 0 && fl[0][j] == batch[i][j] {
				same++
			}
		}
		if same < 100 {
			t.Errorf("image %d: only %d of 128 even-frequency bits survive a mirror", i, same)
		}
	}
	for i := 1; i < len(batch); i++ {
		if equalRows(batch[0], batch[i]) {
			t.Errorf("images 0 and %d have the same hash", i)
		}
	}
	if _, err := p.Extract([]rgb.Image{{W: 2, H: 2, Pix: make([]uint8, 5)}}); err == nil || !strings.Contains(err.Error(), "image 0") {
		t.Errorf("bad image: error %v", err)
	}
	if _, err := p.Extract([]rgb.Image{rgb.New(0, 3)}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty image: error %v", err)
	}
	if out, err := p.Extract(nil); err != nil || len(out) != 0 {
		t.Errorf("no images: %v, %v", out, err)
	}
}

func equalRows(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNone(t *testing.T) {
	var n None
	out, err := n.Extract([]rgb.Image{rgb.New(3, 3), rgb.New(1, 1)})
	if err != nil || n.Dim() != 0 || len(out) != 2 || out[0] == nil || len(out[0]) != 0 {
		t.Errorf("None: Dim %d, rows %v, %v", n.Dim(), out, err)
	}
	if _, err := n.Extract([]rgb.Image{{W: 1, H: 1}}); err == nil {
		t.Error("None accepted an invalid image")
	}
}

func BenchmarkPHashCIFAR(b *testing.B) {
	m := rgb.New(32, 32)
	for i := range m.Pix {
		m.Pix[i] = uint8(i * 31)
	}
	imgs := []rgb.Image{m}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (PHash{}).Extract(imgs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPHash640x480(b *testing.B) {
	m := rgb.New(640, 480)
	for i := range m.Pix {
		m.Pix[i] = uint8(i * 31)
	}
	imgs := []rgb.Image{m}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (PHash{}).Extract(imgs); err != nil {
			b.Fatal(err)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		kind, model string
		dim         int
		err         string
	}{
		{"none", "", 0, ""},
		{"phash", "", 256, ""},
		{"hash", "", 0, `unknown kind "hash"`},
		{"phash", "x.onnx", 0, "takes no model"},
		{"model", filepath.Join(t.TempDir(), "missing.onnx"), 0, "missing.onnx"},
	}
	for _, tt := range tests {
		x, err := New(tt.kind, tt.model)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("New(%q, %q) error %v, want %q", tt.kind, tt.model, err, tt.err)
			}
			continue
		}
		if err != nil || x.Dim() != tt.dim {
			t.Errorf("New(%q, %q) = %v, %v; want Dim %d", tt.kind, tt.model, x, err, tt.dim)
		}
	}
}
