package mr

import (
	"math"
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// MotionBlur is the motion_blur corruption of ImageNet-C and CIFAR-10-C:
// ImageMagick's MotionBlurImage(radius, σ, angle) with the angle drawn
// uniformly from [−45, 45) degrees. (radius, σ) by severity 1–5 is (6, 1),
// (6, 1.5), (6, 2), (8, 2), (9, 2.5) for images of at most 32×32
// (make_cifar_c.py) and (10, 3), (15, 5), (15, 8), (15, 12), (20, 15) for
// larger ones (imagenet_c/corruptions.py).
//
// The reference calls ImageMagick through wand on a PNG of the image; amt
// has no ImageMagick and restates MotionBlurImage (MagickCore/effect.c of
// ImageMagick 6.8 and later, and 7) instead (see magickMotionBlur): a
// one-sided Gaussian of 2·ceil(radius)+1 taps along the angle, edge
// pixels repeated, in 16-bit quantum truncated back to 8 bits. Measured
// against ImageMagick 6.9.11 Q16 itself through wand
// (testdata/corruptions/check_reference.py, TestCorruptionReference): no
// value more than 1 level off. It is Random: one uniform for the angle. It does not move boxes.
type MotionBlur struct{ Severity int }

// Name implements Relation ("motion_blur:2").
func (c MotionBlur) Name() string { return sevName("motion_blur", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c MotionBlur) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c MotionBlur) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image {
	return c.apply(src, rngDraws{rng})
}

func (c MotionBlur) apply(src rgb.Image, d draws) rgb.Image {
	mustCorruption("motion_blur", src, c.Severity)
	p := pick(src, c.Severity,
		[5][2]float64{{6, 1}, {6, 1.5}, {6, 2}, {8, 2}, {9, 2.5}},
		[5][2]float64{{10, 3}, {15, 5}, {15, 8}, {15, 12}, {20, 15}})
	angle := -45 + 90*d.Uniform()
	dst := rgb.New(src.W, src.H)
	magickMotionBlur(dst.Pix, src.Pix, src.W, src.H, 3, p[0], p[1], angle)
	return dst
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (MotionBlur) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// magickMotionBlur is ImageMagick's MotionBlurImage(radius, σ, angle) of
// an 8-bit w×h image with ch interleaved channels, into dst: width =
// 2·ceil(radius)+1 taps, tap i weighing exp(−i²/(2σ²)) (normalised to
// sum 1) and reading the pixel at (x + ceil(i·cos a − 0.5),
// y + ceil(i·sin a − 0.5)), coordinates outside the image clamped to its
// edge (the default virtual-pixel method); the sum is taken on the
// 16-bit quantum (v·257), rounded (ClampToQuantum), and scaled back to
// 8 bits as ImageMagick 6.9.11 Q16 writes an 8-bit PNG: q/257 truncated
// (what its output matches; rounding would be 1 level off on half the
// values).
func magickMotionBlur(dst, src []uint8, w, h, ch int, radius, sigma, angle float64) {
	width := int(2*math.Ceil(radius) + 1)
	if sigma < 1e-12 {
		sigma = 1e-12
	}
	k := make([]float64, width)
	norm := 0.0
	for i := range k {
		k[i] = math.Exp(-float64(i*i)/(2*sigma*sigma)) / (math.Sqrt(2*math.Pi) * sigma)
		norm += k[i]
	}
	for i := range k {
		k[i] /= norm
	}
	rad := angle * math.Pi / 180
	px, py := float64(width)*math.Sin(rad), float64(width)*math.Cos(rad)
	hyp := math.Hypot(px, py)
	ox, oy := make([]int, width), make([]int, width)
	for i := range ox {
		ox[i] = int(math.Ceil(float64(i)*py/hyp - 0.5))
		oy[i] = int(math.Ceil(float64(i)*px/hyp - 0.5))
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			for c := 0; c < ch; c++ {
				s := 0.0
				for i, kv := range k {
					sx := min(max(x+ox[i], 0), w-1)
					sy := min(max(y+oy[i], 0), h-1)
					s += kv * float64(257*int(src[(sy*w+sx)*ch+c]))
				}
				q := int(math.Min(math.Max(s, 0), 65535) + 0.5)
				dst[(y*w+x)*ch+c] = uint8(q / 257)
			}
		}
	}
}
