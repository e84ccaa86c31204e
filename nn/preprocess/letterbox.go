package preprocess

import (
	"fmt"

	"github.com/amt-dev/amt/rgb"
)

// Geometry records how Letterbox placed a W×H image in a Size×Size input:
// resized to NW×NH and offset by (DX, DY); Scale = Size/max(W, H) undoes it.
type Geometry struct {
	W, H   int     // source image size
	Size   int     // square network input size
	NW, NH int     // resized image size
	DX, DY int     // offset of the resized image in the input
	Scale  float64 // r = Size / max(W, H), in float64
}

// LetterboxGeometry returns the letterbox placement of a w×h image in a
// size×size input (yolov3-tiny's preprocessing, golden/detection §2.4): the
// longer side becomes size, the other (H·size) div W (or (W·size) div H),
// centred with (size−nw) div 2, (size−nh) div 2.
func LetterboxGeometry(w, h, size int) (Geometry, error) {
	if w < 1 || h < 1 {
		return Geometry{}, fmt.Errorf("preprocess: letterbox: image size %dx%d must be at least 1x1", w, h)
	}
	if size < 1 {
		return Geometry{}, fmt.Errorf("preprocess: letterbox: input size %d must be at least 1", size)
	}
	g := Geometry{W: w, H: h, Size: size}
	if w >= h {
		g.NW, g.NH = size, h*size/w
	} else {
		g.NW, g.NH = w*size/h, size
	}
	// A very elongated image could round its short side to 0.
	g.NW, g.NH = max(g.NW, 1), max(g.NH, 1)
	g.DX, g.DY = (size-g.NW)/2, (size-g.NH)/2
	g.Scale = float64(size) / float64(max(w, h))
	return g, nil
}

// ToSource maps a point of the network input back to source-image pixels:
// ((x − DX)/Scale, (y − DY)/Scale). It does not clip.
func (g Geometry) ToSource(x, y float64) (float64, float64) {
	return (x - float64(g.DX)) / g.Scale, (y - float64(g.DY)) / g.Scale
}

// Letterbox writes src letterboxed into a size×size CHW float32 input in
// dst, which must hold exactly 3·size·size values: the image is resized to
// the geometry's NW×NH with Pillow's bilinear filter (Resize), scaled to
// float32(v)/float32(255) (no mean/std) and centred; the padding is 0.5.
func Letterbox(dst []float32, src rgb.Image, size int) (Geometry, error) {
	if err := src.Validate(); err != nil {
		return Geometry{}, fmt.Errorf("preprocess: letterbox: %w", err)
	}
	g, err := LetterboxGeometry(src.W, src.H, size)
	if err != nil {
		return Geometry{}, err
	}
	if len(dst) != 3*size*size {
		return Geometry{}, fmt.Errorf("preprocess: letterbox: destination holds %d values, want 3x%dx%d = %d", len(dst), size, size, 3*size*size)
	}
	img := src
	if g.NW != src.W || g.NH != src.H {
		img = Resize(src, g.NW, g.NH)
	}
	// The padding: whole rows above and below the image, the columns left
	// and right of it on its rows.
	plane := size * size
	for c := 0; c < 3; c++ {
		p := dst[c*plane : (c+1)*plane]
		fill(p[:g.DY*size], 0.5)
		fill(p[(g.DY+g.NH)*size:], 0.5)
		for y := g.DY; y < g.DY+g.NH; y++ {
			fill(p[y*size:y*size+g.DX], 0.5)
			fill(p[y*size+g.DX+g.NW:(y+1)*size], 0.5)
		}
	}
	t := Unit().table() // float32(v)/float32(255), as in the original
	for y := 0; y < g.NH; y++ {
		off := (g.DY+y)*size + g.DX
		t.planes(dst[off:off+g.NW], dst[plane+off:plane+off+g.NW], dst[2*plane+off:2*plane+off+g.NW], img.Pix[y*g.NW*3:])
	}
	return g, nil
}

// fill sets every value of s to v.
func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}
