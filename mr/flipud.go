package mr

import "github.com/amt-dev/amt/rgb"

// FlipUD mirrors the image top to bottom (imgaug Flipud(1.0)). Box y
// coordinates map to (H−1)−y.
type FlipUD struct{}

// Name implements Relation.
func (FlipUD) Name() string { return "flipud" }

// Apply implements Relation.
func (FlipUD) Apply(src rgb.Image) rgb.Image {
	dst := followUp("flipud", src)
	n := src.W * 3
	for y := 0; y < src.H; y++ {
		copy(dst.Pix[y*n:(y+1)*n], src.Pix[(src.H-1-y)*n:(src.H-y)*n])
	}
	return dst
}

// ApplyBoxes implements Relation: y' = (h−1) − y.
func (FlipUD) ApplyBoxes(boxes []rgb.Box, _, h int) []rgb.Box {
	hm1 := float64(h - 1)
	return mapBoxes(boxes, func(x, y float64) (float64, float64) { return x, hm1 - y })
}
