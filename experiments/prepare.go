package experiments

import (
	"context"
	"errors"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/scenario"
)

// Experiment is a configuration made ready to run: the data set is open,
// the models are loaded and checked against the configuration, every
// relation is built. Prepare does all of that before any long work starts.
type Experiment struct {
	Config *Config
	// SutFeatures makes Sweep compute the grey-box blocks (Table.SutFeatures)
	// even when features.kind has no sut (amt sweep -sut-features).
	SutFeatures bool
	// LogDecisions makes Run write every run's decisions, with contexts,
	// propensities and costs, to <agent>/decisions-seed-<n>.jsonl (the
	// log format of amt ope).
	LogDecisions bool

	study caseStudy
	src   source // the (limited) data set's images
	full  source // the whole data set, whose rows the cache holds
	// sweepVariants are the follow-ups of the exhaustive sweep: the
	// hierarchical set's 59 (a superset of every built-in scenario, so the
	// paper's experiments share one cached sweep) plus any other follow-up
	// of the configured action set; relations maps their keys to their
	// relations.
	sweepVariants []scenario.Variant
	relations     map[string]relation
	newExt        func() (extractor, error)
	budget        *imageBudget // the sweep's pixels in flight
	verdictKey    any
	featureKey    any
	// sha256 of the SUT model, the data and the feature model ("" without one)
	modelHash, dataHash, featHash string

	// data is the whole data set (for the ids and images of the gallery);
	// classes names its classes by index (sut.labels, else the data set's
	// names; nil when there are none).
	data    data.Source
	classes []string
	// after is the experiment with the SUT after the change of a
	// regression experiment (nil otherwise); afterTable its table, once
	// swept.
	after      *Experiment
	afterTable *Table
	// reference is the experiment with a corruption report's reference
	// SUT (nil otherwise); referenceTable its table, once swept.
	reference      *Experiment
	referenceTable *Table
	// id is the identity of the experiment's results (record.Identity).
	id record.Identity
	// build is the sha256 of amt's executable (record.Build), "" when
	// unknown.
	build string
}

// Prepare opens the data set, loads the model and the feature extractor,
// checks the model's input against the configuration, builds the
// relations and hashes the inputs the cache keys cover, so that every
// problem surfaces before a sweep or run starts. It stops with ctx.Err()
// when ctx is cancelled while it hashes.
func Prepare(ctx context.Context, cfg *Config) (*Experiment, error) {
	e, err := prepare(ctx, cfg, "sut")
	if err != nil {
		return e, err
	}
	if cfg.CorruptionReport() {
		// A corruption report: the same experiment with the reference
		// SUT, whose sweep is cached under its own model's hash.
		ref := *cfg
		ref.SUT, ref.Corruption = cfg.Corruption.Reference, CorruptionConfig{}
		if e.reference, err = prepare(ctx, &ref, "corruption.reference"); err != nil {
			return nil, err
		}
	}
	if !cfg.Regressing() {
		return e, nil
	}
	// A regression experiment: the same experiment with the SUT after the
	// change, whose own sweep is cached under its own model's hash.
	after := *cfg
	after.SUT, after.Regression = cfg.Regression.SUT, RegressionConfig{}
	if e.after, err = prepare(ctx, &after, "regression.sut"); err != nil {
		return nil, err
	}
	return e, nil
}

