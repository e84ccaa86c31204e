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

// A classifier is a classification system under test: its prediction
// (top-1 class and logits) for each image of a batch. *sut.Classifier
// implements it.
type classifier interface {
	Classify(imgs []rgb.Image) ([]sut.Prediction, error)
}

// classificationStudy is the paper's first case study: an image
// classifier, and a follow-up is a violation iff its top-1 class differs
// from the source image's. A sweep classifies each image together with all
// its follow-ups in one batch.
type classificationStudy struct {
	src           source // the whole data set
	newClassifier func() (classifier, error)
	cfg           SUTConfig // the settings the cache key records
	// model and cc are the SUT's model and classifier configuration (for
	// the convention check, which tries other conventions on it).
	model *nn.Model
	cc    sut.ClassifierConfig
	// classes is the model's number of classes, 0 until known (a model
	// whose output does not fix it is asked on the first image).
	classes int
}

// newClassificationStudy checks that the model is a classifier and returns
// the case study over src.
func newClassificationStudy(cfg *Config, model *nn.Model, src source) (caseStudy, error) {
	if out := model.Outputs(); len(out) == 0 || len(out[0].Shape) != 2 {
		return nil, cfg.errAt("sut.model", "%s: want a classifier with logits [N, classes] as its first output, got %v", cfg.SUT.Model, out)
	}
	s := cfg.SUT
	cc, err := classifierConfig(s, modelChannels(s, model))
	if err != nil {
		return nil, cfg.errAt("sut", "%w", err)
	}
	newClassifier := func() (classifier, error) {
		return sut.NewClassifier(model.Clone(), cc)
	}
	if _, err := newClassifier(); err != nil {
		return nil, cfg.errAt("sut", "%w", err)
	}
	st := &classificationStudy{src: src, newClassifier: newClassifier, cfg: s, model: model, cc: cc}
	if k := model.Outputs()[0].Shape[1]; k > 0 {
		st.classes = k
	}
	return st, nil
}

func (*classificationStudy) name() string { return studyClassification }

func (*classificationStudy) cacheKind() string { return "verdicts" }

func (s *classificationStudy) cacheKey(modelHash, dataHash, format string, variants []string) any {
	// The field names are part of the key (its JSON), typo included; a
	// non-default input convention is folded in (withConvention).
	return withConvention(struct {
		Version               int
		Model, Data, Format   string
		Variants              []string
		Width, Height         int
		Mean, Std             [3]float64
		Verdict, Relations    string
		Preprocess, Classifer string
	}{1, modelHash, dataHash, format, variants, s.cfg.InputWidth, s.cfg.InputHeight, s.cfg.Mean, s.cfg.Std,
		"top-1 differs", "imgaug-0.2.6", "pillow-bilinear", "argmax-first"}, s.cc)
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

// sutAnswer classifies source image i alone (a batch of one, as the
// online env does for the context) and returns its grey-box block.
func (s *classificationStudy) newSutAnswer() (func(i int) ([]float32, error), error) {
	cls, err := s.newClassifier()
	if err != nil {
		return nil, err
	}
	return func(i int) ([]float32, error) {
		img, _, err := s.src.Image(i)
		if err != nil {
			return nil, fmt.Errorf("sut features: image %d: %w", i, err)
		}
		p, err := cls.Classify([]rgb.Image{img})
		if err != nil {
			return nil, fmt.Errorf("sut features: image %d: %w", i, err)
		}
		if len(p) != 1 {
			return nil, fmt.Errorf("sut features: image %d: the classifier returned %d predictions for 1 image", i, len(p))
		}
		return classSutFeatures(p[0].Logits)
	}, nil
}

func (*classificationStudy) sutBlock() string {
	return "softmax of the source image's logits (batch of one), then the top-1 − top-2 logit margin"
}

// sutDim is the number of classes + 1 (classSutFeatures).
func (s *classificationStudy) sutDim() (int, error) {
	if s.classes == 0 {
		img, _, err := s.src.Image(0)
		if err != nil {
			return 0, fmt.Errorf("sut features: image 0: %w", err)
		}
		cls, err := s.newClassifier()
		if err != nil {
			return 0, err
		}
		p, err := cls.Classify([]rgb.Image{img})
		if err != nil {
			return 0, fmt.Errorf("sut features: image 0: %w", err)
		}
		if len(p) != 1 || len(p[0].Logits) == 0 {
			return 0, fmt.Errorf("sut features: the classifier returned %d predictions for 1 image", len(p))
		}
		s.classes = len(p[0].Logits)
	}
	return s.classes + 1, nil
}

func (s *classificationStudy) newEnv(n int, newExt func() (extractor, error), withSut bool, rel map[string]relation, sc scenario.Scenario) (Env, error) {
	sutDim := 0
	if withSut {
		var err error
		if sutDim, err = s.sutDim(); err != nil {
			return nil, err
		}
	}
	cls, err := s.newClassifier()
	if err != nil {
		return nil, err
	}
	ext, err := optionalExtractor(newExt)
	if err != nil {
		return nil, err
	}
	return newOnlineEnv(limited{source: s.src, n: n}, ext, sutDim, cls, rel, sc)
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
		for _, p := range pred {
			preds = append(preds, p.Class)
		}
	}
	return &classJudgement{Image: i, Label: label, Pred: preds[0], Preds: preds[1:]}, img, nil
}

