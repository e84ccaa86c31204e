package preprocess

import (
	"math"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
)

// TestResizeInvariants: sizes, identity, flat images stay flat, and the
// filter's weights sum to 1 (2^22) so no value leaves the input range.
func TestResizeInvariants(t *testing.T) {
	src := goldentest.RandomImage(37, 23, 1)
	orig := src.Clone()
	for _, sz := range [][2]int{{37, 23}, {1, 1}, {224, 224}, {37, 5}, {3, 23}, {100, 7}, {19, 60}} {
		got := Resize(src, sz[0], sz[1])
		if got.W != sz[0] || got.H != sz[1] || got.Validate() != nil {
			t.Errorf("Resize to %v: got %dx%d", sz, got.W, got.H)
		}
	}
	if !Resize(src, 37, 23).Equal(src) {
		t.Error("same-size resize is not a copy")
	}
	if !src.Equal(orig) {
		t.Fatal("Resize modified its source")
	}
	flat := rgb.New(13, 9)
	for i := range flat.Pix {
		flat.Pix[i] = uint8(i % 3 * 100)
	}
	for _, sz := range [][2]int{{50, 40}, {4, 3}, {13, 2}, {1, 9}} {
		got := Resize(flat, sz[0], sz[1])
		for i, v := range got.Pix {
			if v != uint8(i%3*100) {
				t.Fatalf("flat image resized to %v: value %d at %d, want %d", sz, v, i, i%3*100)
			}
		}
	}
	for _, n := range [][2]int{{32, 224}, {640, 416}, {426, 276}, {7, 3}, {3, 7}, {1000, 1}} {
		c := bilinearCoeffs(n[0], n[1])
		for o := 0; o < n[1]; o++ {
			var s int64
			for _, k := range c.k[o*c.ksize : o*c.ksize+c.n[o]] {
				s += int64(k)
			}
			if d := s - 1<<precisionBits; d < -int64(c.n[o]) || d > int64(c.n[o]) {
				t.Errorf("%d→%d output %d: weights sum to %d, want 2^22 ± taps", n[0], n[1], o, s)
			}
		}
	}
}

// TestResizeAxesSeparable: resizing only one axis touches only that axis.
func TestResizeAxesSeparable(t *testing.T) {
	src := goldentest.RandomImage(20, 10, 3)
	a := Resize(src, 20, 30) // vertical pass only
	for x := 0; x < 20; x++ {
		col := rgb.New(1, 10)
		for y := 0; y < 10; y++ {
			copy(col.Pix[y*3:y*3+3], src.Pix[(y*20+x)*3:])
		}
		c := Resize(col, 1, 30)
		for y := 0; y < 30; y++ {
			for ch := 0; ch < 3; ch++ {
				if c.Pix[y*3+ch] != a.Pix[(y*20+x)*3+ch] {
					t.Fatalf("column %d differs at row %d", x, y)
				}
			}
		}
	}
}

func TestResizeErrors(t *testing.T) {
	for _, tc := range []struct {
		src  rgb.Image
		w, h int
		want string
	}{
		{rgb.New(4, 4), 0, 3, "target size 0x3 must be at least 1x1"},
		{rgb.New(0, 4), 3, 3, "source image is empty"},
		{rgb.Image{W: 2, H: 2, Pix: make([]uint8, 5)}, 3, 3, "needs 12 bytes, has 5"},
	} {
		err := CheckResize(tc.src, tc.w, tc.h)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckResize(%dx%d → %dx%d) = %v, want %q", tc.src.W, tc.src.H, tc.w, tc.h, err, tc.want)
		}
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), tc.want) {
					t.Errorf("Resize panic = %v, want %q", p, tc.want)
				}
			}()
			Resize(tc.src, tc.w, tc.h)
		}()
	}
}

func TestNormalize(t *testing.T) {
	src := rgb.Image{W: 2, H: 1, Pix: []uint8{0, 128, 255, 10, 20, 30}}
	dst := make([]float32, 6)
	n := ImageNet()
	if err := Normalize(dst, src, n); err != nil {
		t.Fatal(err)
	}
	// CHW: plane c holds channel c of both pixels.
	for c := 0; c < 3; c++ {
		for p := 0; p < 2; p++ {
			v := src.Pix[p*3+c]
			x := float32(v) / 255
			x = float32(x - n.Mean[c])
			want := float32(x / n.Std[c])
			if got := dst[c*2+p]; got != want {
				t.Errorf("channel %d pixel %d = %v, want %v", c, p, got, want)
			}
			// Within rounding of the real-valued formula.
			exact := (float64(v)/255 - float64(n.Mean[c])) / float64(n.Std[c])
			if math.Abs(float64(dst[c*2+p])-exact) > 1e-6 {
				t.Errorf("channel %d pixel %d = %v, far from %v", c, p, dst[c*2+p], exact)
			}
		}
	}
	if err := Normalize(make([]float32, 6), src, Unit()); err != nil {
		t.Fatal(err)
	}
	if err := Normalize(make([]float32, 5), src, n); err == nil || !strings.Contains(err.Error(), "holds 5 values, a 2x1 image needs 3x2 = 6") {
		t.Errorf("short buffer error = %v", err)
	}
	if err := Normalize(dst, src, Norm{}); err == nil || !strings.Contains(err.Error(), "std[0] = 0") {
		t.Errorf("zero std error = %v", err)
	}
	c := Classifier{W: 4, H: 4, Norm: n}
	if err := c.Batch(make([]float32, c.Len()), []rgb.Image{src, src}); err == nil || !strings.Contains(err.Error(), "want 2 images x 48 = 96") {
		t.Errorf("batch size error = %v", err)
	}
	if err := c.Batch(make([]float32, 2*c.Len()), []rgb.Image{src, {W: 1, H: 1}}); err == nil || !strings.Contains(err.Error(), "batch image 1") {
		t.Errorf("bad image error = %v", err)
	}
	if err := (Classifier{Norm: n}).Into(nil, src); err == nil {
		t.Error("zero-size classifier accepted")
	}
}

