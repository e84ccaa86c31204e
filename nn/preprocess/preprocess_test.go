package preprocess

import (
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/rgb"
)

// cifarImages reads the first n records of the CIFAR-10 binary test batch
// (1 label byte, then 1024 R, 1024 G, 1024 B) as HWC images.
func cifarImages(t testing.TB, n int) []rgb.Image {
	t.Helper()
	dir := sharedpath.ForTest(t, "assets/cifar10")
	raw, err := os.ReadFile(filepath.Join(dir, "test_batch_first1017.bin"))
	if err != nil {
		t.Fatal(err)
	}
	const rec = 3073
	if len(raw) < n*rec {
		t.Fatalf("CIFAR file holds %d bytes, want at least %d", len(raw), n*rec)
	}
	var out []rgb.Image
	for i := 0; i < n; i++ {
		r := raw[i*rec+1 : (i+1)*rec]
		im := rgb.New(32, 32)
		for p := 0; p < 1024; p++ {
			for c := 0; c < 3; c++ {
				im.Pix[p*3+c] = r[c*1024+p]
			}
		}
		out = append(out, im)
	}
	return out
}

// TestResizeGolden: Pillow 9.4 bilinear 32→224 of CIFAR images 0 and 1.
func TestResizeGolden(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/resize")
	want, err := os.ReadFile(filepath.Join(dir, "resized_2x224x224x3.u8"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 224 * 224 * 3
	if len(want) != 2*n {
		t.Fatalf("golden holds %d bytes, want %d", len(want), 2*n)
	}
	for i, im := range cifarImages(t, 2) {
		got := Resize(im, 224, 224)
		if got.W != 224 || got.H != 224 {
			t.Fatalf("size %dx%d", got.W, got.H)
		}
		diff := 0
		for j := range got.Pix {
			if got.Pix[j] != want[i*n+j] {
				diff++
			}
		}
		if diff != 0 {
			t.Errorf("image %d: %d of %d values differ from Pillow", i, diff, n)
		}
	}
}

// TestClassifierGolden: the full torchvision pipeline (resize 224, ToTensor,
// ImageNet Normalize) written into one NCHW batch buffer, bit-exact.
func TestClassifierGolden(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/resize")
	want := goldentest.ReadF32(t, filepath.Join(dir, "input_2x3x224x224.f32"))
	c := Classifier{W: 224, H: 224, Norm: ImageNet()}
	got := make([]float32, 2*c.Len())
	if err := c.Batch(got, cifarImages(t, 2)); err != nil {
		t.Fatal(err)
	}
	goldentest.BitEqualF32(t, "input", got, want)
}

// TestResNetInputGolden: normalisation without resize (ResNet-20 input).
func TestResNetInputGolden(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/onnx")
	want := goldentest.ReadF32(t, filepath.Join(dir, "cifar10_resnet20_input.f32"))
	const per = 3 * 32 * 32
	n := len(want) / per
	if n == 0 || len(want)%per != 0 {
		t.Fatalf("golden holds %d values, not a multiple of %d", len(want), per)
	}
	n = min(n, 64)
	c := Classifier{W: 32, H: 32, Norm: ImageNet()}
	got := make([]float32, n*per)
	if err := c.Batch(got, cifarImages(t, n)); err != nil {
		t.Fatal(err)
	}
	goldentest.BitEqualF32(t, "resnet20 input", got, want[:n*per])
}

// TestLetterboxGolden: image 22192 (640×426) letterboxed to 416, bit-exact.
func TestLetterboxGolden(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/detection")
	src := goldentest.ReadPNG(t, filepath.Join(dir, "mr_22192_decoded_rgb.png"))
	want := goldentest.ReadF32(t, filepath.Join(dir, "img_22192_input.f32"))
	got := make([]float32, 3*416*416)
	g, err := Letterbox(got, src, 416)
	if err != nil {
		t.Fatal(err)
	}
	wantG := Geometry{W: 640, H: 426, Size: 416, NW: 416, NH: 276, DX: 0, DY: 70, Scale: 0.65}
	if g != wantG {
		t.Errorf("geometry %+v, want %+v", g, wantG)
	}
	goldentest.BitEqualF32(t, "letterbox", got, want)
	x, y := g.ToSource(0, 70)
	if x != 0 || y != 0 {
		t.Errorf("ToSource(0, 70) = %v, %v, want 0, 0", x, y)
	}
}

// TestLetterboxJPEG letterboxes the two other golden detection images from
// Go-decoded JPEG pixels (Go's decoder differs from libjpeg-turbo by up to
// ~4 grey levels, so only the geometry is exact): the padding must match
// exactly and the image area within 6/255.
func TestLetterboxJPEG(t *testing.T) {
	gold := sharedpath.ForTest(t, "golden/detection")
	assets := sharedpath.ForTest(t, "assets/coco_val2017_subset158/val2017")
	for _, tc := range []struct {
		id   string
		w, h int
	}{{"802", 424, 640}, {"92660", 640, 427}} {
		f, err := os.Open(filepath.Join(assets, "000000"+strings.Repeat("0", 6-len(tc.id))+tc.id+".jpg"))
		if err != nil {
			t.Fatal(err)
		}
		im, err := jpeg.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		src := rgb.FromImage(im)
		if src.W != tc.w || src.H != tc.h {
			t.Fatalf("%s: decoded %dx%d, want %dx%d", tc.id, src.W, src.H, tc.w, tc.h)
		}
		want := goldentest.ReadF32(t, filepath.Join(gold, "img_"+tc.id+"_input.f32"))
		got := make([]float32, 3*416*416)
		g, err := Letterbox(got, src, 416)
		if err != nil {
			t.Fatal(err)
		}
		var maxd float64
		for i := range got {
			y, x := i/416%416, i%416
			inside := x >= g.DX && x < g.DX+g.NW && y >= g.DY && y < g.DY+g.NH
			if !inside {
				if got[i] != 0.5 || want[i] != 0.5 {
					t.Fatalf("%s: padding at %d = %v, golden %v", tc.id, i, got[i], want[i])
				}
				continue
			}
			maxd = math.Max(maxd, math.Abs(float64(got[i]-want[i])))
		}
		if maxd > 6.0/255 {
			t.Errorf("%s: max |Δ| = %v (%.1f/255), want ≤ 6/255", tc.id, maxd, maxd*255)
		}
		t.Logf("%s (%+v): max |Δ| vs Pillow-decoded input = %.1f/255", tc.id, g, maxd*255)
	}
}
