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
	for i := range dst {
		dst[i] = 0.5
	}
	var lut [256]float32
	for v := range lut {
		lut[v] = float32(v) / float32(255)
	}
	plane := size * size
	for y := 0; y < g.NH; y++ {
		row := img.Pix[y*g.NW*3:][:g.NW*3]
		off := (g.DY+y)*size + g.DX
		r, gr, b := dst[off:off+g.NW], dst[plane+off:plane+off+g.NW], dst[2*plane+off:2*plane+off+g.NW]
		for x := 0; x < g.NW; x++ {
			r[x], gr[x], b[x] = lut[row[x*3]], lut[row[x*3+1]], lut[row[x*3+2]]
		}
	}
	return g, nil
}
