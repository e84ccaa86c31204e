package experiments

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
	"github.com/amt-dev/amt/sut"
)

// A detector is a detection system under test: the detections of one
// image, in original-image pixels, sorted by descending score.
// *sut.Detector implements it.
type detector interface {
	Detect(img rgb.Image) ([]sut.Detection, error)
}

// A boxRelation is a relation that also maps ground-truth boxes of a w×h
// source image to the follow-up's coordinates (every relation of package
// mr is one).
type boxRelation interface {
	relation
	ApplyBoxes(boxes []rgb.Box, w, h int) []rgb.Box
}

// A caseSource yields detection source cases: the image, its id and its
// ground truth (data.Source implements it).
type caseSource interface {
	Len() int
	Case(i int) (data.Case, error)
}

// limitedCases is a caseSource restricted to its first n cases.
type limitedCases struct {
	caseSource
	n int
}

func (l limitedCases) Len() int { return l.n }

// caseCacheBytes is the most image pixels (bytes) the cachedCases of an
// online detection run keeps: the 158-image COCO subset of the paper's
// detection runs decodes to 145 MB.
const caseCacheBytes = 256 << 20

// cachedCases is a caseSource that keeps the cases it has read, up to
// budget bytes of pixels (the first ones read), so that the runs of an
// online experiment, every agent and seed over the same cases, decode each
// image once (a 640×480 JPEG takes about 8 ms, outside the iterations'
// timer). Consumers never modify a case's image: the relations and the
// detector's letterbox write new ones.
type cachedCases struct {
	caseSource
	budget int
	mu     sync.Mutex
	cases  map[int]data.Case
	bytes  int
}

