package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
	"github.com/amt-dev/amt/sut"
)

// Experiment is a configuration made ready to run: the data set is open,
// the models are loaded and checked against the configuration, every
// relation is built. Prepare does all of that before any long work starts.
type Experiment struct {
	Config *Config
	// Source yields the (limited) data set's images.
	Source Source
	// Relations maps every follow-up key of SweepVariants to its relation.
	Relations map[string]Relation
	// SweepVariants are the follow-ups of the exhaustive sweep: the
	// hierarchical set's 59 (a superset of every built-in scenario, so the
	// paper's experiments share one cached sweep) plus any other follow-up
	// of the configured action set.
	SweepVariants []scenario.Variant

	full       Source // the whole data set, whose rows the cache holds
	cases      CaseSource
	model      *nn.Model
	detCfg     sut.DetectorConfig
	newExt     func() (Extractor, error)
	verdictKey any
	featureKey any
	// sha256 of the SUT model, the data and the feature model ("" without one)
	modelHash, dataHash, featHash string
}

// limited is a Source restricted to its first n cases.
type limited struct {
	Source
	n int
}

func (l limited) Len() int { return l.n }

// Prepare opens the data set, loads the model and the feature extractor,
// checks the model's input against the configuration and builds the
// relations, so that every problem surfaces before a sweep or run starts.
func Prepare(cfg *Config) (*Experiment, error) {
	e := &Experiment{Config: cfg}
	src, err := data.Open(data.Spec{Format: cfg.Data.Format, Path: cfg.Data.Path, Images: cfg.Data.Images})
	if err != nil {
		return nil, cfg.errAt("data.path", "%v", err)
	}
	n := src.Len()
	if cfg.Data.Limit > 0 {
		if cfg.Data.Limit > n {
			return nil, cfg.errAt("data.limit", "%d is more than the %d images of %s", cfg.Data.Limit, n, cfg.Data.Path)
		}
		n = cfg.Data.Limit
	}
	e.full = data.Images{Source: src}
	e.Source = limited{Source: e.full, n: n}
	e.cases = src
	if cfg.Iterations > cfg.Passes*n {
		return nil, cfg.errAt("iterations", "%d is more than passes × images = %d × %d", cfg.Iterations, cfg.Passes, n)
	}

	if e.model, err = loadChecked(cfg, "sut", cfg.SUT.Model, cfg.SUT.InputWidth, cfg.SUT.InputHeight); err != nil {
		return nil, err
	}
	if cfg.CaseStudy == "detection" {
		if err := e.prepareDetector(); err != nil {
			return nil, err
		}
	} else {
		if out := e.model.Outputs(); len(out) == 0 || len(out[0].Shape) != 2 {
			return nil, cfg.errAt("sut.model", "%s: want a classifier with logits [N, classes] as its first output, got %v", cfg.SUT.Model, out)
		}
		if _, err := e.newClassifier(); err != nil {
			return nil, cfg.errAt("sut", "%v", err)
		}
	}
	if e.newExt, err = newExtractorFactory(cfg); err != nil {
		return nil, err
	}

	e.SweepVariants = mr.Hierarchical().Variants()
	have := map[string]bool{}
	for _, v := range e.SweepVariants {
		have[v.Key()] = true
	}
	for _, v := range cfg.Scenario.Variants() {
		if !have[v.Key()] {
			have[v.Key()] = true
			e.SweepVariants = append(e.SweepVariants, v)
		}
	}
	e.Relations = map[string]Relation{}
	for _, v := range e.SweepVariants {
		r, err := mr.ForVariant(v)
		if err != nil {
			return nil, cfg.errAt("action_set", "%v", err)
		}
		e.Relations[v.Key()] = r
	}

	// Cache keys: the content of every input the tables depend on.
	modelHash, err := fileHash(cfg.SUT.Model)
	if err != nil {
		return nil, err
	}
	dataHash, err := pathHash(cfg.Data.Path)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, v := range e.SweepVariants {
		keys = append(keys, v.Key())
	}
	if cfg.CaseStudy == "detection" {
		d := cfg.SUT.Detection
		e.verdictKey = struct {
			Version                         int
			Model, Data, Format             string
			Variants                        []string
			InputSize                       int
			ScoreThreshold, NMSIoU          float64
			MaxDetections                   int
			Decoder, Preprocess, Evaluation string
			Relations, Boxes                string
		}{1, modelHash, dataHash, cfg.Data.Format, keys, cfg.SUT.InputWidth, d.ScoreThreshold, d.NMSIoU, d.MaxDetections,
			"yolov3-tiny", "letterbox-pillow-bilinear", "coco-ap-0.50:0.95-all-100-per-image", "imgaug-0.2.6", "imgaug-0.2.6-hull-unclipped"}
	} else {
		e.verdictKey = struct {
			Version               int
			Model, Data, Format   string
			Variants              []string
			Width, Height         int
			Mean, Std             [3]float64
			Verdict, Relations    string
			Preprocess, Classifer string
		}{1, modelHash, dataHash, cfg.Data.Format, keys, cfg.SUT.InputWidth, cfg.SUT.InputHeight, cfg.SUT.Mean, cfg.SUT.Std,
			"top-1 differs", "imgaug-0.2.6", "pillow-bilinear", "argmax-first"}
	}
	featModelHash := ""
	if cfg.Features.Model != "" {
		if featModelHash, err = fileHash(cfg.Features.Model); err != nil {
			return nil, err
		}
	}
	e.modelHash, e.dataHash, e.featHash = modelHash, dataHash, featModelHash
	e.featureKey = struct {
		Version            int
		Data, Format, Kind string
		Model              string
	}{1, dataHash, cfg.Data.Format, cfg.Features.Kind, featModelHash}
	return e, nil
}