func TestLetterboxGeometry(t *testing.T) {
	for _, tc := range []struct {
		w, h, size int
		want       Geometry
	}{
		{640, 426, 416, Geometry{W: 640, H: 426, Size: 416, NW: 416, NH: 276, DX: 0, DY: 70, Scale: 0.65}},
		{424, 640, 416, Geometry{W: 424, H: 640, Size: 416, NW: 275, NH: 416, DX: 70, DY: 0, Scale: 0.65}},
		{416, 416, 416, Geometry{W: 416, H: 416, Size: 416, NW: 416, NH: 416, Scale: 1}},
		{10000, 1, 416, Geometry{W: 10000, H: 1, Size: 416, NW: 416, NH: 1, DY: 207, Scale: 0.0416}},
	} {
		g, err := LetterboxGeometry(tc.w, tc.h, tc.size)
		if err != nil || g != tc.want {
			t.Errorf("LetterboxGeometry(%d, %d, %d) = %+v, %v; want %+v", tc.w, tc.h, tc.size, g, err, tc.want)
		}
	}
	if _, err := LetterboxGeometry(0, 5, 416); err == nil {
		t.Error("empty image accepted")
	}
	if _, err := LetterboxGeometry(5, 5, 0); err == nil {
		t.Error("size 0 accepted")
	}
	src := goldentest.RandomImage(30, 20, 4)
	dst := make([]float32, 3*16*16)
	g, err := Letterbox(dst, src, 16)
	if err != nil {
		t.Fatal(err)
	}
	// Padding rows are 0.5 everywhere, image rows are v/255.
	for c := 0; c < 3; c++ {
		for y := 0; y < 16; y++ {
			v := dst[c*256+y*16+5]
			inside := y >= g.DY && y < g.DY+g.NH
			if !inside && v != 0.5 {
				t.Errorf("padding (%d, 5, %d) = %v, want 0.5", c, y, v)
			}
			if v < 0 || v > 1 {
				t.Errorf("value %v outside [0, 1]", v)
			}
		}
	}
	if _, err := Letterbox(make([]float32, 10), src, 16); err == nil || !strings.Contains(err.Error(), "want 3x16x16 = 768") {
		t.Errorf("short buffer error = %v", err)
	}
}

func TestShorterSide(t *testing.T) {
	for _, tc := range [][5]int{{32, 32, 224, 224, 224}, {640, 480, 224, 298, 224}, {480, 640, 224, 224, 298}, {427, 640, 224, 224, 335}} {
		w, h := ShorterSide(tc[0], tc[1], tc[2])
		if w != tc[3] || h != tc[4] {
			t.Errorf("ShorterSide(%d, %d, %d) = %d, %d; want %d, %d", tc[0], tc[1], tc[2], w, h, tc[3], tc[4])
		}
	}
}

func BenchmarkResize(b *testing.B) {
	for _, tc := range []struct {
		name         string
		w, h, ow, oh int
	}{
		{"32x32to224x224", 32, 32, 224, 224},
		{"640x480to416x312", 640, 480, 416, 312},
	} {
		src := goldentest.RandomImage(tc.w, tc.h, 5)
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				Resize(src, tc.ow, tc.oh)
			}
		})
	}
}

func BenchmarkClassifier224(b *testing.B) {
	src := goldentest.RandomImage(32, 32, 6)
	c := Classifier{W: 224, H: 224, Norm: ImageNet()}
	dst := make([]float32, c.Len())
	for b.Loop() {
		if err := c.Into(dst, src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLetterbox(b *testing.B) {
	src := goldentest.RandomImage(640, 480, 7)
	dst := make([]float32, 3*416*416)
	for b.Loop() {
		if _, err := Letterbox(dst, src, 416); err != nil {
			b.Fatal(err)
		}
	}
}
