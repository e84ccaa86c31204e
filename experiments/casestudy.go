package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
)

// The case studies, by their name in configurations (case_study).
const (
	studyClassification = "classification"
	studyDetection      = "detection"
)

// caseStudies makes the configured case study from the loaded (and
// checked) model and the whole data set: one entry per value of
// case_study.
var caseStudies = map[string]func(cfg *Config, model *nn.Model, src data.Source) (caseStudy, error){
	studyClassification: func(cfg *Config, m *nn.Model, src data.Source) (caseStudy, error) {
		return newClassificationStudy(cfg, m, data.Images{Source: src})
	},
	studyDetection: func(cfg *Config, m *nn.Model, src data.Source) (caseStudy, error) {
		return newDetectionStudy(cfg, m, src)
	},
}

// caseStudyNames lists the values of case_study, sorted.
func caseStudyNames() []string { return slices.Sorted(maps.Keys(caseStudies)) }

// A caseStudy is what the sweep and online runs need to know about one
// case study (classification.go, detection.go): how its system under test
// judges an image and its follow-ups, how that judgement is cached and
// what it says as verdict rows, and the Env that runs the SUT inside the
// loop. Everything else in this package is common to all case studies.
type caseStudy interface {
	// name is the value of case_study.
	name() string
	// cacheKind is the kind of the verdict cache (its meta.json's kind).
	cacheKind() string
	// cacheKey returns the verdict cache's key: the content hashes of the
	// model and the data, the data format, the follow-ups (variant keys,
	// in table order) and every setting the judgements depend on.
	cacheKey(modelHash, dataHash, format string, variants []string) any
	// newJudge returns the SUT of one sweep worker; each worker has its
	// own, so judges need not be safe for concurrent use.
	newJudge() (judge, error)
	// decode reads one line of the verdict cache.
	decode(line []byte) (judgement, error)
	// verdict returns the table row of follow-up v, column col of the
	// table, of a judged image.
	verdict(j judgement, col int, v scenario.Variant) record.Verdict
	// newSutAnswer returns a function computing the grey-box context block
	// of image i: what the SUT answers on the source image alone
	// (greybox.go), one inference. The sweep caches the blocks apart from
	// the judgements (sweepConfig.sut).
	newSutAnswer() (func(i int) ([]float32, error), error)
	// sutBlock describes the grey-box block, for the key of its cache.
	sutBlock() string
	// sutDim returns the length of the grey-box block.
	sutDim() (int, error)
	// newEnv returns the Env of an online run over the first n images of
	// the data set; newExt (nil: no such features) makes its feature
	// extractor, after the SUT; with sut its contexts end with the
	// grey-box block.
	newEnv(n int, newExt func() (extractor, error), sut bool, rel map[string]relation, sc scenario.Scenario) (Env, error)
}

// A judge is one sweep worker's system under test.
type judge interface {
	// judge runs image i and each of its follow-ups vars (their relations
	// in rel) through the SUT. It returns the judgement and the source
	// image, whose context features the worker extracts next. It may stop
	// with ctx.Err() when ctx is cancelled.
	judge(ctx context.Context, i int, vars []scenario.Variant, rel map[string]relation) (judgement, rgb.Image, error)
}

// A judgement is what the SUT said about one image and its follow-ups:
// one line of the verdict cache (its JSON encoding).
type judgement interface {
	// image is the image's position in the data set.
	image() int
	// id is the image's id in exported tables: the data set's image id
	// (COCO), or the position.
	id() int64
	// followUps is the number of follow-ups judged.
	followUps() int
}

// strictJSON decodes one cache line, refusing unknown fields.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// decodeJudgement decodes a cache line into a J.
func decodeJudgement[J any, PJ interface {
	*J
	judgement
}](line []byte) (judgement, error) {
	var j J
	if err := strictJSON(line, &j); err != nil {
		return nil, err
	}
	return PJ(&j), nil
}

// checkFits checks that a judgement read from the cache fits a table of
// total images × nv follow-ups.
func checkFits(j judgement, total, nv int) error {
	if j.image() < 0 || j.image() >= total || j.followUps() != nv {
		return fmt.Errorf("image %d with %d follow-ups does not fit a table of %d images × %d follow-ups", j.image(), j.followUps(), total, nv)
	}
	return nil
}
