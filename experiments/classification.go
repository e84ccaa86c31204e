package experiments

import (
	"context"
	"fmt"
	"math"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
	"github.com/amt-dev/amt/sut"
)

// A classifier is a classification system under test: the top-1 class of
// each image of a batch.
type classifier interface {
	Classify(imgs []rgb.Image) ([]int, error)
}

// classificationStudy is the paper's first case study: an image
// classifier, and a follow-up is a violation iff its top-1 class differs
// from the source image's. A sweep classifies each image together with all
// its follow-ups in one batch.
type classificationStudy struct {
	src           source // the whole data set
	newClassifier func() (classifier, error)
	cfg           SUTConfig // the settings the cache key records
}

// newClassificationStudy checks that the model is a classifier and returns
// the case study over src.
func newClassificationStudy(cfg *Config, model *nn.Model, src source) (caseStudy, error) {
	if out := model.Outputs(); len(out) == 0 || len(out[0].Shape) != 2 {
		return nil, cfg.errAt("sut.model", "%s: want a classifier with logits [N, classes] as its first output, got %v", cfg.SUT.Model, out)
	}
	s := cfg.SUT
	newClassifier := func() (classifier, error) {
		c, err := sut.NewClassifier(model.Clone(), sut.ClassifierConfig{Width: s.InputWidth, Height: s.InputHeight, Mean: s.Mean, Std: s.Std, BatchSize: s.BatchSize})
		if err != nil {
			return nil, err
		}
		return classifierFunc(func(imgs []rgb.Image) ([]int, error) {
			preds, err := c.Classify(imgs)
			if err != nil {
				return nil, err
			}
			out := make([]int, len(preds))
			for i, p := range preds {
				out[i] = p.Class
			}
			return out, nil
		}), nil
	}
	if _, err := newClassifier(); err != nil {
		return nil, cfg.errAt("sut", "%w", err)
	}
	return &classificationStudy{src: src, newClassifier: newClassifier, cfg: s}, nil
}

// classifierFunc adapts a function to classifier.
type classifierFunc func([]rgb.Image) ([]int, error)

func (f classifierFunc) Classify(imgs []rgb.Image) ([]int, error) { return f(imgs) }

func (*classificationStudy) name() string { return studyClassification }

func (*classificationStudy) cacheKind() string { return "verdicts" }

func (s *classificationStudy) cacheKey(modelHash, dataHash, format string, variants []string) any {
	// The field names are part of the key (its JSON), typo included.
	return struct {
		Version               int
		Model, Data, Format   string
		Variants              []string
		Width, Height         int
		Mean, Std             [3]float64
		Verdict, Relations    string
		Preprocess, Classifer string
	}{1, modelHash, dataHash, format, variants, s.cfg.InputWidth, s.cfg.InputHeight, s.cfg.Mean, s.cfg.Std,
		"top-1 differs", "imgaug-0.2.6", "pillow-bilinear", "argmax-first"}
}

func (s *classificationStudy) newJudge() (judge, error) {
	c, err := s.newClassifier()
	if err != nil {
		return nil, err
	}
	return &classJudge{src: s.src, cls: c}, nil
}

func (*classificationStudy) decode(line []byte) (judgement, error) {
	return decodeJudgement[classJudgement](line)
}

func (*classificationStudy) verdict(j judgement, col int, v scenario.Variant) record.Verdict {
	c := j.(*classJudgement)
	p := c.Preds[col]
	return record.Verdict{
		Image: c.Image, MR: v.Action, Param: v.Value, Violation: p != c.Pred,
		PredOriginal: c.Pred, PredTransformed: p, Label: c.Label,
		MapOriginal: math.NaN(), MapTransformed: math.NaN(),
	}
}

func (s *classificationStudy) newEnv(n int, newExt func() (extractor, error), rel map[string]relation, sc scenario.Scenario) (Env, error) {
	cls, err := s.newClassifier()
	if err != nil {
		return nil, err
	}
	var ext extractor
	if newExt != nil {
		if ext, err = newExt(); err != nil {
			return nil, err
		}
	}
	return newOnlineEnv(limited{source: s.src, n: n}, ext, cls, rel, sc)
}

