package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
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

// sweepSetup returns the sweep of the experiment's table.
func (e *Experiment) sweepSetup(progress func(done, total int)) sweepConfig {
	return sweepConfig{
		study: e.study, source: e.full, limit: e.src.Len(), variants: e.sweepVariants, relations: e.relations,
		newExtractor: e.newExt, cacheDir: e.Config.Cache, verdictKey: e.verdictKey, featureKey: e.featureKey,
		sut:     e.SutFeatures || e.Config.Features.sut(),
		workers: e.Config.Workers, budget: e.budget, progress: progress,
	}
}

// Sweep computes (or loads from the cache) the experiment's exhaustive
// table and writes the configured scenario's rows to Output/sweep.csv.
// progress (may be nil) gets the stage "sweep <name>".
func (e *Experiment) Sweep(ctx context.Context, progress ProgressFunc) (*Table, error) {
	return e.sweep(ctx, progress, false)
}

// MergeSweep assembles the experiment's table from the shard files that
// SweepShard wrote (or a consolidated table), computing nothing, and
// writes Output/sweep.csv as Sweep does; the table is byte for byte the
// one a single-process sweep makes. When shards are missing it fails with
// a *MissingShardsError that names them.
func (e *Experiment) MergeSweep(ctx context.Context) (*Table, error) {
	return e.sweep(ctx, nil, true)
}

// SweepShard computes shard sh of the experiment's sweep into the cache
// (see Shard): the shards of a split may run at the same time on machines
// that share the cache folder, and a finished shard is never recomputed.
// It writes no result file; MergeSweep assembles the table. progress (may
// be nil) gets the stage "sweep <name> shard K/N" and counts the shard's
// images.
func (e *Experiment) SweepShard(ctx context.Context, sh Shard, progress ProgressFunc) (ShardStats, error) {
	if !sh.sharded() {
		return ShardStats{}, errors.New("sweep: SweepShard needs a shard")
	}
	var pf func(done, total int)
	if progress != nil {
		stage := Stage{Name: "sweep " + e.Config.Name + " shard " + sh.String(), Unit: "image", Resumed: "cached"}
		pf = func(done, total int) { progress(stage, done, total) }
	}
	return sweepShard(ctx, e.sweepSetup(pf), sh)
}

