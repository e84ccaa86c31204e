// Package rgb defines the two value types that flow between amt's packages:
// an 8-bit RGB image (what data sources produce, metamorphic relations
// transform and systems under test consume) and an axis-aligned box in COCO
// [x, y, w, h] pixel form (what detection ground truth and detections are).
//
// The package is a leaf: it imports only the standard library, so data, mr,
// nn and sut can share these types without depending on each other.
package rgb

import (
	"fmt"
	"image"
	"image/color"
)

// Image is an 8-bit RGB image stored row-major with interleaved channels
// (H×W×3, "HWC"), the layout of numpy arrays from PIL and OpenCV.
// Pix[(y*W+x)*3+c] is channel c (0 = R, 1 = G, 2 = B) of pixel (x, y).
//
// Image implements image.Image, so it can be passed to image/png directly.
type Image struct {
	W, H int
	Pix  []uint8
}

// New returns a black image of the given size. It panics if w or h is negative.
func New(w, h int) Image {
	if w < 0 || h < 0 {
		panic(fmt.Sprintf("rgb: negative size %dx%d", w, h))
	}
	return Image{W: w, H: h, Pix: make([]uint8, w*h*3)}
}

// Validate reports whether the image's buffer matches its size.
func (m Image) Validate() error {
	if m.W < 0 || m.H < 0 {
		return fmt.Errorf("rgb: negative size %dx%d", m.W, m.H)
	}
	if len(m.Pix) != m.W*m.H*3 {
		return fmt.Errorf("rgb: %dx%d image needs %d bytes, has %d", m.W, m.H, m.W*m.H*3, len(m.Pix))
	}
	return nil
}

// Clone returns a deep copy of m.
func (m Image) Clone() Image {
	return Image{W: m.W, H: m.H, Pix: append([]uint8(nil), m.Pix...)}
}

// Equal reports whether two images have the same size and pixels.
func (m Image) Equal(o Image) bool {
	if m.W != o.W || m.H != o.H || len(m.Pix) != len(o.Pix) {
		return false
	}
	for i := range m.Pix {
		if m.Pix[i] != o.Pix[i] {
			return false
		}
	}
	return true
}

// ColorModel implements image.Image.
func (m Image) ColorModel() color.Model { return color.RGBAModel }

// Bounds implements image.Image.
func (m Image) Bounds() image.Rectangle { return image.Rect(0, 0, m.W, m.H) }

// At implements image.Image.
func (m Image) At(x, y int) color.Color {
	if x < 0 || y < 0 || x >= m.W || y >= m.H {
		return color.RGBA{}
	}
	i := (y*m.W + x) * 3
	return color.RGBA{R: m.Pix[i], G: m.Pix[i+1], B: m.Pix[i+2], A: 255}
}

// FromImage converts any image.Image to an RGB Image. Alpha is dropped
// (pixels are taken as if composited on black, as PIL's convert('RGB') does
// for premultiplied colour); grey images are replicated to three channels.
func FromImage(src image.Image) Image {
	b := src.Bounds()
	dst := New(b.Dx(), b.Dy())
	switch s := src.(type) {
	case Image:
		return s.Clone()
	case *image.RGBA:
		for y := 0; y < dst.H; y++ {
			row := s.Pix[(y)*s.Stride:]
			for x := 0; x < dst.W; x++ {
				copy(dst.Pix[(y*dst.W+x)*3:], row[x*4:x*4+3])
			}
		}
		return dst
	case *image.NRGBA:
		if opaque(s) {
			for y := 0; y < dst.H; y++ {
				row := s.Pix[y*s.Stride:]
				for x := 0; x < dst.W; x++ {
					copy(dst.Pix[(y*dst.W+x)*3:], row[x*4:x*4+3])
				}
			}
			return dst
		}
	case *image.Gray:
		for y := 0; y < dst.H; y++ {
			for x := 0; x < dst.W; x++ {
				v := s.Pix[y*s.Stride+x]
				i := (y*dst.W + x) * 3
				dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2] = v, v, v
			}
		}
		return dst
	}
	for y := 0; y < dst.H; y++ {
		for x := 0; x < dst.W; x++ {
			r, g, bl, _ := src.At(b.Min.X+x, b.Min.Y+y).RGBA()
			i := (y*dst.W + x) * 3
			dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2] = uint8(r>>8), uint8(g>>8), uint8(bl>>8)
		}
	}
	return dst
}

func opaque(s *image.NRGBA) bool {
	for y := 0; y < s.Rect.Dy(); y++ {
		row := s.Pix[y*s.Stride:]
		for x := 0; x < s.Rect.Dx(); x++ {
			if row[x*4+3] != 255 {
				return false
			}
		}
	}
	return true
}

// Box is an axis-aligned box in COCO form: top-left corner (X, Y), width W
// and height H, in pixels of the image it belongs to (float64, unclipped).
type Box struct {
	X, Y, W, H float64
}

// Corners returns the box's top-left (x1, y1) and bottom-right (x2, y2) corners.
func (b Box) Corners() (x1, y1, x2, y2 float64) { return b.X, b.Y, b.X + b.W, b.Y + b.H }

// BoxFromCorners returns the box spanned by (x1, y1) and (x2, y2), computing
// the width and height as x2−x1 and y2−y1 (as imgaug does).
func BoxFromCorners(x1, y1, x2, y2 float64) Box { return Box{X: x1, Y: y1, W: x2 - x1, H: y2 - y1} }

// Area returns W·H.
func (b Box) Area() float64 { return b.W * b.H }
