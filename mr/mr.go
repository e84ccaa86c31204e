// Package mr implements the metamorphic relations (MRs) of adaptive
// metamorphic testing as transformations of RGB images and of the bounding
// boxes that belong to them.
//
// The seven relations of the paper — blur, fliplr, flipud, grayscale, invert,
// rotation by d degrees and shear by d degrees — reproduce the original
// implementation (imgaug 0.2.6 with its OpenCV 4.6 backend) bit for bit,
// including OpenCV's fixed-point bilinear warp and imgaug's box conventions
// (flips map x to (W−1)−x, affine corners are rounded to float32 first, the
// transformed box is the axis-aligned hull of its corners and is not clipped).
//
// Relations are plain values: Blur{}, Rotation{Degrees: 30}, and a Compose
// of relations applied in order is itself a Relation. The registry
// (Relations) has one entry per kind of relation: its name, constructor,
// parameter description and range, and doc line. New and Parse build
// relations from names ("rotation:30,invert") with range checks, and
// NewScenario and Builtin build the scenarios a bandit chooses from (the
// paper's hierarchical, basic, rotation and shear sets, the corruptions
// sets, or user-defined ones) as values of package scenario.
//
// The registry also holds Hendrycks & Dietterich's common corruptions
// (ImageNet-C, CIFAR-10-C; see corruptions), each parametrised by a
// severity 1–5 and written after the reference implementation. Those that
// draw random numbers are Random: they draw from a generator the caller
// passes (ApplyRand), or from Rand(seed, image, relation) (ApplySeed); a
// plain Apply is seed 0, so every relation's Apply stays a pure function
// of the image.
package mr

import (
	"fmt"

	"github.com/amt-dev/amt/rgb"
)

// Relation is a metamorphic relation: a deterministic transformation of a
// source test case into a follow-up test case.
//
// Apply never modifies src and returns an image of the same size. It panics
// if src is not a valid image (see rgb.Image.Validate) or if the relation's
// own parameters are invalid (see Validate); relations built by New or Parse
// are always valid.
//
// ApplyBoxes maps boxes in the coordinates of a w×h source image to the
// follow-up image's coordinates, the way imgaug 0.2.6 does; it returns a new
// slice (the input is not modified) and does not clip.
type Relation interface {
	// Name is the canonical name, accepted by Parse: "blur", "rotation:30",
	// or for a composition the comma-separated names of its parts.
	Name() string
	Apply(src rgb.Image) rgb.Image
	ApplyBoxes(boxes []rgb.Box, w, h int) []rgb.Box
}

// mustValid panics with a clear message when src is not a valid image.
func mustValid(name string, src rgb.Image) {
	if err := src.Validate(); err != nil {
		panic(fmt.Sprintf("mr: %s: invalid source image: %v", name, err))
	}
}

// followUp checks the source image of relation name's Apply (mustValid)
// and returns a new black image of its size for the follow-up.
func followUp(name string, src rgb.Image) rgb.Image {
	mustValid(name, src)
	return rgb.New(src.W, src.H)
}

// scratch returns buf[:n] when buf is long enough (a caller's stack array)
// and a new zeroed slice of length n otherwise.
func scratch[T any](buf []T, n int) []T {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]T, n)
}