// Case implements caseSource.
func (c *cachedCases) Case(i int) (data.Case, error) {
	c.mu.Lock()
	cs, ok := c.cases[i]
	c.mu.Unlock()
	if ok {
		return cs, nil
	}
	cs, err := c.caseSource.Case(i)
	if err != nil {
		return cs, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(cs.Image.Pix); c.bytes+n <= c.budget {
		if c.cases == nil {
			c.cases = map[int]data.Case{}
		}
		c.cases[i], c.bytes = cs, c.bytes+n
	}
	return cs, nil
}

// detection bundles what a detection verdict needs: the detector of one
// goroutine and the verdict rule.
type detection struct {
	detector detector
	oracle   sut.DetectionOracle
}

// detectionStudy is the paper's second case study: a single-stage COCO
// detector, and a follow-up (the image and its ground-truth boxes
// transformed) is a violation iff its per-image COCO AP is below the
// source's AP minus the oracle's threshold. The verdict cache holds the
// APs, not the verdicts, so the threshold is applied when a table is read.
type detectionStudy struct {
	cases       caseSource // the whole data set
	newDetector func() (detector, error)
	oracle      sut.DetectionOracle
	cfg         SUTConfig // the settings the cache key records
}

// newDetectionStudy checks that the model is a detector the configured
// pipeline can decode and returns the case study over cases.
func newDetectionStudy(cfg *Config, model *nn.Model, cases caseSource) (caseStudy, error) {
	if out := model.Outputs(); len(out) > 0 && len(out[0].Shape) == 2 {
		return nil, cfg.errAt("sut.model", "%s looks like a classifier (its first output %q is [N, classes] logits); case_study detection needs a single-stage detector with raw YOLO heads [1, anchors·(5+classes), gridH, gridW]",
			filepath.Base(cfg.SUT.Model), out[0].Name)
	}
	d := sut.DefaultDetectorConfig()
	d.InputSize = cfg.SUT.InputWidth
	d.Post.ScoreThreshold = cfg.SUT.Detection.ScoreThreshold
	d.Post.IoUThreshold = cfg.SUT.Detection.NMSIoU
	d.Post.MaxDetections = cfg.SUT.Detection.MaxDetections
	s := &detectionStudy{cases: cases, oracle: sut.DetectionOracle{Threshold: cfg.SUT.Detection.Threshold}, cfg: cfg.SUT,
		newDetector: func() (detector, error) { return sut.DetectorFor(model.Clone(), d) }}
	if _, err := s.newDetector(); err != nil {
		return nil, cfg.errAt("sut.model", "%w", err)
	}
	if err := s.oracle.Validate(); err != nil {
		return nil, cfg.errAt("sut.threshold", "%w", err)
	}
	return s, nil
}

func (*detectionStudy) name() string { return studyDetection }

func (*detectionStudy) cacheKind() string { return "detection-verdicts" }

func (s *detectionStudy) cacheKey(modelHash, dataHash, format string, variants []string) any {
	d := s.cfg.Detection
	return struct {
		Version                         int
		Model, Data, Format             string
		Variants                        []string
		InputSize                       int
		ScoreThreshold, NMSIoU          float64
		MaxDetections                   int
		Decoder, Preprocess, Evaluation string
		Relations, Boxes                string
	}{1, modelHash, dataHash, format, variants, s.cfg.InputWidth, d.ScoreThreshold, d.NMSIoU, d.MaxDetections,
		"yolov3-tiny", "letterbox-pillow-bilinear", "coco-ap-0.50:0.95-all-100-per-image", "imgaug-0.2.6", "imgaug-0.2.6-hull-unclipped"}
}

func (s *detectionStudy) newJudge() (judge, error) {
	d, err := s.newDetector()
	if err != nil {
		return nil, err
	}
	return &detectionJudge{cases: s.cases, det: detection{detector: d, oracle: s.oracle}}, nil
}

func (*detectionStudy) decode(line []byte) (judgement, error) {
	return decodeJudgement[detectionJudgement](line)
}

func (s *detectionStudy) verdict(j judgement, col int, v scenario.Variant) record.Verdict {
	d := j.(*detectionJudgement)
	return record.Verdict{
		Image: d.Image, MR: v.Action, Param: v.Value, Violation: s.oracle.Violated(d.Map, d.Maps[col]),
		PredOriginal: -1, PredTransformed: -1, Label: -1,
		MapOriginal: d.Map, MapTransformed: d.Maps[col],
	}
}

// newSutAnswer detects on source image i and returns the summary of its
// detections.
func (s *detectionStudy) newSutAnswer() (func(i int) ([]float32, error), error) {
	det, err := s.newDetector()
	if err != nil {
		return nil, err
	}
	return func(i int) ([]float32, error) {
		c, err := s.cases.Case(i)
		if err != nil {
			return nil, fmt.Errorf("sut features: image %d: %w", i, err)
		}
		d, err := det.Detect(c.Image)
		if err != nil {
			return nil, fmt.Errorf("sut features: image %d: %w", i, err)
		}
		return detectionSutFeatures(d, c.Image.W, c.Image.H)
	}, nil
}

func (*detectionStudy) sutBlock() string {
	return "summary of the source image's detections, 7 values (detectionSutFeatures)"
}

func (*detectionStudy) sutDim() (int, error) { return detectionSutDim, nil }

func (s *detectionStudy) newEnv(n int, newExt func() (extractor, error), withSut bool, rel map[string]relation, sc scenario.Scenario) (Env, error) {
	det, err := s.newDetector()
	if err != nil {
		return nil, err
	}
	ext, err := optionalExtractor(newExt)
	if err != nil {
		return nil, err
	}
	return newDetectionEnv(&cachedCases{caseSource: limitedCases{caseSource: s.cases, n: n}, budget: caseCacheBytes}, ext, withSut, detection{detector: det, oracle: s.oracle}, rel, sc)
}

// detectionJudgement is one image of a detection table, a line of its
// verdict cache: the data set's image id and the per-image AP of the
// source and of every follow-up, in table order (−1 for an image without
// annotations).
type detectionJudgement struct {
	Image int       `json:"image"`
	ID    int64     `json:"id"`
	Map   float64   `json:"map"`
	Maps  []float64 `json:"maps"`
}

func (j *detectionJudgement) image() int     { return j.Image }
func (j *detectionJudgement) id() int64      { return j.ID }
func (j *detectionJudgement) followUps() int { return len(j.Maps) }

// detectionJudge detects on the source image once, then on every
// follow-up.
type detectionJudge struct {
	cases caseSource
	det   detection
}

// judge computes the APs of case i: the source's detections once, then
// every follow-up through detection.outcome. It stops with ctx.Err()
// between follow-ups when ctx is cancelled (an image takes 60 detector
// runs, seconds on a CPU).
func (d *detectionJudge) judge(ctx context.Context, i int, vars []scenario.Variant, rel map[string]relation) (judgement, rgb.Image, error) {
	c, err := d.cases.Case(i)
	if err != nil {
		return nil, rgb.Image{}, fmt.Errorf("sweep: image %d: %w", i, err)
	}
	gt := groundTruth(c.Annotations)
	src, err := d.det.detector.Detect(c.Image)
	if err != nil {
		return nil, rgb.Image{}, fmt.Errorf("sweep: image %d: %w", i, err)
	}
	j := &detectionJudgement{Image: i, ID: c.ID, Map: -1, Maps: make([]float64, len(vars))}
	for k, v := range vars {
		if err := ctx.Err(); err != nil {
			return nil, rgb.Image{}, err
		}
		o, err := d.det.outcome(c.Image, gt, src, rel[v.Key()])
		if err != nil {
			return nil, rgb.Image{}, fmt.Errorf("sweep: image %d, %s: %w", i, v.Key(), err)
		}
		j.Map, j.Maps[k] = o.OriginalScore, o.ModifiedScore
	}
	return j, c.Image, nil
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
func transformGT(r relation, gt []sut.Annotation, w, h int) ([]sut.Annotation, error) {
	if len(gt) == 0 {
		return nil, nil
	}
	br, ok := r.(boxRelation)
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

// outcome runs one follow-up of a detection case: transform the
// image and its ground truth, detect, score both sides and apply the
// rule. srcDets are the source image's (cached) detections. The online
// env and the sweep both call it, so their verdicts agree.
func (d detection) outcome(img rgb.Image, gt []sut.Annotation, srcDets []sut.Detection, r relation) (Outcome, error) {
	fgt, err := transformGT(r, gt, img.W, img.H)
	if err != nil {
		return Outcome{}, err
	}
	dets, err := d.detector.Detect(r.Apply(img))
	if err != nil {
		return Outcome{}, err
	}
	v, err := d.oracle.Verdict(gt, srcDets, fgt, dets)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Violated: v.Violated, OriginalScore: v.MapOriginal, ModifiedScore: v.MapTransformed, PredOriginal: -1, PredModified: -1, Label: -1}, nil
}

// detectionEnv answers the loop by running a detector, as the original's
// detection environment did: the context comes from the feature extractor
// applied to the source image; a follow-up transforms the image and its
// ground-truth boxes, and it is a violation iff its per-image COCO AP
// (against the transformed ground truth) is below the source's AP minus
// the oracle's threshold. Images without annotations score −1 on both
// sides and always pass. The source image's detections are computed once
// per image. Outcome scores are the two APs.
type detectionEnv struct {
	sourceEnv
	src caseSource
	det detection

	c       data.Case
	gt      []sut.Annotation
	srcDets []sut.Detection
}

// newDetectionEnv returns an Env over the cases of src. rel maps every
// follow-up key of the scenario to its relation, which must be able to
// transform boxes (boxRelation); ext may be nil for runs without such
// features; withSut appends the grey-box block.
func newDetectionEnv(src caseSource, ext extractor, withSut bool, det detection, rel map[string]relation, sc scenario.Scenario) (*detectionEnv, error) {
	if det.detector == nil {
		return nil, fmt.Errorf("online: no detector")
	}
	if err := det.oracle.Validate(); err != nil {
		return nil, fmt.Errorf("online: %w", err)
	}
	sutDim := 0
	if withSut {
		sutDim = detectionSutDim
	}
	base, err := newSourceEnv(src.Len(), ext, sutDim, rel, sc, func(key string, r relation) error {
		if _, ok := r.(boxRelation); !ok {
			return fmt.Errorf("online: the relation of follow-up %s cannot transform bounding boxes", key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &detectionEnv{sourceEnv: base, src: src, det: det}, nil
}

// load loads source case i (sourceEnv.load).
func (e *detectionEnv) load(i int) error { return e.sourceEnv.load(i, e.read) }

// read reads source case i and its ground truth.
func (e *detectionEnv) read(i int) error {
	c, err := e.src.Case(i)
	if err != nil {
		return err
	}
	e.c, e.gt, e.srcDets = c, groundTruth(c.Annotations), nil
	return nil
}

// Load implements Env: it reads the source image and its ground truth.
func (e *detectionEnv) Load(_ context.Context, image int) error { return e.load(image) }

// Context implements Env: the extractor's features of the source image,
// then the grey-box summary of its detections.
func (e *detectionEnv) Context(_ context.Context, image int) ([]float32, error) {
	if err := e.load(image); err != nil {
		return nil, err
	}
	return e.context(e.c.Image, func() ([]float32, error) {
		if err := e.detectSource(); err != nil {
			return nil, err
		}
		return detectionSutFeatures(e.srcDets, e.c.Image.W, e.c.Image.H)
	})
}

// detectSource computes the source image's detections, once per image.
func (e *detectionEnv) detectSource() error {
	if e.srcDets != nil {
		return nil
	}
	d, err := e.det.detector.Detect(e.c.Image)
	if err != nil {
		return fmt.Errorf("source image: %w", err)
	}
	if d == nil {
		d = []sut.Detection{}
	}
	e.srcDets = d
	return nil
}

// Evaluate implements Env: detect on the source (once per image) and on
// the follow-up, score both, compare.
func (e *detectionEnv) Evaluate(_ context.Context, image int, v scenario.Variant) (Outcome, error) {
	if err := e.load(image); err != nil {
		return Outcome{}, err
	}
	r, err := e.relation(v)
	if err != nil {
		return Outcome{}, err
	}
	if err := e.detectSource(); err != nil {
		return Outcome{}, err
	}
	return e.det.outcome(e.c.Image, e.gt, e.srcDets, r)
}