// classJudgement is one image of a classification table, a line of its
// verdict cache: the image's label (−1 when unknown) and the top-1 class
// of the source image and of every follow-up, in table order.
type classJudgement struct {
	Image int   `json:"image"`
	Label int   `json:"label"`
	Pred  int   `json:"pred"`
	Preds []int `json:"preds"`
}

func (j *classJudgement) image() int     { return j.Image }
func (j *classJudgement) id() int64      { return int64(j.Image) }
func (j *classJudgement) followUps() int { return len(j.Preds) }

// classJudge classifies an image and all its follow-ups, in one batch
// when they are small.
type classJudge struct {
	src   source
	cls   classifier
	batch []rgb.Image
}

// sweepBatchPixels bounds the full-resolution pixels of one classifier call
// of the sweep (source and follow-ups together, before the classifier
// resizes them): 4 Mi pixels, 12 MB of RGB. A CIFAR-10 image and its 59
// follow-ups (60 × 1,024 pixels) are one call; the follow-ups of larger
// images are classified a few at a time, and those of an image over the
// bound one at a time, so a worker holds at most the source and one
// full-resolution follow-up of a large image. Classifying images in several
// calls gives the same classes as in one (each image's logits are computed
// on their own; see package nn).
const sweepBatchPixels = 1 << 22

func (c *classJudge) judge(ctx context.Context, i int, vars []scenario.Variant, rel map[string]relation) (judgement, rgb.Image, error) {
	img, label, err := c.src.Image(i)
	if err != nil {
		return nil, rgb.Image{}, fmt.Errorf("sweep: image %d: %w", i, err)
	}
	per := max(1, sweepBatchPixels/max(1, img.W*img.H)) // images per call
	preds := make([]int, 0, len(vars)+1)
	defer func() { clear(c.batch) }() // let the images go
	for k := -1; k < len(vars); {
		if err := ctx.Err(); err != nil {
			return nil, rgb.Image{}, err
		}
		clear(c.batch)
		c.batch = c.batch[:0]
		for ; k < len(vars) && len(c.batch) < per; k++ {
			if k < 0 {
				c.batch = append(c.batch, img)
			} else {
				c.batch = append(c.batch, rel[vars[k].Key()].Apply(img))
			}
		}
		pred, err := c.cls.Classify(c.batch)
		if err != nil {
			return nil, rgb.Image{}, fmt.Errorf("sweep: image %d: %w", i, err)
		}
		if len(pred) != len(c.batch) {
			return nil, rgb.Image{}, fmt.Errorf("sweep: image %d: classifier returned %d predictions for %d images", i, len(pred), len(c.batch))
		}
		preds = append(preds, pred...)
	}
	return &classJudgement{Image: i, Label: label, Pred: preds[0], Preds: preds[1:]}, img, nil
}

// onlineEnv answers the loop by running the classifier, as the paper
// did: the context comes from the feature extractor applied to the source
// image, the verdict from classifying the source and the follow-up
// together (violation iff their top-1 classes differ).
type onlineEnv struct {
	sourceEnv
	src source
	sut classifier

	img   rgb.Image
	label int
}

// newOnlineEnv returns an Env over src. rel maps every follow-up key of the
// scenario (Variant.Key) to its relation; ext may be nil for runs without
// context (Dim 0).
func newOnlineEnv(src source, ext extractor, sut classifier, rel map[string]relation, sc scenario.Scenario) (*onlineEnv, error) {
	base, err := newSourceEnv(src.Len(), ext, rel, sc, nil)
	if err != nil {
		return nil, err
	}
	return &onlineEnv{sourceEnv: base, src: src, sut: sut}, nil
}

func (e *onlineEnv) load(i int) error {
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

// Load implements Env: it reads the source image.
func (e *onlineEnv) Load(_ context.Context, image int) error { return e.load(image) }

// Context implements Env: the extractor's features of the source image.
func (e *onlineEnv) Context(_ context.Context, image int) ([]float32, error) {
	if err := e.load(image); err != nil {
		return nil, err
	}
	return e.features(e.img)
}

// Evaluate implements Env: transform, classify source and follow-up in one
// batch, compare.
func (e *onlineEnv) Evaluate(_ context.Context, image int, v scenario.Variant) (Outcome, error) {
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
