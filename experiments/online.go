package experiments

import (
	"context"
	"fmt"

	"github.com/amt-dev/amt/rgb"
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
	src Source
	ext Extractor
	sut Classifier
	rel map[string]Relation

	cur     int
	img     rgb.Image
	label   int
	feats   []float32
	haveImg bool
}

// NewOnlineEnv returns an Env over src. rel maps every follow-up key of the
// scenario (Variant.Key) to its relation; ext may be nil for runs without
// context (Dim 0).
func NewOnlineEnv(src Source, ext Extractor, sut Classifier, rel map[string]Relation, sc Scenario) (*OnlineEnv, error) {
	for _, v := range sc.Variants() {
		if rel[v.Key()] == nil {
			return nil, fmt.Errorf("online: no relation for follow-up %s", v.Key())
		}
	}
	if src.Len() == 0 {
		return nil, fmt.Errorf("online: the data set is empty")
	}
	return &OnlineEnv{src: src, ext: ext, sut: sut, rel: rel, cur: -1}, nil
}

// Len implements Env.
func (e *OnlineEnv) Len() int { return e.src.Len() }

// Dim implements Env.
func (e *OnlineEnv) Dim() int {
	if e.ext == nil {
		return 0
	}
	return e.ext.Dim()
}

func (e *OnlineEnv) load(i int) error {
	if e.haveImg && e.cur == i {
		return nil
	}
	img, label, err := e.src.Image(i)
	if err != nil {
		return fmt.Errorf("image %d: %w", i, err)
	}
	e.cur, e.img, e.label, e.feats, e.haveImg = i, img, label, nil, true
	return nil
}

// Context implements Env: the extractor's features of the source image.
func (e *OnlineEnv) Context(_ context.Context, image int) ([]float32, error) {
	if err := e.load(image); err != nil {
		return nil, err
	}
	if e.ext == nil {
		return []float32{}, nil
	}
	if e.feats == nil {
		f, err := featuresOf(e.ext, e.img, image, e.ext.Dim())
		if err != nil {
			return nil, err
		}
		e.feats = f
	}
	return e.feats, nil
}

// featuresOf extracts the context features of one image (index image in
// the data set), checking that the extractor returned one row of dim values.
func featuresOf(ext Extractor, img rgb.Image, image, dim int) ([]float32, error) {
	f, err := ext.Extract([]rgb.Image{img})
	if err != nil {
		return nil, fmt.Errorf("features of image %d: %w", image, err)
	}
	if len(f) != 1 || len(f[0]) != dim {
		return nil, fmt.Errorf("features of image %d: extractor returned %d rows, want 1 of %d values", image, len(f), dim)
	}
	return f[0], nil
}

// Evaluate implements Env: transform, classify source and follow-up in one
// batch, compare.
func (e *OnlineEnv) Evaluate(_ context.Context, image int, v Variant) (Outcome, error) {
	if err := e.load(image); err != nil {
		return Outcome{}, err
	}
	r := e.rel[v.Key()]
	if r == nil {
		return Outcome{}, fmt.Errorf("no relation for follow-up %s", v.Key())
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
