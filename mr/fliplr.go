package mr

import "github.com/amt-dev/amt/rgb"

// FlipLR mirrors the image left to right (imgaug Fliplr(1.0)). Box x
// coordinates map to (W−1)−x, imgaug 0.2.6's 1-pixel convention.
type FlipLR struct{}

// Name implements Relation.
func (FlipLR) Name() string { return "fliplr" }

// Apply implements Relation.
func (FlipLR) Apply(src rgb.Image) rgb.Image {
	dst := followUp("fliplr", src)
	w := src.W
	for y := 0; y < src.H; y++ {
		s := src.Pix[y*w*3 : (y+1)*w*3]
		d := dst.Pix[y*w*3 : (y+1)*w*3]
		for x := 0; x < w; x++ {
			j := (w - 1 - x) * 3
			d[x*3], d[x*3+1], d[x*3+2] = s[j], s[j+1], s[j+2]
		}
	}
	return dst
}

// ApplyBoxes implements Relation: x' = (w−1) − x.
func (FlipLR) ApplyBoxes(boxes []rgb.Box, w, _ int) []rgb.Box {
	wm1 := float64(w - 1)
	return mapBoxes(boxes, func(x, y float64) (float64, float64) { return wm1 - x, y })
}
