package mr

import (
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// GaussianNoise is the gaussian_noise corruption of ImageNet-C and
// CIFAR-10-C: every channel value x = v/255 becomes x + N(0, c²), clipped,
// ×255 and truncated. c by severity 1–5 is 0.04, 0.06, 0.08, 0.09, 0.10
// for images of at most 32×32 (make_cifar_c.py) and 0.08, 0.12, 0.18,
// 0.26, 0.38 for larger ones (imagenet_c/corruptions.py). It is Random:
// the normals are rng.NormFloat64, one per value in Pix order. It does not
// move boxes.
type GaussianNoise struct{ Severity int }

// Name implements Relation ("gaussian_noise:2").
func (c GaussianNoise) Name() string { return sevName("gaussian_noise", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c GaussianNoise) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c GaussianNoise) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image {
	mustCorruption("gaussian_noise", src, c.Severity)
	sd := pick(src, c.Severity, [5]float64{0.04, 0.06, .08, .09, .10}, [5]float64{.08, .12, 0.18, 0.26, 0.38})
	return mapUnit(src, func(x float64) float64 { return x + rng.NormFloat64()*sd })
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (GaussianNoise) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