// onlineEnv answers the loop by running the classifier, as the paper
// did: the context comes from the feature extractor applied to the source
// image (and, with the grey-box block, from classifying the source
// image), the verdict from classifying the source and the follow-up
// together (violation iff their top-1 classes differ); a source image
// classified already for its context is not classified again.
type onlineEnv struct {
	sourceEnv
	src source
	cls classifier

	img   rgb.Image
	label int
	pred  *sut.Prediction // the source image's, once classified
}

// newOnlineEnv returns an Env over src. rel maps every follow-up key of the
// scenario (Variant.Key) to its relation; ext may be nil for runs without
// such features; sutDim > 0 appends the grey-box block of that length.
func newOnlineEnv(src source, ext extractor, sutDim int, cls classifier, rel map[string]relation, sc scenario.Scenario) (*onlineEnv, error) {
	base, err := newSourceEnv(src.Len(), ext, sutDim, rel, sc, nil)
	if err != nil {
		return nil, err
	}
	return &onlineEnv{sourceEnv: base, src: src, cls: cls}, nil
}

// load loads source image i (sourceEnv.load).
func (e *onlineEnv) load(i int) error { return e.sourceEnv.load(i, e.read) }

// read reads source image i and its label.
func (e *onlineEnv) read(i int) error {
	img, label, err := e.src.Image(i)
	if err != nil {
		return err
	}
	e.img, e.label, e.pred = img, label, nil
	return nil
}

// Load implements Env: it reads the source image.
func (e *onlineEnv) Load(_ context.Context, image int) error { return e.load(image) }

// Context implements Env: the extractor's features of the source image,
// then the grey-box block of its classification.
func (e *onlineEnv) Context(_ context.Context, image int) ([]float32, error) {
	if err := e.load(image); err != nil {
		return nil, err
	}
	return e.context(e.img, func() ([]float32, error) {
		if e.pred == nil {
			p, err := e.cls.Classify([]rgb.Image{e.img})
			if err != nil {
				return nil, err
			}
			if len(p) != 1 {
				return nil, fmt.Errorf("classifier returned %d predictions for 1 image", len(p))
			}
			e.pred = &p[0]
		}
		return classSutFeatures(e.pred.Logits)
	})
}

// Evaluate implements Env: transform, classify the follow-up (with the
// source image in one batch, unless it is classified already), compare.
func (e *onlineEnv) Evaluate(_ context.Context, image int, v scenario.Variant) (Outcome, error) {
	if err := e.load(image); err != nil {
		return Outcome{}, err
	}
	r, err := e.relation(v)
	if err != nil {
		return Outcome{}, err
	}
	batch := []rgb.Image{e.img, r.Apply(e.img)}
	if e.pred != nil {
		batch = batch[1:]
	}
	pred, err := e.cls.Classify(batch)
	if err != nil {
		return Outcome{}, err
	}
	if len(pred) != len(batch) {
		return Outcome{}, fmt.Errorf("classifier returned %d predictions for %d images", len(pred), len(batch))
	}
	if e.pred == nil {
		e.pred = &pred[0]
	}
	return classOutcome(e.pred.Class, pred[len(pred)-1].Class, e.label), nil
}

func classOutcome(orig, follow, label int) Outcome {
	o := Outcome{Violated: orig != follow, PredOriginal: orig, PredModified: follow, Label: label}
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
