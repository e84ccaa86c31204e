package mr

import "github.com/amt-dev/amt/rgb"

// Grayscale replaces every pixel by its luma, written to all three channels
// (imgaug Grayscale(alpha=1) = OpenCV 4's fixed-point RGB2GRAY:
// Y = (9798·R + 19235·G + 3735·B + 16384) >> 15). It does not move boxes.
type Grayscale struct{}

// Name implements Relation.
func (Grayscale) Name() string { return "grayscale" }

// Apply implements Relation.
func (Grayscale) Apply(src rgb.Image) rgb.Image {
	dst := followUp("grayscale", src)
	s, d := src.Pix, dst.Pix
	for i := 0; i+2 < len(s); i += 3 {
		y := uint8((9798*uint32(s[i]) + 19235*uint32(s[i+1]) + 3735*uint32(s[i+2]) + 16384) >> 15)
		d[i], d[i+1], d[i+2] = y, y, y
	}
	return dst
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Grayscale) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
