// Package sut holds amt's systems under test: ONNX image classifiers and
// single-stage object detectors, and the verdict rules that decide whether
// a metamorphic follow-up violates the relation.
//
//   - Classifier: resize (Pillow-exact bilinear) → normalise → model →
//     logits → top-1 class and top-1/top-2 margin. Verdict: the follow-up's
//     top-1 class differs from the source's (ClassificationViolated).
//   - Detector: letterbox → model → detect.Decoder → NMS → top-K → boxes in
//     original pixels. Verdict: the per-image COCO AP of the follow-up
//     (against the transformed ground truth) is below the source's AP minus
//     a threshold (DetectionOracle).
//
// The numerics live in sub-packages without model dependencies: sut/detect
// (decoding, NMS) and sut/coco (COCO evaluation). The model is anything
// with nn.Model's Run method (the Model interface), so tests can use fakes.
package sut

import (
	"errors"
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/sut/coco"
)

// Model runs a batch through an inference engine: inputs in graph-input
// order, outputs in graph-output order. *nn.Model implements it.
type Model interface {
	Run(inputs ...*tensor.Dense) ([]*tensor.Dense, error)
}

// Detection is one detected object (COCO category id, score, [x,y,w,h] box
// in original-image pixels).
type Detection = coco.Detection

// Annotation is one ground-truth object of an image.
type Annotation = coco.Annotation

// ClassificationViolated is the classification verdict: the follow-up
// violates the relation iff its top-1 class differs from the source's.
func ClassificationViolated(source, followUp Prediction) bool {
	return source.Class != followUp.Class
}

// DefaultDetectionThreshold is the paper's (and Tetraband's) AP drop that
// makes a detection follow-up a violation.
const DefaultDetectionThreshold = 0.05

// DetectionOracle decides detection verdicts: a follow-up violates the
// relation iff AP(follow-up vs transformed ground truth) < AP(source vs
// ground truth) − Threshold, in float64. Images without annotations score
// −1 on both sides and therefore always pass.
type DetectionOracle struct {
	// Threshold is the tolerated AP drop (DefaultDetectionThreshold).
	Threshold float64
}

// DetectionVerdict is the outcome of one detection follow-up.
type DetectionVerdict struct {
	// MapOriginal and MapTransformed are the per-image AP@[.5:.95] of the
	// source and of the follow-up (−1 without annotations).
	MapOriginal, MapTransformed float64
	// Violated reports MapTransformed < MapOriginal − Threshold.
	Violated bool
}

// Validate reports whether the threshold is usable.
func (o DetectionOracle) Validate() error {
	if math.IsNaN(o.Threshold) || math.IsInf(o.Threshold, 0) || o.Threshold < 0 {
		return fmt.Errorf("sut: detection threshold %v, want a finite value ≥ 0", o.Threshold)
	}
	return nil
}

// Violated applies the rule to two per-image APs.
func (o DetectionOracle) Violated(mapOriginal, mapTransformed float64) bool {
	return mapTransformed < mapOriginal-o.Threshold
}

// Verdict scores the source detections against the source ground truth
// and the follow-up detections against the transformed ground truth
// (coco.ImageAP) and applies the rule.
func (o DetectionOracle) Verdict(sourceGT []Annotation, sourceDets []Detection, followGT []Annotation, followDets []Detection) (DetectionVerdict, error) {
	if err := o.Validate(); err != nil {
		return DetectionVerdict{}, err
	}
	mo, err := coco.ImageAP(sourceGT, sourceDets)
	if err != nil {
		return DetectionVerdict{}, fmt.Errorf("sut: source image: %w", err)
	}
	mt, err := coco.ImageAP(followGT, followDets)
	if err != nil {
		return DetectionVerdict{}, fmt.Errorf("sut: follow-up image: %w", err)
	}
	return DetectionVerdict{MapOriginal: mo, MapTransformed: mt, Violated: o.Violated(mo, mt)}, nil
}

// float32Data returns t's backing data as float32 after checking its
// shape against want (−1 = any size).
func float32Data(t *tensor.Dense, what string, want ...int) ([]float32, []int, error) {
	if t == nil {
		return nil, nil, fmt.Errorf("sut: %s is nil", what)
	}
	shape := []int(t.Shape())
	if len(shape) != len(want) {
		return nil, shape, fmt.Errorf("sut: %s has shape %v, want rank %d", what, shape, len(want))
	}
	for i, w := range want {
		if w >= 0 && shape[i] != w {
			return nil, shape, fmt.Errorf("sut: %s has shape %v, want dimension %d = %d", what, shape, i, w)
		}
	}
	data, ok := t.Data().([]float32)
	if !ok {
		return nil, shape, fmt.Errorf("sut: %s has type %v, want float32", what, t.Dtype())
	}
	n := 1
	for _, s := range shape {
		n *= s
	}
	if len(data) != n {
		return nil, shape, errors.New("sut: " + what + " is not a contiguous tensor")
	}
	return data, shape, nil
}
