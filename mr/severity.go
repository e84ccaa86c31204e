package mr

import (
	"fmt"
	"math"

	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
)

// The severities of the common corruptions (Hendrycks & Dietterich,
// "Benchmarking Neural Network Robustness to Common Corruptions and
// Perturbations", ICLR 2019): whole levels 1 (mildest) to 5.
const (
	MinSeverity = 1
	MaxSeverity = 5
)

// severity is the parameter of every corruption: a level in [1, 5]. Its
// halving scale is 1 level, so with the paper's halving rule (Top 10000) a
// violation at severity s earns 10000/2^(s−1): 10000, 5000, 2500, 1250,
// 625 — the mildest corruption that still breaks the model is worth most,
// as the smallest angle is for rotation.
var severity = scenario.Param{Name: "severity", Unit: "level", Symbol: "SEV", Min: MinSeverity, Max: MaxSeverity, Scale: 1}

// checkSeverity returns the one-line error for a severity that is not a
// whole number in [MinSeverity, MaxSeverity], naming the relation.
func checkSeverity(name string, s float64) error {
	if math.IsNaN(s) || s < MinSeverity || s > MaxSeverity || s != math.Trunc(s) {
		return fmt.Errorf("mr: %s: severity %v is out of range: want a whole number in [%d, %d]", name, s, MinSeverity, MaxSeverity)
	}
	return nil
}

// corruption is the registry entry of a corruption: parameter severity
// over the grid 1…5, built by mk at a checked severity.
func corruption(name, summary string, mk func(s int) Relation) Info {
	// The grid 1…5, a fresh slice per call as Relations promises.
	grid := []float64{1, 2, 3, 4, 5}
	return Info{Name: name, Summary: summary, Param: severity, Corruption: true, Grid: grid,
		New: func(v float64) (Relation, error) {
			if err := checkSeverity(name, v); err != nil {
				return nil, err
			}
			return mk(int(v)), nil
		}}
}

// sevName is a corruption's relation name ("gaussian_noise:3").
func sevName(name string, s int) string { return scenario.Key(name, float64(s)) }

// mustCorruption checks the arguments of corruption name's Apply: it
// panics when src is not a valid image (mustValid), then with
// checkSeverity's error when the severity s is invalid (a corruption
// built by hand).
func mustCorruption(name string, src rgb.Image, s int) {
	mustValid(name, src)
	mustParam(checkSeverity(name, float64(s)))
}

// small reports whether an image takes the CIFAR-10-C constants
// (make_cifar_c.py, written for 32×32 images): both sides at most 32.
// Larger images take ImageNet-C's (imagenet_c/corruptions.py, written for
// 224×224).
func small(img rgb.Image) bool { return img.W <= 32 && img.H <= 32 }

// pick returns the CIFAR-10-C constant of severity s for small images,
// the ImageNet-C one otherwise.
func pick[T any](img rgb.Image, s int, cifar, imagenet [5]T) T {
	if small(img) {
		return cifar[s-1]
	}
	return imagenet[s-1]
}
