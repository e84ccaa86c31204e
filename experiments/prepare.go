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
	"github.com/amt-dev/amt/scenario"
)

// Experiment is a configuration made ready to run: the data set is open,
// the models are loaded and checked against the configuration, every
// relation is built. Prepare does all of that before any long work starts.
type Experiment struct {
	Config *Config

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
	verdictKey    any
	featureKey    any
	// sha256 of the SUT model, the data and the feature model ("" without one)
	modelHash, dataHash, featHash string
}

// Prepare opens the data set, loads the model and the feature extractor,
// checks the model's input against the configuration, builds the
// relations and hashes the inputs the cache keys cover, so that every
// problem surfaces before a sweep or run starts. It stops with ctx.Err()
// when ctx is cancelled while it hashes.
func Prepare(ctx context.Context, cfg *Config) (*Experiment, error) {
	e := &Experiment{Config: cfg}
	src, err := data.Open(data.Spec{Format: cfg.Data.Format, Path: cfg.Data.Path, Images: cfg.Data.Images})
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
	e.full = data.Images{Source: src}
	e.src = limited{source: e.full, n: n}
	if cfg.Iterations > cfg.Passes*n {
		return nil, cfg.errAt("iterations", "%d is more than passes × images = %d × %d", cfg.Iterations, cfg.Passes, n)
	}

	model, err := loadChecked(cfg, "sut", cfg.SUT.Model, cfg.SUT.InputWidth, cfg.SUT.InputHeight)
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
	if e.newExt, err = newExtractorFactory(cfg); err != nil {
		return nil, err
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
	if e.dataHash, err = pathHash(ctx, cfg.Data.Path); err != nil {
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
	e.verdictKey = e.study.cacheKey(e.modelHash, e.dataHash, cfg.Data.Format, keys)
	e.featureKey = struct {
		Version            int
		Data, Format, Kind string
		Model              string
	}{1, e.dataHash, cfg.Data.Format, cfg.Features.Kind, e.featHash}
	return e, nil
}

// loadChecked loads an ONNX model whose first input must be [N, 3, h, w].
func loadChecked(cfg *Config, key, path string, w, h int) (*nn.Model, error) {
	m, err := nn.Load(path)
	if err != nil {
		return nil, cfg.errAt(key+".model", "%w", err)
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

// sweepSetup returns the sweep of the experiment's table.
func (e *Experiment) sweepSetup(progress func(done, total int)) sweepConfig {
	return sweepConfig{
		study: e.study, source: e.full, limit: e.src.Len(), variants: e.sweepVariants, relations: e.relations,
		newExtractor: e.newExt, cacheDir: e.Config.Cache, verdictKey: e.verdictKey, featureKey: e.featureKey,
		workers: e.Config.Workers, progress: progress,
	}
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
	t, err := sweep(ctx, e.sweepSetup(pf))
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

// meta returns the experiment's run metadata (run.json).
func (e *Experiment) meta() record.Meta {
	cfg := e.Config
	m := record.Meta{
		Experiment: cfg.Name, Description: cfg.Description, CaseStudy: cfg.CaseStudy, Mode: cfg.Mode,
		SUT:      record.File{Path: cfg.SUT.Model, SHA256: e.modelHash},
		Features: record.FeaturesMeta{Kind: cfg.Features.Kind},
		Data:     record.DataMeta{Format: cfg.Data.Format, File: record.File{Path: cfg.Data.Path, SHA256: e.dataHash}, Images: e.src.Len()},
		Scenario: record.DescribeScenario(cfg.Scenario),
		Seeds:    cfg.Seeds, Passes: cfg.Passes, Iterations: cfg.Iterations,
		Version: record.Version(),
	}
	if m.Iterations == 0 {
		m.Iterations = cfg.Passes * e.src.Len()
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
	return record.WriteMeta(filepath.Join(e.Config.Output, record.MetaFile), e.meta())
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
		var err error
		if env, err = e.study.newEnv(e.src.Len(), e.newExt, e.relations, sc); err != nil {
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
			ag, loaded, err := loadOrNewAgent(statePath(stateDir, seed), a, sc, env.Dim(), seed)
			if loaded {
				fmt.Fprintf(log, "%s: agent %s, seed %d: continuing from %s\n", cfg.Name, a.ID, seed, statePath(stateDir, seed))
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

// ctxReader is a reader that stops with ctx.Err() when ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// fileHash returns the hex sha256 of a file's content.
func fileHash(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pathHash hashes a file, or a folder's files (names and contents, sorted
// by name, not recursive).
func pathHash(ctx context.Context, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return fileHash(ctx, path)
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
		fh, err := fileHash(ctx, filepath.Join(path, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", e.Name(), fh)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
