package experiments

import (
	"context"
	"fmt"

	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
)

// A Source yields the source cases of an experiment by index.
type Source interface {
	Len() int
	// Image returns case i's image and label (-1 when unlabelled).
	Image(i int) (rgb.Image, int, error)
}

// A Relation is a metamorphic relation's transformation of an image.
type Relation interface {
	Apply(src rgb.Image) rgb.Image
}

// A Classifier is a classification system under test: the top-1 class of
// each image of a batch.
type Classifier interface {
	Classify(imgs []rgb.Image) ([]int, error)
}

// An Extractor computes context features, one row of Dim values per image.
type Extractor interface {
	Dim() int
	Extract(imgs []rgb.Image) ([][]float32, error)
}

// OnlineEnv answers the loop by running the system under test, as the
// paper did: the context comes from the feature extractor applied to the
// source image, the verdict from classifying the source and the follow-up
// together (violation iff their top-1 classes differ).
type OnlineEnv struct {
	sourceEnv
	src Source
	sut Classifier

	img   rgb.Image
	label int
}

// NewOnlineEnv returns an Env over src. rel maps every follow-up key of the
// scenario (Variant.Key) to its relation; ext may be nil for runs without
// context (Dim 0).
func NewOnlineEnv(src Source, ext Extractor, sut Classifier, rel map[string]Relation, sc scenario.Scenario) (*OnlineEnv, error) {
	base, err := newSourceEnv(src.Len(), ext, rel, sc, nil)
	if err != nil {
		return nil, err
	}
	return &OnlineEnv{sourceEnv: base, src: src, sut: sut}, nil
}

func (e *OnlineEnv) load(i int) error {
	if e.cur == i {
		return nil
	}
	img, label, err := e.src.Image(i)
	if err != nil {
		return fmt.Errorf("image %d: %w", i, err)
	}
	e.img, e.label = img, label
	e.setCurrent(i)
	return nil
}

// Context implements Env: the extractor's features of the source image.
func (e *OnlineEnv) Context(_ context.Context, image int) ([]float32, error) {
	if err := e.load(image); err != nil {
		return nil, err
	}
	return e.features(e.img)
}

// Evaluate implements Env: transform, classify source and follow-up in one
// batch, compare.
func (e *OnlineEnv) Evaluate(_ context.Context, image int, v scenario.Variant) (Outcome, error) {
	if err := e.load(image); err != nil {
		return Outcome{}, err
	}
	r, err := e.relation(v)
	if err != nil {
		return Outcome{}, err
	}
	follow := r.Apply(e.img)
	pred, err := e.sut.Classify([]rgb.Image{e.img, follow})
	if err != nil {
		return Outcome{}, err
	}
	if len(pred) != 2 {
		return Outcome{}, fmt.Errorf("classifier returned %d predictions for 2 images", len(pred))
	}
	return classOutcome(pred[0], pred[1], e.label), nil
}

func classOutcome(orig, follow, label int) Outcome {
	o := Outcome{Violated: orig != follow}
	if label >= 0 {
		if orig == label {
			o.OriginalScore = 1
		}
		if follow == label {
			o.ModifiedScore = 1
		}
	}
	return o
}