// loadChecked loads an ONNX model whose first input must be [N, 3, h, w].
func loadChecked(cfg *Config, key, path string, w, h int) (*nn.Model, error) {
	m, err := nn.Load(path)
	if err != nil {
		return nil, cfg.errAt(key+".model", "%v", err)
	}
	in := m.Inputs()
	if len(in) == 0 || len(in[0].Shape) != 4 || in[0].Shape[1] != 3 {
		return nil, cfg.errAt(key+".model", "%s: want an image model with input [N, 3, H, W], got %v", path, in)
	}
	mh, mw := in[0].Shape[2], in[0].Shape[3]
	if w > 0 && ((mh > 0 && mh != h) || (mw > 0 && mw != w)) {
		return nil, cfg.errAt(key+".input_size", "the model %s takes %d×%d (width×height) images, but the config says %d×%d",
			filepath.Base(path), mw, mh, w, h)
	}
	return m, nil
}

// classifierFunc adapts sut.Classifier to Classifier.
type classifierFunc func([]rgb.Image) ([]int, error)

func (f classifierFunc) Classify(imgs []rgb.Image) ([]int, error) { return f(imgs) }

// newClassifier returns a classifier over a clone of the model (one per
// goroutine).
func (e *Experiment) newClassifier() (Classifier, error) {
	s := e.Config.SUT
	c, err := sut.NewClassifier(e.model.Clone(), sut.ClassifierConfig{Width: s.InputWidth, Height: s.InputHeight, Mean: s.Mean, Std: s.Std, BatchSize: s.BatchSize})
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

// SweepConfig returns the sweep of the experiment's table.
func (e *Experiment) SweepConfig(progress func(done, total int)) SweepConfig {
	sc := SweepConfig{
		Source: e.full, Limit: e.Source.Len(), Variants: e.SweepVariants, Relations: e.Relations,
		NewClassifier: e.newClassifier, NewExtractor: e.newExt,
		CacheDir: e.Config.Cache, VerdictKey: e.verdictKey, FeatureKey: e.featureKey,
		Workers: e.Config.Workers, Progress: progress,
	}
	if e.Config.CaseStudy == "detection" {
		sc.NewClassifier = nil
		sc.Cases, sc.NewDetector, sc.Oracle = e.cases, e.newDetector, e.oracle()
	}
	return sc
}

// prepareDetector checks that the model is a detector the configured
// pipeline can decode and keeps the detector configuration.
func (e *Experiment) prepareDetector() error {
	cfg := e.Config
	if out := e.model.Outputs(); len(out) > 0 && len(out[0].Shape) == 2 {
		return cfg.errAt("sut.model", "%s looks like a classifier (its first output %q is [N, classes] logits); case_study detection needs a single-stage detector with raw YOLO heads [1, anchors·(5+classes), gridH, gridW]",
			filepath.Base(cfg.SUT.Model), out[0].Name)
	}
	d := sut.DefaultDetectorConfig()
	d.InputSize = cfg.SUT.InputWidth
	d.Post.ScoreThreshold = cfg.SUT.Detection.ScoreThreshold
	d.Post.IoUThreshold = cfg.SUT.Detection.NMSIoU
	d.Post.MaxDetections = cfg.SUT.Detection.MaxDetections
	e.detCfg = d
	if _, err := e.newDetector(); err != nil {
		return cfg.errAt("sut.model", "%v", err)
	}
	if err := e.oracle().Validate(); err != nil {
		return cfg.errAt("sut.threshold", "%v", err)
	}
	return nil
}

// newDetector returns a detector over a clone of the model (one per
// goroutine).
func (e *Experiment) newDetector() (Detector, error) {
	return sut.DetectorFor(e.model.Clone(), e.detCfg)
}

func (e *Experiment) oracle() sut.DetectionOracle {
	return sut.DetectionOracle{Threshold: e.Config.SUT.Detection.Threshold}
}

// Sweep computes (or loads from the cache) the experiment's exhaustive
// table and writes the configured scenario's rows to Output/sweep.csv.
// progress (may be nil) gets the stage "sweep <name>".
func (e *Experiment) Sweep(ctx context.Context, progress ProgressFunc) (*Table, error) {
	var pf func(done, total int)
	if progress != nil {
		stage := "sweep " + e.Config.Name
		pf = func(done, total int) { progress(stage, done, total) }
	}
	t, err := Sweep(ctx, e.SweepConfig(pf))
	if err != nil {
		return nil, err
	}
	if err := e.writeMeta(); err != nil {
		return nil, err
	}
	if err := t.WriteCSV(filepath.Join(e.Config.Output, record.VerdictsFile), e.Config.Scenario.Variants()); err != nil {
		return nil, err
	}
	return t, nil
}

// Meta returns the experiment's run metadata (run.json).
func (e *Experiment) Meta() record.Meta {
	cfg := e.Config
	m := record.Meta{
		Experiment: cfg.Name, Description: cfg.Description, CaseStudy: cfg.CaseStudy, Mode: cfg.Mode,
		SUT:      record.File{Path: cfg.SUT.Model, SHA256: e.modelHash},
		Features: record.FeaturesMeta{Kind: cfg.Features.Kind},
		Data:     record.DataMeta{Format: cfg.Data.Format, File: record.File{Path: cfg.Data.Path, SHA256: e.dataHash}, Images: e.Source.Len()},
		Scenario: record.DescribeScenario(cfg.Scenario),
		Seeds:    cfg.Seeds, Passes: cfg.Passes, Iterations: cfg.Iterations,
		Version: record.Version(),
	}
	if m.Iterations == 0 {
		m.Iterations = cfg.Passes * e.Source.Len()
	}
	if cfg.Features.Model != "" {
		m.Features.Model = &record.File{Path: cfg.Features.Model, SHA256: e.featHash}
	}
	for _, a := range cfg.Agents {
		m.Agents = append(m.Agents, record.AgentMeta{ID: a.ID, Name: a.Name, Options: a.Options})
	}
	return m
}

// writeMeta writes the experiment's run.json into its results folder.
func (e *Experiment) writeMeta() error {
	return record.WriteMeta(filepath.Join(e.Config.Output, record.MetaFile), e.Meta())
}

// Run runs every agent of the experiment over every seed (online or
// replay, as configured) and writes Output/<agent id>/{summary.json,
// seed-<n>.jsonl, timing.json} and Output/config.yaml (a copy of the
// configuration). In replay mode it first computes or loads the sweep.
// Messages go to log; progress (may be nil) gets the sweep's progress and
// each agent's (stage "<agent id>": iterations over all seeds).
func (e *Experiment) Run(ctx context.Context, log io.Writer, progress ProgressFunc) error {
	cfg := e.Config
	sc := cfg.Scenario
	var env Env
	switch cfg.Mode {
	case "replay":
		t, err := e.Sweep(ctx, progress)
		if err != nil {
			return err
		}
		rows, err := t.Verdicts(sc.Variants())
		if err != nil {
			return err
		}
		if env, err = NewReplayEnv(rows, t.Features, t.Dim, sc); err != nil {
			return err
		}
	case "online":
		// The system under test first, then the extractor.
		var det Detector
		var cls Classifier
		var err error
		if cfg.CaseStudy == "detection" {
			det, err = e.newDetector()
		} else {
			cls, err = e.newClassifier()
		}
		if err != nil {
			return err
		}
		var ext Extractor
		if e.newExt != nil {
			if ext, err = e.newExt(); err != nil {
				return err
			}
		}
		if cfg.CaseStudy == "detection" {
			env, err = NewDetectionEnv(limitedCases{CaseSource: e.cases, n: e.Source.Len()}, ext, Detection{Detector: det, Oracle: e.oracle()}, e.Relations, sc)
		} else {
			env, err = NewOnlineEnv(e.Source, ext, cls, e.Relations, sc)
		}
		if err != nil {
			return err
		}
	default:
		return cfg.errAt("mode", "unknown mode %q", cfg.Mode)
	}
	if err := e.writeMeta(); err != nil {
		return err
	}
	if b, err := os.ReadFile(cfg.File); err == nil {
		if err := record.WriteFileAtomic(filepath.Join(cfg.Output, record.ConfigFile), b); err != nil {
			return err
		}
	}
	for _, a := range cfg.Agents {
		fmt.Fprintf(log, "%s: agent %s (%s), %d seeds, %s mode\n", cfg.Name, a.ID, a.Name, len(cfg.Seeds), cfg.Mode)
		var trace func(uint64, Step)
		if progress != nil {
			iters := cfg.Iterations
			if iters == 0 {
				iters = cfg.Passes * env.Len()
			}
			total, done, stage := iters*len(cfg.Seeds), 0, a.ID+" ("+cfg.Mode+")"
			trace = func(uint64, Step) { done++; progress(stage, done, total) }
		}
		stateDir := ""
		if cfg.State != "" {
			stateDir = filepath.Join(cfg.State, a.ID)
		}
		sum, err := RunSeeds(ctx, env, sc, func(seed uint64) (Agent, error) {
			if stateDir == "" {
				return NewAgent(a, sc, env.Dim(), seed)
			}
			ag, loaded, err := LoadOrNewAgent(StatePath(stateDir, seed), a, sc, env.Dim(), seed)
			if loaded {
				fmt.Fprintf(log, "%s: agent %s, seed %d: continuing from %s\n", cfg.Name, a.ID, seed, StatePath(stateDir, seed))
			}
			return ag, err
		}, filepath.Join(cfg.Output, a.ID), SeedsOptions{
			Agent: a.ID, Mode: cfg.Mode, Seeds: cfg.Seeds, Passes: cfg.Passes, Iter: cfg.Iterations,
			Interval: cfg.LogInterval, Timing: cfg.Timing, StateDir: stateDir, Trace: trace,
		})
		if err != nil {
			return err
		}
		var it, viol int
		for _, r := range sum.Runs {
			it += r.Iterations
			viol += r.Violations
		}
		fmt.Fprintf(log, "%s: agent %s: %d violations in %d iterations (%.2f%%)\n", cfg.Name, a.ID, viol, it, 100*float64(viol)/float64(max(it, 1)))
	}
	return nil
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pathHash hashes a file, or a folder's files (names and contents, sorted
// by name, not recursive).
func pathHash(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return fileHash(path)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return "", err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	h := sha256.New()
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		fh, err := fileHash(filepath.Join(path, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", e.Name(), fh)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
