package results_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"testing"
)

// pngTolerance is how far (in 16-bit channel units) a redrawn PNG figure may
// be from the committed one, pixel by pixel, in a build that fuses
// multiply-adds: two 8-bit levels (with GOAMD64=v3 every committed figure
// was within one, measured 2026-11-29).
const pngTolerance = 0x101 * 2

// sameDrawing reports whether the redrawn file got equals the committed
// want: byte for byte, except for PNG figures in a build that fuses
// multiply-adds (fusedMultiplyAdd: GOAMD64=v3 or later), where the
// rasteriser's anti-aliasing moves by a few levels. Those must decode to
// images of the same size whose channels differ by at most pngTolerance.
func sameDrawing(name string, got, want []byte) bool {
	if bytes.Equal(got, want) {
		return true
	}
	if !fusedMultiplyAdd || filepath.Ext(name) != ".png" {
		return false
	}
	a, err1 := png.Decode(bytes.NewReader(got))
	b, err2 := png.Decode(bytes.NewReader(want))
	if err1 != nil || err2 != nil || a.Bounds() != b.Bounds() {
		return false
	}
	return maxChannelDiff(a, b) <= pngTolerance
}

// maxChannelDiff returns the largest difference between two images of the
// same bounds in any channel of any pixel (16-bit units).
func maxChannelDiff(a, b image.Image) uint32 {
	var m uint32
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			for _, d := range [][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}, {a1, a2}} {
				m = max(m, max(d[0], d[1])-min(d[0], d[1]))
			}
		}
	}
	return m
}

// TestSameDrawing checks sameDrawing: exact bytes always, PNG figures within
// pngTolerance only in a build that fuses multiply-adds.
func TestSameDrawing(t *testing.T) {
	encode := func(level uint8) []byte {
		img := image.NewGray(image.Rect(0, 0, 4, 3))
		img.SetGray(2, 1, color.Gray{Y: level})
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, c := range []struct {
		name       string
		got, want  []byte
		same, used bool // same: the answer; used: the answer only where fusedMultiplyAdd
	}{
		{"a.png", encode(100), encode(100), true, false},
		{"a.png", encode(101), encode(100), true, true},
		{"a.png", encode(140), encode(100), false, false},
		{"a.svg", []byte("<svg x='1'/>"), []byte("<svg x='2'/>"), false, false},
		{"a.png", []byte("not a png"), encode(100), false, false},
	} {
		want := c.same
		if c.used {
			want = c.same == fusedMultiplyAdd
		}
		if got := sameDrawing(c.name, c.got, c.want); got != want {
			t.Errorf("%s: sameDrawing = %v, want %v (fusedMultiplyAdd %v)", c.name, got, want, fusedMultiplyAdd)
		}
	}
}
