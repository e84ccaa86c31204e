package mr

import "github.com/amt-dev/amt/rgb"

// Saturate is the saturate corruption of ImageNet-C and CIFAR-10-C
// (reference function saturate, one of the four extra corruptions): in
// skimage's HSV, S becomes clip(S·a + b, 0, 1), then back to RGB,
// clipped, ×255 and truncated. (a, b) by severity 1–5 is (0.3, 0),
// (0.1, 0), (1.5, 0), (2, 0.1), (2.5, 0.2) for images of at most 32×32
// (make_cifar_c.py) and (0.3, 0), (0.1, 0), (2, 0), (5, 0.1), (20, 0.2)
// for larger ones (imagenet_c/corruptions.py). Severities 1 and 2
// desaturate, 3–5 saturate. It does not move boxes.
type Saturate struct{ Severity int }

// Name implements Relation ("saturate:2").
func (c Saturate) Name() string { return sevName("saturate", c.Severity) }

// Apply implements Relation.
func (c Saturate) Apply(src rgb.Image) rgb.Image {
	mustCorruption("saturate", src, c.Severity)
	ab := pick(src, c.Severity,
		[5][2]float64{{0.3, 0}, {0.1, 0}, {1.5, 0}, {2, 0.1}, {2.5, 0.2}},
		[5][2]float64{{0.3, 0}, {0.1, 0}, {2, 0}, {5, 0.1}, {20, 0.2}})
	return mapHSV(src, func(h, s, v float64) (float64, float64, float64) {
		return h, min(max(s*ab[0]+ab[1], 0), 1), v
	})
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Saturate) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
