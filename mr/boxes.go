package mr

import "github.com/amt-dev/amt/rgb"

// hull returns the box spanned by corners (x1,y1),(x2,y2) mapped through f,
// as imgaug 0.2.6 does: the four corners are mapped as keypoints and the new
// box is their min/max hull, with W and H recomputed as x2'−x1', y2'−y1'.
func hull(b rgb.Box, f func(x, y float64) (float64, float64)) rgb.Box {
	x1, y1, x2, y2 := b.Corners()
	xs := [4]float64{x1, x2, x2, x1}
	ys := [4]float64{y1, y1, y2, y2}
	var minX, minY, maxX, maxY float64
	for i := range xs {
		x, y := f(xs[i], ys[i])
		if i == 0 || x < minX {
			minX = x
		}
		if i == 0 || x > maxX {
			maxX = x
		}
		if i == 0 || y < minY {
			minY = y
		}
		if i == 0 || y > maxY {
			maxY = y
		}
	}
	return rgb.BoxFromCorners(minX, minY, maxX, maxY)
}

// mapBoxes applies hull with f to every box.
func mapBoxes(boxes []rgb.Box, f func(x, y float64) (float64, float64)) []rgb.Box {
	out := make([]rgb.Box, len(boxes))
	for i, b := range boxes {
		out[i] = hull(b, f)
	}
	return out
}

// keepBoxes is the ApplyBoxes of a relation that moves no pixel
// (corners stay, W and H recomputed).
func keepBoxes(boxes []rgb.Box) []rgb.Box {
	return mapBoxes(boxes, func(x, y float64) (float64, float64) { return x, y })
}
