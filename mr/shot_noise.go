package mr

import (
	"math"
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// ShotNoise is the shot_noise corruption of ImageNet-C and CIFAR-10-C:
// every channel value x = v/255 becomes Poisson(x·c)/c, clipped, ×255 and
// truncated. c by severity 1–5 is 500, 250, 100, 75, 50 for images of at
// most 32×32 (make_cifar_c.py) and 60, 25, 12, 5, 3 for larger ones
// (imagenet_c/corruptions.py). It is Random: one Poisson draw (poisson)
// per value in Pix order. It does not move boxes.
type ShotNoise struct{ Severity int }

// Name implements Relation ("shot_noise:2").
func (c ShotNoise) Name() string { return sevName("shot_noise", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c ShotNoise) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c ShotNoise) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image {
	mustCorruption("shot_noise", src, c.Severity)
	k := pick(src, c.Severity, [5]float64{500, 250, 100, 75, 50}, [5]float64{60, 25, 12, 5, 3})
	return mapUnit(src, func(x float64) float64 { return float64(poisson(rng, x*k)) / k })
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (ShotNoise) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// poisson draws from the Poisson distribution of mean lam ≥ 0 by numpy's
// legacy algorithms (RandomState.poisson, the reference's generator): the
// multiplication method below 10, Hörmann's PTRS transformed rejection
// (1993) with numpy's constants from 10 on. The draws differ from numpy's
// (another generator), the distribution is the same.
func poisson(rng *rand.Rand, lam float64) int {
	if lam <= 0 {
		return 0
	}
	if lam < 10 {
		enlam := math.Exp(-lam)
		x, prod := 0, 1.0
		for {
			prod *= rng.Float64()
			if prod <= enlam {
				return x
			}
			x++
		}
	}
	slam, loglam := math.Sqrt(lam), math.Log(lam)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invalpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := rng.Float64() - 0.5
		v := rng.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + lam + 0.43)
		if us >= 0.07 && v <= vr {
			return int(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(invalpha)-math.Log(a/(us*us)+b) <= -lam+k*loglam-lg {
			return int(k)
		}
	}
}
