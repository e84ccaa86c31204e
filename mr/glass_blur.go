package mr

import (
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// GlassBlur is the glass_blur corruption of ImageNet-C and CIFAR-10-C:
// x = np.uint8(gaussian(v/255, σ)·255) (skimage's Gaussian, as in
// GaussianBlur, truncated without clipping); then, iterations times, for
// every row h from H−δ down to δ+1 and every column w from W−δ down to
// δ+1, a displacement (dx, dy) is drawn uniformly from [−δ, δ)² and pixel
// (h, w) takes the value of pixel (h+dy, w+dx); finally the Gaussian
// again, clipped, ×255 and truncated. (σ, δ, iterations) by severity 1–5
// is (0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2)
// for images of at most 32×32 (make_cifar_c.py) and (0.7, 1, 2),
// (0.9, 2, 1), (1, 2, 3), (1.1, 3, 2), (1.5, 4, 2) for larger ones
// (imagenet_c/corruptions.py).
//
// The reference means to swap the two pixels, but its
// x[h, w], x[h', w'] = x[h', w'], x[h, w] assigns numpy views: the first
// assignment overwrites x[h, w], the second writes it back to x[h', w']
// unchanged, so the net effect is a copy, which amt reproduces. Its loops
// run over the fixed sizes 32 and 224; amt's over the image's H and W.
// It is Random: dx then dy for each pixel visited, rng.IntN(2δ) − δ.
// It does not move boxes.
type GlassBlur struct{ Severity int }

// Name implements Relation ("glass_blur:2").
func (c GlassBlur) Name() string { return sevName("glass_blur", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c GlassBlur) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c GlassBlur) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image {
	return c.apply(src, rngDraws{rng})
}

func (c GlassBlur) apply(src rgb.Image, d draws) rgb.Image {
	mustCorruption("glass_blur", src, c.Severity)
	p := pick(src, c.Severity,
		[5][3]float64{{0.05, 1, 1}, {0.25, 1, 1}, {0.4, 1, 1}, {0.25, 1, 2}, {0.4, 1, 2}},
		[5][3]float64{{0.7, 1, 2}, {0.9, 2, 1}, {1, 2, 3}, {1.1, 3, 2}, {1.5, 4, 2}})
	sigma, delta, iters := p[0], int(p[1]), int(p[2])
	w, h := src.W, src.H
	if w == 0 || h == 0 {
		return rgb.New(w, h)
	}
	blur := gaussianFilter(unit(src), w, h, 3, sigma)
	x := make([]float64, len(blur))
	for i, v := range blur {
		x[i] = float64(uint8(v * 255))
	}
	for it := 0; it < iters; it++ {
		for y := h - delta; y > delta; y-- {
			for xx := w - delta; xx > delta; xx-- {
				dx := d.IntN(2*delta) - delta
				dy := d.IntN(2*delta) - delta
				copy(x[(y*w+xx)*3:][:3], x[((y+dy)*w+xx+dx)*3:][:3])
			}
		}
	}
	for i := range x {
		x[i] /= 255
	}
	return fromUnit(w, h, gaussianFilter(x, w, h, 3, sigma))
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (GlassBlur) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
