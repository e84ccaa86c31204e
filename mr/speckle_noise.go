package mr

import (
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// SpeckleNoise is the speckle_noise corruption of ImageNet-C and
// CIFAR-10-C (one of the four extra corruptions): every channel value
// x = v/255 becomes x + x·N(0, c²), clipped, ×255 and truncated. c by
// severity 1–5 is 0.06, 0.1, 0.12, 0.16, 0.2 for images of at most 32×32
// (make_cifar_c.py) and 0.15, 0.2, 0.35, 0.45, 0.6 for larger ones
// (imagenet_c/corruptions.py). It is Random: one rng.NormFloat64 per value
// in Pix order. It does not move boxes.
type SpeckleNoise struct{ Severity int }

// Name implements Relation ("speckle_noise:2").
func (c SpeckleNoise) Name() string { return sevName("speckle_noise", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c SpeckleNoise) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c SpeckleNoise) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image {
	mustCorruption("speckle_noise", src, c.Severity)
	sd := pick(src, c.Severity, [5]float64{.06, .1, .12, .16, .2}, [5]float64{.15, .2, 0.35, 0.45, 0.6})
	return mapUnit(src, func(x float64) float64 { return x + x*(rng.NormFloat64()*sd) })
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (SpeckleNoise) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
