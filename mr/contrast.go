package mr

import "github.com/amt-dev/amt/rgb"

// Contrast is the contrast corruption of ImageNet-C and CIFAR-10-C
// (reference function contrast): with x = v/255 and m the channel's mean
// over the image, x becomes (x − m)·c + m, clipped, ×255 and truncated.
// c by severity 1–5 is 0.75, 0.5, 0.4, 0.3, 0.15 for images of at most
// 32×32 (make_cifar_c.py) and 0.4, 0.3, 0.2, 0.1, 0.05 for larger ones
// (imagenet_c/corruptions.py). It does not move boxes.
type Contrast struct{ Severity int }

// Name implements Relation ("contrast:2").
func (c Contrast) Name() string { return sevName("contrast", c.Severity) }

// Apply implements Relation.
func (c Contrast) Apply(src rgb.Image) rgb.Image {
	mustCorruption("contrast", src, c.Severity)
	k := pick(src, c.Severity, [5]float64{.75, .5, .4, .3, .15}, [5]float64{.4, .3, .2, .1, .05})
	dst := rgb.New(src.W, src.H)
	n := src.W * src.H
	if n == 0 {
		return dst
	}
	// The channel means of x = v/255: sum the byte values exactly, then
	// divide (np.mean's rounding differs by at most a few ulps).
	var sum [3]int
	for i, v := range src.Pix {
		sum[i%3] += int(v)
	}
	var lut [3][256]uint8
	for ch := range lut {
		m := float64(sum[ch]) / 255 / float64(n)
		for v := range lut[ch] {
			lut[ch][v] = toByte((float64(v)/255-m)*k + m)
		}
	}
	for i, v := range src.Pix {
		dst.Pix[i] = lut[i%3][v]
	}
	return dst
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Contrast) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
