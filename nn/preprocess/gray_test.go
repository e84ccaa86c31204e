package preprocess

import (
	"bytes"
	"testing"

	"github.com/amt-dev/amt/rgb"
)

// TestResizeGrayIdentityAndConstant: resizing to the same size changes
// nothing, and a constant image stays constant at any size and with every
// filter (the weights of each output sum to one).
func TestResizeGrayIdentityAndConstant(t *testing.T) {
	px := make([]uint8, 10*7)
	for i := range px {
		px[i] = uint8(i * 37)
	}
	for _, f := range []Filter{Bilinear, Lanczos} {
		if got := ResizeGray(px, 10, 7, 10, 7, f); !bytes.Equal(got, px) {
			t.Errorf("filter %d: same-size resize changed the image", f)
		}
		for _, size := range [][4]int{{32, 32, 64, 64}, {640, 426, 64, 64}, {5, 200, 64, 64}, {64, 64, 3, 100}} {
			c := bytes.Repeat([]byte{201}, size[0]*size[1])
			got := ResizeGray(c, size[0], size[1], size[2], size[3], f)
			if len(got) != size[2]*size[3] || !bytes.Equal(got, bytes.Repeat([]byte{201}, len(got))) {
				t.Errorf("filter %d: constant %dx%d -> %dx%d is not constant", f, size[0], size[1], size[2], size[3])
			}
		}
	}
}

// TestResizeGrayMatchesRGB: the single-channel bilinear resize equals each
// channel of the (golden-tested) RGB resize, up and down.
func TestResizeGrayMatchesRGB(t *testing.T) {
	const w, h = 37, 23
	src := rgb.New(w, h)
	for i := range src.Pix {
		src.Pix[i] = uint8(i*131 + i/7)
	}
	for _, size := range [][2]int{{224, 224}, {11, 5}, {37, 50}, {80, 23}} {
		want := Resize(src, size[0], size[1])
		for c := 0; c < 3; c++ {
			plane := make([]uint8, w*h)
			for i := range plane {
				plane[i] = src.Pix[3*i+c]
			}
			got := ResizeGray(plane, w, h, size[0], size[1], Bilinear)
			for i, v := range got {
				if v != want.Pix[3*i+c] {
					t.Fatalf("%dx%d channel %d: pixel %d = %d, RGB resize gives %d", size[0], size[1], c, i, v, want.Pix[3*i+c])
				}
			}
		}
	}
}
