package preprocess

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/rgb"
)

// TestConventionValues checks every layout, channel order and scale
// against the values written out by their definitions: the same numbers as
// the NCHW RGB classifier, moved.
func TestConventionValues(t *testing.T) {
	img := rgb.Image{W: 3, H: 2, Pix: make([]uint8, 18)}
	for i := range img.Pix {
		img.Pix[i] = uint8(i*37 + 11)
	}
	mean, std := [3]float32{0.4, 0.5, 0.6}, [3]float32{0.2, 0.25, 0.3}
	scale := map[Scale]func(v uint8) float32{
		ScaleUnit:      func(v uint8) float32 { return float32(v) / 255 },
		ScalePixel:     func(v uint8) float32 { return float32(v) },
		ScaleSymmetric: func(v uint8) float32 { return float32(float32(v)/127.5) - 1 },
	}
	for sc, f := range scale {
		for _, layout := range []Layout{NCHW, NHWC} {
			for _, bgr := range []bool{false, true} {
				c := Classifier{W: 3, H: 2, Norm: Norm{Mean: mean, Std: std, Scale: sc}, Layout: layout, BGR: bgr}
				got := make([]float32, c.Len())
				if err := c.Into(got, img); err != nil {
					t.Fatal(err)
				}
				for i := range 6 {
					for k := range 3 { // colour R, G, B
						want := float32(float32(f(img.Pix[3*i+k])-mean[k]) / std[k])
						ch := k
						if bgr {
							ch = 2 - k
						}
						at := ch*6 + i
						if layout == NHWC {
							at = 3*i + ch
						}
						if got[at] != want {
							t.Fatalf("scale %s layout %s bgr %v: pixel %d colour %d at %d = %v, want %v", sc, layout, bgr, i, k, at, got[at], want)
						}
					}
				}
				if s := c.Shape(5); (layout == NHWC) != slices.Equal(s, []int{5, 2, 3, 3}) || (layout == NCHW) != slices.Equal(s, []int{5, 3, 2, 3}) {
					t.Errorf("layout %s: Shape(5) = %v", layout, s)
				}
			}
		}
	}
	// The zero convention is Normalize, bit for bit.
	c := Classifier{W: 3, H: 2, Norm: ImageNet()}
	a, b := make([]float32, 18), make([]float32, 18)
	if err := c.Into(a, img); err != nil {
		t.Fatal(err)
	}
	if err := Normalize(b, img, ImageNet()); err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("value %d: %v, Normalize %v", i, a[i], b[i])
		}
	}
}

func TestDetectInput(t *testing.T) {
	for _, tc := range []struct {
		shape   []int
		layout  Layout
		known   bool
		c, h, w int
		err     string
	}{
		{shape: []int{-1, 3, 224, 224}, layout: NCHW, known: true, c: 3, h: 224, w: 224},
		{shape: []int{1, 224, 224, 3}, layout: NHWC, known: true, c: 3, h: 224, w: 224},
		{shape: []int{-1, 1, 28, 28}, layout: NCHW, known: true, c: 1, h: 28, w: 28},
		{shape: []int{-1, 28, 28, 1}, layout: NHWC, known: true, c: 1, h: 28, w: 28},
		{shape: []int{-1, 3, -1, -1}, layout: NCHW, known: true, c: 3},
		{shape: []int{-1, -1, -1, 3}, layout: NHWC, known: true, c: 3},
		{shape: []int{-1, 3, 3, 3}, layout: NCHW, known: false, c: 3, h: 3, w: 3},
		{shape: []int{-1, 4, 32, 32}, err: "want [N, C, H, W] (nchw) or [N, H, W, C] (nhwc)"},
		{shape: []int{-1, 3, 32}, err: "rank 4"},
	} {
		d, err := DetectInput(tc.shape)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want one containing %q", tc.shape, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.shape, err)
		}
		want := InputShape{Layout: tc.layout, LayoutKnown: tc.known, Channels: tc.c, Height: tc.h, Width: tc.w}
		if d != want {
			t.Errorf("%v: %+v, want %+v", tc.shape, d, want)
		}
	}
}

func TestResolveInput(t *testing.T) {
	for _, tc := range []struct {
		shape  []int
		layout Layout
		err    string
	}{
		{shape: []int{1, 32, 32, 3}, layout: NHWC},
		{shape: []int{1, 32, 32, 3}, layout: NCHW, err: "layout nchw, but the model's input [1 32 32 3] is nhwc (channels last); want layout nhwc"},
		{shape: []int{1, 3, 32, 32}, layout: NHWC, err: "want layout nchw"},
		{shape: []int{1, 3, 3, 3}, layout: NHWC}, // ambiguous: as configured
	} {
		_, err := ResolveInput(tc.shape, tc.layout, false)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v as %s: error %v, want %q", tc.shape, tc.layout, err, tc.err)
		}
	}
}

func TestConventionNames(t *testing.T) {
	for i, n := range Layouts {
		if l, err := ParseLayout(n); err != nil || int(l) != i || l.String() != n {
			t.Errorf("layout %s: %v %v", n, l, err)
		}
	}
	for i, n := range Scales {
		if s, err := ParseScale(n); err != nil || int(s) != i || s.String() != n {
			t.Errorf("scale %s: %v %v", n, s, err)
		}
	}
	for _, n := range ChannelOrders {
		if b, err := ParseChannelOrder(n); err != nil || ChannelOrder(b) != n {
			t.Errorf("channel order %s: %v %v", n, b, err)
		}
	}
	if _, err := ParseScale("0-255"); err == nil || !strings.Contains(err.Error(), "unit, pixel, symmetric") {
		t.Errorf("ParseScale(0-255): %v", err)
	}
}