// prepare is Prepare for one SUT, whose configuration key (for errors) is
// sutKey.
func prepare(ctx context.Context, cfg *Config, sutKey string) (*Experiment, error) {
	e := &Experiment{Config: cfg}
	src, err := data.Open(data.Spec{Format: cfg.Data.Format, Path: cfg.Data.Path, Images: cfg.Data.Images, Labels: cfg.Data.Labels, MaxPixels: int64(cfg.Data.MaxPixels)})
	if tl := (*data.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, cfg.errAt("data.max_pixels", "%w (raise data.max_pixels, or -max-pixels, to allow them; see the README on memory)", err)
	}
	if err != nil {
		return nil, cfg.errAt("data.path", "%w", err)
	}
	n := src.Len()
	if cfg.Data.Limit > 0 {
		if cfg.Data.Limit > n {
			return nil, cfg.errAt("data.limit", "%d is more than the %d images of %s", cfg.Data.Limit, n, cfg.Data.Path)
		}
		n = cfg.Data.Limit
	}
	if sz, ok := src.(data.Sizer); ok {
		budget := int64(cfg.Data.MaxPixels)
		if budget <= 0 {
			budget = data.DefaultMaxPixels
		}
		e.budget = newImageBudget(budget, sz.Size)
	}
	e.data = src
	if e.classes, err = classNames(cfg, src); err != nil {
		return nil, err
	}
	e.full = data.Images{Source: src}
	e.src = limited{source: e.full, n: n}
	if cfg.Iterations > cfg.Passes*n {
		return nil, cfg.errAt("iterations", "%d is more than passes × images = %d × %d", cfg.Iterations, cfg.Passes, n)
	}

	model, err := loadChecked(cfg, sutKey, &cfg.SUT)
	if err != nil {
		return nil, err
	}
	newStudy, ok := caseStudies[cfg.CaseStudy]
	if !ok {
		return nil, cfg.errAt("case_study", "unknown case study %q", cfg.CaseStudy)
	}
	if e.study, err = newStudy(cfg, model, src); err != nil {
		return nil, err
	}
	var featDevice string
	if e.newExt, featDevice, err = newExtractorFactory(cfg); err != nil {
		return nil, err
	}
	var featConvention string
	if cfg.Features.extractor() == "model" {
		_, featConvention, _ = featureOptions(cfg.Features) // checked by newExtractorFactory
	}

	e.sweepVariants = mr.Hierarchical().Variants()
	have := map[string]bool{}
	for _, v := range e.sweepVariants {
		have[v.Key()] = true
	}
	for _, v := range cfg.Scenario.Variants() {
		if !have[v.Key()] {
			have[v.Key()] = true
			e.sweepVariants = append(e.sweepVariants, v)
		}
	}
	e.relations = map[string]relation{}
	for _, v := range e.sweepVariants {
		r, err := mr.ForVariant(v)
		if err != nil {
			return nil, cfg.errAt("action_set", "%w", err)
		}
		e.relations[v.Key()] = r
	}

	// Cache keys: the content of every input the tables depend on.
	if e.modelHash, err = fileHash(ctx, cfg.SUT.Model); err != nil {
		return nil, err
	}
	if e.dataHash, err = dataHash(ctx, cfg.Data.Path, src); err != nil {
		return nil, err
	}
	if cfg.Features.Model != "" {
		if e.featHash, err = fileHash(ctx, cfg.Features.Model); err != nil {
			return nil, err
		}
	}
	var keys []string
	for _, v := range e.sweepVariants {
		keys = append(keys, v.Key())
	}
	// A model on a GPU rounds differently from the CPU in the last bits,
	// which may flip a near tie: its tables are cached apart. (On the CPU
	// the keys are what they were before GPUs.)
	e.verdictKey = e.study.cacheKey(e.modelHash, e.dataHash, cfg.Data.Format, keys)
	if d := deviceKey(model); d != "" {
		e.verdictKey = struct {
			Key    any
			Device string
		}{e.verdictKey, d}
	}
	e.featureKey = struct {
		Version            int
		Data, Format, Kind string
		Model              string
		// Output is the feature model's tensor (features.output); empty
		// for the graph output, which leaves the keys of caches made
		// before the setting existed unchanged.
		Output string `json:",omitempty"`
		Device string `json:",omitempty"`
		// Convention is the feature model's input convention when it is
		// not the default (featureOptions); empty, it leaves the keys of
		// caches made before the setting existed unchanged.
		Convention string `json:",omitempty"`
	}{1, e.dataHash, cfg.Data.Format, cfg.Features.extractor(), e.featHash, cfg.Features.Output, featDevice, featConvention}
	// The results' identity: the configuration's bytes and the names of
	// the sweep's two cache tables (which cover every input file's content).
	vdir, err := cacheDir("", "verdicts", e.verdictKey)
	if err != nil {
		return nil, err
	}
	fdir, err := cacheDir("", "features", e.featureKey)
	if err != nil {
		return nil, err
	}
	e.id = record.Identity{ConfigSHA256: record.SHA256(cfg.doc), SweepKey: vdir + " " + fdir}
	e.build = record.Build()
	return e, nil
}

// Images returns the number of images the experiment uses (data.limit
// applied).
func (e *Experiment) Images() int { return e.src.Len() }

// deviceKey is the device part of a cache key: "" on the CPU, "cuda" on a
// GPU.
func deviceKey(m interface{ Device() string }) string {
	if m.Device() == "cpu" {
		return ""
	}
	return "cuda"
}

// loadChecked loads the SUT's ONNX model on its device and checks its
// input against the configuration (resolveInput: an image input [N, C,
// H, W], or [N, H, W, C] for a classifier of layout nhwc, with C = 3 or
// 1), filling in what the model decides.
func loadChecked(cfg *Config, key string, s *SUTConfig) (*nn.Model, error) {
	m, err := nn.LoadWith(s.Model, nn.LoadOptions{Device: s.Device, Logf: cfg.Logf})
	if err != nil {
		return nil, cfg.errAt(key+".model", "%w", err)
	}
	if err := resolveInput(cfg, key, s, m); err != nil {
		return nil, err
	}
	return m, nil
}
