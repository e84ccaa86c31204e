package experiments

import (
	"context"
	"fmt"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
	"github.com/amt-dev/amt/sut"
)

// A Detector is a detection system under test: the detections of one
// image, in original-image pixels, sorted by descending score.
// *sut.Detector implements it.
type Detector interface {
	Detect(img rgb.Image) ([]sut.Detection, error)
}

// A BoxRelation is a relation that also maps ground-truth boxes of a w×h
// source image to the follow-up's coordinates (every relation of package
// mr is one).
type BoxRelation interface {
	Relation
	ApplyBoxes(boxes []rgb.Box, w, h int) []rgb.Box
}

// A CaseSource yields detection source cases: the image, its id and its
// ground truth (data.Source implements it).
type CaseSource interface {
	Len() int
	Case(i int) (data.Case, error)
}

// limitedCases is a CaseSource restricted to its first n cases.
type limitedCases struct {
	CaseSource
	n int
}

func (l limitedCases) Len() int { return l.n }

// Detection bundles what a detection verdict needs: the detector of one
// goroutine and the verdict rule.
type Detection struct {
	Detector Detector
	Oracle   sut.DetectionOracle
}

// groundTruth converts a case's annotations to the evaluator's type.
func groundTruth(anns []data.Annotation) []sut.Annotation {
	out := make([]sut.Annotation, len(anns))
	for i, a := range anns {
		out[i] = sut.Annotation{ID: a.ID, CategoryID: a.CategoryID, Box: a.Box, Area: a.Area, IsCrowd: a.IsCrowd}
	}
	return out
}

// transformGT maps ground truth through a relation, as the original did
// with imgaug: boxes become the axis-aligned hull of their transformed
// corners, unclipped; category, crowd flag and area are kept (the
// original deleted the segmentation and left area alone).
func transformGT(r Relation, gt []sut.Annotation, w, h int) ([]sut.Annotation, error) {
	if len(gt) == 0 {
		return nil, nil
	}
	br, ok := r.(BoxRelation)
	if !ok {
		return nil, fmt.Errorf("relation %T cannot transform bounding boxes", r)
	}
	boxes := make([]rgb.Box, len(gt))
	for i, a := range gt {
		boxes[i] = a.Box
	}
	nb := br.ApplyBoxes(boxes, w, h)
	if len(nb) != len(gt) {
		return nil, fmt.Errorf("relation %T returned %d boxes for %d", r, len(nb), len(gt))
	}
	out := make([]sut.Annotation, len(gt))
	for i, a := range gt {
		a.Box = nb[i]
		out[i] = a
	}
	return out, nil
}

// detectionOutcome runs one follow-up of a detection case: transform the
// image and its ground truth, detect, score both sides and apply the
// rule. srcDets are the source image's (cached) detections. The online
// env and the sweep both call it, so their verdicts agree.
func (d Detection) outcome(img rgb.Image, gt []sut.Annotation, srcDets []sut.Detection, r Relation) (Outcome, error) {
	fgt, err := transformGT(r, gt, img.W, img.H)
	if err != nil {
		return Outcome{}, err
	}
	dets, err := d.Detector.Detect(r.Apply(img))
	if err != nil {
		return Outcome{}, err
	}
	v, err := d.Oracle.Verdict(gt, srcDets, fgt, dets)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Violated: v.Violated, OriginalScore: v.MapOriginal, ModifiedScore: v.MapTransformed}, nil
}

// DetectionEnv answers the loop by running a detector, as the original's
// detection environment did: the context comes from the feature extractor
// applied to the source image; a follow-up transforms the image and its
// ground-truth boxes, and it is a violation iff its per-image COCO AP
// (against the transformed ground truth) is below the source's AP minus
// the oracle's threshold. Images without annotations score −1 on both
// sides and always pass. The source image's detections are computed once
// per image. Outcome scores are the two APs.
type DetectionEnv struct {
	sourceEnv
	src CaseSource
	det Detection

	c       data.Case
	gt      []sut.Annotation
	srcDets []sut.Detection
}

// NewDetectionEnv returns an Env over the cases of src. rel maps every
// follow-up key of the scenario to its relation, which must be able to
// transform boxes (BoxRelation); ext may be nil for runs without context.
func NewDetectionEnv(src CaseSource, ext Extractor, det Detection, rel map[string]Relation, sc scenario.Scenario) (*DetectionEnv, error) {
	if det.Detector == nil {
		return nil, fmt.Errorf("online: no detector")
	}
	if err := det.Oracle.Validate(); err != nil {
		return nil, fmt.Errorf("online: %w", err)
	}
	base, err := newSourceEnv(src.Len(), ext, rel, sc, func(key string, r Relation) error {
		if _, ok := r.(BoxRelation); !ok {
			return fmt.Errorf("online: the relation of follow-up %s cannot transform bounding boxes", key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &DetectionEnv{sourceEnv: base, src: src, det: det}, nil
}

func (e *DetectionEnv) load(i int) error {
	if e.cur == i {
		return nil
	}
	c, err := e.src.Case(i)
	if err != nil {
		return fmt.Errorf("image %d: %w", i, err)
	}
	e.c, e.gt, e.srcDets = c, groundTruth(c.Annotations), nil
	e.setCurrent(i)
	return nil
}

// Context implements Env: the extractor's features of the source image.
func (e *DetectionEnv) Context(_ context.Context, image int) ([]float32, error) {
	if err := e.load(image); err != nil {
		return nil, err
	}
	return e.features(e.c.Image)
}

// Evaluate implements Env: detect on the source (once per image) and on
// the follow-up, score both, compare.
func (e *DetectionEnv) Evaluate(_ context.Context, image int, v scenario.Variant) (Outcome, error) {
	if err := e.load(image); err != nil {
		return Outcome{}, err
	}
	r, err := e.relation(v)
	if err != nil {
		return Outcome{}, err
	}
	if e.srcDets == nil {
		d, err := e.det.Detector.Detect(e.c.Image)
		if err != nil {
			return Outcome{}, fmt.Errorf("source image: %w", err)
		}
		if d == nil {
			d = []sut.Detection{}
		}
		e.srcDets = d
	}
	return e.det.outcome(e.c.Image, e.gt, e.srcDets, r)
}
