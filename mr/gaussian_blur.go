package mr

import "github.com/amt-dev/amt/rgb"

// GaussianBlur is the gaussian_blur corruption of ImageNet-C and
// CIFAR-10-C (one of the four extra corruptions):
// skimage.filters.gaussian(v/255, σ, multichannel=True) — SciPy's
// separable Gaussian, truncated at 4σ, border mode "nearest" — clipped,
// ×255 and truncated. σ by severity 1–5 is 0.4, 0.6, 0.7, 0.8, 1 for
// images of at most 32×32 (make_cifar_c.py) and 1, 2, 3, 4, 6 for larger
// ones (imagenet_c/corruptions.py). It does not move boxes.
type GaussianBlur struct{ Severity int }

// Name implements Relation ("gaussian_blur:2").
func (c GaussianBlur) Name() string { return sevName("gaussian_blur", c.Severity) }

// Apply implements Relation.
func (c GaussianBlur) Apply(src rgb.Image) rgb.Image {
	mustCorruption("gaussian_blur", src, c.Severity)
	sigma := pick(src, c.Severity, [5]float64{.4, .6, .7, .8, 1}, [5]float64{1, 2, 3, 4, 6})
	if src.W == 0 || src.H == 0 {
		return rgb.New(src.W, src.H)
	}
	return fromUnit(src.W, src.H, gaussianFilter(unit(src), src.W, src.H, 3, sigma))
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (GaussianBlur) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