// sweep is Sweep, or with mergeOnly MergeSweep.
func (e *Experiment) sweep(ctx context.Context, progress ProgressFunc, mergeOnly bool) (*Table, error) {
	var pf func(done, total int)
	if progress != nil {
		stage := Stage{Name: "sweep " + e.Config.Name, Unit: "image", Resumed: "cached"}
		pf = func(done, total int) { progress(stage, done, total) }
	}
	setup := e.sweepSetup(pf)
	setup.mergeOnly = mergeOnly
	t, err := sweep(ctx, setup)
	if err != nil {
		return nil, err
	}
	csv := filepath.Join(e.Config.Output, record.VerdictsFile)
	if err := t.WriteCSV(csv, e.Config.Scenario.Variants()); err != nil {
		return nil, err
	}
	sum, err := record.FileSHA256(csv)
	if err != nil {
		return nil, err
	}
	if err := e.writeRunFiles(sum); err != nil {
		return nil, err
	}
	if e.after != nil {
		if _, err := e.sweepAfter(ctx, progress); err != nil {
			return nil, err
		}
	}
	if e.reference != nil {
		if _, err := e.sweepReference(ctx, progress); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// sweepAfter computes (or loads) the table of a regression experiment's
// SUT after the change and writes its scenario's rows to
// Output/sweep-after.csv.
func (e *Experiment) sweepAfter(ctx context.Context, progress ProgressFunc) (*Table, error) {
	var pf func(done, total int)
	if progress != nil {
		stage := Stage{Name: "sweep " + e.Config.Name + " (SUT after the change)", Unit: "image", Resumed: "cached"}
		pf = func(done, total int) { progress(stage, done, total) }
	}
	t, err := sweep(ctx, e.after.sweepSetup(pf))
	if err != nil {
		return nil, err
	}
	if err := t.WriteCSV(filepath.Join(e.Config.Output, record.VerdictsAfterFile), e.Config.Scenario.Variants()); err != nil {
		return nil, err
	}
	e.afterTable = t
	return t, nil
}

// replayEnv returns the replay environment of the table's rows of the
// scenario.
func (t *Table) replayEnv(sc scenario.Scenario, sut bool) (Env, error) {
	rows, err := t.Verdicts(sc.Variants())
	if err != nil {
		return nil, err
	}
	feats, layout, err := t.contexts(sut)
	if err != nil {
		return nil, err
	}
	return NewReplayEnv(rows, feats, layout, sc)
}

// meta returns the experiment's run metadata (run.json).
func (e *Experiment) meta() record.Meta {
	cfg := e.Config
	m := record.Meta{
		Identity:   e.id,
		Experiment: cfg.Name, Description: cfg.Description, CaseStudy: cfg.CaseStudy, Mode: cfg.Mode,
		SUT:      record.File{Path: cfg.SUT.Model, SHA256: e.modelHash},
		Features: record.FeaturesMeta{Kind: cfg.Features.kind()},
		Data:     record.DataMeta{Format: cfg.Data.Format, File: record.File{Path: cfg.Data.Path, SHA256: e.dataHash}, Images: e.src.Len(), Classes: e.classes},
		Scenario: record.DescribeScenario(cfg.Scenario),
		Seeds:    cfg.Seeds, Passes: cfg.Passes, Iterations: cfg.Iterations,
		Version: record.Version(),
	}
	if m.Iterations == 0 {
		m.Iterations = (cfg.Passes + cfg.Regression.Passes) * e.src.Len()
	}
	if cfg.Features.Model != "" {
		m.Features.Model = &record.File{Path: cfg.Features.Model, SHA256: e.featHash}
		m.Features.Output = cfg.Features.Output
	}
	for _, a := range cfg.Agents {
		if !cfg.Regressing() {
			m.Agents = append(m.Agents, record.AgentMeta{ID: a.ID, Name: a.Name, Options: a.Options})
			continue
		}
		for _, state := range []string{record.Carried, record.Fresh} {
			m.Agents = append(m.Agents, record.AgentMeta{ID: regressionID(a.ID, state), Name: a.Name, Options: a.Options})
		}
	}
	return m
}

// writeRunFiles writes the configuration's snapshot config.yaml and
// run.json into the results folder; verdictsSHA256 is the sha256 of the
// folder's sweep.csv, "" for none.
func (e *Experiment) writeRunFiles(verdictsSHA256 string) error {
	out := e.Config.Output
	if err := record.WriteFileAtomic(filepath.Join(out, record.ConfigFile), e.Config.doc); err != nil {
		return err
	}
	m := e.meta()
	m.VerdictsSHA256 = verdictsSHA256
	return record.WriteMeta(filepath.Join(out, record.MetaFile), m)
}

// keepVerdicts returns the sha256 of the results folder's sweep.csv when it
// belongs to this experiment (an earlier amt sweep of the same
// configuration wrote it, as run.json says), so that an online run keeps
// it; otherwise it removes a stale sweep.csv and returns "".
func (e *Experiment) keepVerdicts() (string, error) {
	out := e.Config.Output
	csv := filepath.Join(out, record.VerdictsFile)
	if _, err := os.Stat(csv); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if m, err := record.ReadMeta(filepath.Join(out, record.MetaFile)); err == nil && m.Identity == e.id && m.VerdictsSHA256 != "" {
		if sum, err := record.FileSHA256(csv); err == nil && sum == m.VerdictsSHA256 {
			return sum, nil
		}
	}
	if err := os.Remove(csv); err != nil {
		return "", fmt.Errorf("removing the stale %s: %w", csv, err)
	}
	return "", nil
}

// removeStaleFiles removes a tune.json left by an earlier amt tune, and
// the files of an earlier regression experiment unless this is one: they
// would describe other runs.
func (e *Experiment) removeStaleFiles() error {
	stale := []string{record.TuneFile}
	if !e.Config.Regressing() {
		stale = append(stale, record.RegressionFile, record.VerdictsAfterFile)
	}
	if !e.Config.CorruptionReport() {
		stale = append(stale, record.CorruptionFile, record.VerdictsReferenceFile)
	}
	for _, f := range stale {
		if err := os.Remove(filepath.Join(e.Config.Output, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// removeStaleAgents deletes the agent folders of the results folder that
// no agent of the configuration writes (an agent removed or renamed since
// an earlier run into the same folder), so that they are not read as
// results of this run. Only folders holding nothing but result files
// (summary.json, timing.json, seed-<n>.jsonl) are removed, each with a
// line to log; any other folder is left, and amt plot names it.
func (e *Experiment) removeStaleAgents(log io.Writer) error {
	out := e.Config.Output
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("results folder: %w", err)
	}
	agents := map[string]bool{record.FiguresDir: true, record.TablesDir: true}
	for _, a := range e.Config.Agents {
		agents[a.ID] = true
	}
	for _, en := range entries {
		if !en.IsDir() || agents[en.Name()] || strings.HasPrefix(en.Name(), ".") {
			continue
		}
		dir := filepath.Join(out, en.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("results folder: %w", err)
		}
		results := len(files) > 0
		for _, f := range files {
			results = results && f.Type().IsRegular() && record.IsAgentFile(f.Name())
		}
		if !results {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("removing the stale agent folder %s: %w", dir, err)
		}
		fmt.Fprintf(log, "%s: removed %s, an earlier run's: no agent of the configuration writes it\n", e.Config.Name, dir)
	}
	return nil
}

// Run runs every agent of the experiment over every seed (online or
// replay, as configured) and writes Output/<agent id>/{summary.json,
// seed-<n>.jsonl, timing.json} and Output/config.yaml (a copy of the
// configuration). In replay mode it first computes or loads the sweep.
// Messages go to log; progress (may be nil) gets the sweep's progress and
// each agent's (stage "<agent id>": iterations over all seeds).
func (e *Experiment) Run(ctx context.Context, log io.Writer, progress ProgressFunc) error {
	cfg := e.Config
	if cfg.Tuning() {
		return cfg.errAt("tune", "this experiment tunes its agents first: run amt tune -config %s", cfg.File)
	}
	if err := e.removeStaleFiles(); err != nil {
		return err
	}
	env, err := e.env(ctx, progress, false)
	if err != nil {
		return err
	}
	if cfg.Mode == "online" { // replay's sweep wrote them
		sum, err := e.keepVerdicts()
		if err != nil {
			return err
		}
		if err := e.writeRunFiles(sum); err != nil {
			return err
		}
	}
	if err := e.removeStaleAgents(log); err != nil {
		return err
	}
	if a := e.after; a != nil {
		var after Env
		if cfg.Mode == "replay" {
			after, err = e.afterTable.replayEnv(cfg.Scenario, cfg.Features.sut())
		} else {
			after, err = a.study.newEnv(a.src.Len(), a.newExt, a.Config.Features.sut(), a.relations, cfg.Scenario)
		}
		if err != nil {
			return err
		}
		return e.runRegression(ctx, env, after, log, progress)
	}
	for i, a := range cfg.Agents {
		fmt.Fprintf(log, "%s: agent %s (%s), %s, %s mode\n", cfg.Name, a.ID, a.Name, plural.Count(len(cfg.Seeds), "seed"), cfg.Mode)
		newAgent, o := e.seedsSetup(a, env, log)
		if progress != nil {
			total, done := e.iterations(env)*len(cfg.Seeds), 0
			stage := Stage{Name: "agent " + a.ID, Unit: "iteration"}
			progress(stage, 0, total)
			o.Trace = func(uint64, Step) { done++; progress(stage, done, total) }
		}
		vlog := e.galleryLog(i, &o)
		sum, err := RunSeeds(ctx, env, cfg.Scenario, newAgent, filepath.Join(cfg.Output, a.ID), o)
		if err != nil {
			return err
		}
		if err := e.drawRunGallery(ctx, a.ID, vlog); err != nil {
			return err
		}
		e.logSummary(log, a, sum)
	}
	return nil
}

// env returns the Env of the experiment's agent runs: in replay mode the
// sweep's table (computed first where the cache lacks it, or with
// cacheOnly assembled from the cache alone, as MergeSweep does, without
// writing result files), in online mode the case study's SUT.
func (e *Experiment) env(ctx context.Context, progress ProgressFunc, cacheOnly bool) (Env, error) {
	cfg := e.Config
	sc := cfg.Scenario
	switch cfg.Mode {
	case "replay":
		var t *Table
		var err error
		if cacheOnly {
			setup := e.sweepSetup(nil)
			setup.mergeOnly, setup.readOnly = true, true
			if t, err = sweep(ctx, setup); err != nil {
				return nil, fmt.Errorf("replay mode: the agents' shards read the whole sweep from the cache (merge it first): %w", err)
			}
		} else {
			t, err = e.Sweep(ctx, progress)
		}
		if err != nil {
			return nil, err
		}
		return t.replayEnv(sc, cfg.Features.sut())
	case "online":
		return e.study.newEnv(e.src.Len(), e.newExt, cfg.Features.sut(), e.relations, sc)
	default:
		return nil, cfg.errAt("mode", "unknown mode %q", cfg.Mode)
	}
}

// iterations returns the iterations of one run in env.
func (e *Experiment) iterations(env Env) int {
	if e.Config.Iterations > 0 {
		return e.Config.Iterations
	}
	return e.Config.Passes * env.Len()
}

// seedsSetup returns how agent a runs over the seeds in env: the maker of
// its agent for a seed (loading its saved state when the configuration
// keeps state) and RunSeeds's options, without a trace.
func (e *Experiment) seedsSetup(a AgentSpec, env Env, log io.Writer) (func(seed uint64) (Agent, error), SeedsOptions) {
	cfg := e.Config
	sc := cfg.Scenario
	stateDir := ""
	if cfg.State != "" {
		stateDir = filepath.Join(cfg.State, a.ID)
	}
	newAgent := func(seed uint64) (Agent, error) {
		var ag Agent
		var err error
		if stateDir == "" {
			ag, err = NewAgent(a, sc, env.Layout(), seed)
		} else {
			var loaded bool
			ag, loaded, err = loadOrNewAgent(statePath(stateDir, seed), a, sc, env.Layout(), seed)
			if loaded {
				fmt.Fprintf(log, "%s: agent %s, seed %d: continuing from %s\n", cfg.Name, a.ID, seed, statePath(stateDir, seed))
			}
		}
		if err != nil {
			return nil, err
		}
		// A corruption report's audit sample (0 elsewhere: the agent itself).
		return withAudit(ag, sc, cfg.Corruption.Audit, seed), nil
	}
	return newAgent, SeedsOptions{
		Agent: a.ID, Mode: cfg.Mode, Seeds: cfg.Seeds, Passes: cfg.Passes, Iter: cfg.Iterations,
		Interval: cfg.LogInterval, Timing: cfg.Timing, StateDir: stateDir, Identity: e.id, LogDecisions: e.LogDecisions,
		ParamErrors: cfg.CorruptionReport(),
	}
}

// logSummary writes an agent's final line: its violations over all seeds.
func (e *Experiment) logSummary(log io.Writer, a AgentSpec, sum record.Summary) {
	var it, viol int
	for _, r := range sum.Runs {
		it += r.Iterations
		viol += r.Violations
	}
	fmt.Fprintf(log, "%s: agent %s: %s in %s (%.2f%%)\n", e.Config.Name, a.ID, plural.Count(viol, "violation"), plural.Count(it, "iteration"), 100*float64(viol)/float64(max(it, 1)))
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

// An imageLister is a data set whose images are files that its main file
// only lists (a COCO instances JSON and its image folder).
type imageLister interface {
	ImageFiles() (names, paths []string)
}

// A folderLister is a data set of the image files of one folder that it
// names (data.Folder).
type folderLister interface {
	Names() []string
}

// dataHash returns the hex sha256 that the cache keys and run.json record
// for a data set: pathHash of its path (a CIFAR-10 or IDX file), for an
// IDX data set with labels the hash of that hash and the label file's, for
// an image folder folderHash of the files it reads, and for a data set
// that lists its image files (COCO) the hash of
// the JSON's hash followed by every listed image, in the JSON's order, as
// its name and the sha256 of its content — so that a changed image
// invalidates the cached verdicts and features, not only a changed JSON.
// The images are hashed in parallel (GOMAXPROCS readers).
func dataHash(ctx context.Context, path string, src data.Source) (string, error) {
	if f, ok := src.(folderLister); ok {
		return folderHash(ctx, path, f.Names())
	}
	h, err := pathHash(ctx, path)
	if err != nil {
		return "", err
	}
	if l, ok := src.(interface{ LabelPath() string }); ok && l.LabelPath() != "" {
		// An IDX data set's labels are a file of their own.
		lh, err := fileHash(ctx, l.LabelPath())
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256([]byte(h + " labels " + lh + "\n"))
		return hex.EncodeToString(sum[:]), nil
	}
	l, ok := src.(imageLister)
	if !ok {
		return h, nil
	}
	names, paths := l.ImageFiles()
	sums := make([]string, len(paths))
	errs := make([]error, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(paths); i = int(next.Add(1) - 1) {
				sums[i], errs[i] = fileHash(ctx, paths[i])
				if errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return "", err
		}
	}
	all := sha256.New()
	fmt.Fprintf(all, "%s\n", h)
	for i, name := range names {
		fmt.Fprintf(all, "%s %s\n", name, sums[i])
	}
	return hex.EncodeToString(all.Sum(nil)), nil
}

// folderHash hashes the files of folder dir that an image folder data set
// reads, exactly those (names, as the data set lists them, and
// contents): a file read through a symbolic link is hashed through it, so
// re-pointing the link changes the key, and a file the data set does not
// read (a README, .DS_Store, amt's own results when the output is the
// image folder) does not.
func folderHash(ctx context.Context, dir string, names []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "folder\n")
	for _, name := range names {
		fh, err := fileHash(ctx, filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", name, fh)
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
