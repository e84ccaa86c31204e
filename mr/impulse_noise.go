package mr

import (
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// ImpulseNoise is the impulse_noise corruption of ImageNet-C and
// CIFAR-10-C: skimage.util.random_noise(x, mode='s&p', amount=c), which
// flips every channel value independently with probability c, a flipped
// value becoming 1 (salt) or 0 (pepper) with probability ½ each; then
// clipped, ×255 and truncated. c by severity 1–5 is 0.01, 0.02, 0.03,
// 0.05, 0.07 for images of at most 32×32 (make_cifar_c.py) and 0.03,
// 0.06, 0.09, 0.17, 0.27 for larger ones (imagenet_c/corruptions.py). It
// is Random: per value in Pix order, one rng.Float64 for the flip and,
// when flipped, one for salt or pepper. It does not move boxes.
type ImpulseNoise struct{ Severity int }

// Name implements Relation ("impulse_noise:2").
func (c ImpulseNoise) Name() string { return sevName("impulse_noise", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c ImpulseNoise) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c ImpulseNoise) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image {
	mustCorruption("impulse_noise", src, c.Severity)
	amount := pick(src, c.Severity, [5]float64{.01, .02, .03, .05, .07}, [5]float64{.03, .06, .09, 0.17, 0.27})
	return mapUnit(src, func(x float64) float64 {
		if rng.Float64() < amount {
			x = 0
			if rng.Float64() < 0.5 {
				x = 1
			}
		}
		return x
	})
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (ImpulseNoise) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
