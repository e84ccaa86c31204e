package experiments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/scenario"
)

// sweepConfig describes an exhaustive sweep: every follow-up of every
// source image judged by the case study's system under test, plus every
// image's context features.
type sweepConfig struct {
	// study judges the images (and says how judgements are cached).
	study caseStudy
	// source yields the images of the whole data set (the cache's rows).
	source source
	// variants are the follow-ups of every image, in table column order;
	// relations maps each variant's key to its relation.
	variants  []scenario.Variant
	relations map[string]relation
	// newExtractor makes the feature extractor of one worker; nil for an
	// experiment without context features.
	newExtractor func() (extractor, error)
	// cacheDir holds the cached tables: the judgements under verdictKey,
	// the features under featureKey (see sweepcache.go). The keys must
	// describe the content of everything the results depend on (file
	// hashes, settings).
	cacheDir               string
	verdictKey, featureKey any
	// sut also computes every image's grey-box context block (greybox.go)
	// with the study's newSutAnswer, one SUT inference per image, and
	// caches it in its own table (namespace "sut", keyed by verdictKey and
	// the block's description), so the verdict cache is the same with and
	// without it.
	sut bool
	// limit restricts the table to the first limit images (0 = all). The
	// cache holds rows of the whole source, so a limited sweep reuses and
	// extends the cache of the unlimited one and the other way round.
	limit int
	// workers is the number of concurrent workers; 0 means
	// kernels.Threads (GOMAXPROCS unless the program set it lower).
	workers int
	// budget, when set, bounds the pixels of the images in flight.
	budget *imageBudget
	// progress, when set, is called with the number of finished images
	// (cached ones included) after each image.
	progress func(done, total int)
	// mergeOnly makes sweep assemble the table from the cache alone (see
	// sweep); readOnly, with it, also leaves the cache as it is (no
	// consolidation), for readers that may run beside each other.
	mergeOnly, readOnly bool
}

// Table is a finished sweep: what the system under test said about every
// image and every follow-up, and every image's context features.
type Table struct {
	Images   int
	Variants []scenario.Variant
	Dim      int       // feature dimension (0 without features)
	Features []float32 // images × Dim, row-major

	// sut is the grey-box block, images × sutDim, when the sweep computed
	// it (sweepConfig.sut; see SutFeatures).
	sut    []float32
	sutDim int

	study  caseStudy
	judged []judgement // per image
}

// Verdicts returns the table rows of the given follow-ups (a scenario's
// variants, looked up by key) for every image, image-major, in the order
// of vars; it is an error if the table lacks one of them.
func (t *Table) Verdicts(vars []scenario.Variant) ([]record.Verdict, error) {
	col := map[string]int{}
	for j, v := range t.Variants {
		col[v.Key()] = j
	}
	cols := make([]int, len(vars))
	for k, v := range vars {
		j, ok := col[v.Key()]
		if !ok {
			return nil, fmt.Errorf("sweep: the table has no follow-up %s", v.Key())
		}
		cols[k] = j
	}
	out := make([]record.Verdict, 0, t.Images*len(vars))
	for i := 0; i < t.Images; i++ {
		for k, v := range vars {
			out = append(out, t.study.verdict(t.judged[i], cols[k], v))
		}
	}
	return out, nil
}

// exportVerdicts returns the rows of Verdicts as a verdict CSV shows them:
// the Image column holds the image's id (for a detection table the data
// set's image id, the image_id column), not its position.
func (t *Table) exportVerdicts(vars []scenario.Variant) ([]record.Verdict, error) {
	rows, err := t.Verdicts(vars)
	if err != nil {
		return nil, err
	}
	for k := range rows {
		rows[k].Image = int(t.judged[rows[k].Image].id())
	}
	return rows, nil
}

// WriteCSV writes the rows of the given follow-ups to path (atomically)
// with the case study's columns of package record.
func (t *Table) WriteCSV(path string, vars []scenario.Variant) error {
	rows, err := t.exportVerdicts(vars)
	if err != nil {
		return err
	}
	return record.WriteVerdictsCSV(path, rows, t.study.name() == studyDetection)
}

// sweep computes the exhaustive table, reusing what the cache already
// holds. Finished images are appended to checkpoint files as they
// complete, so an interrupted sweep (ctx cancelled, Ctrl-C, kill) loses at
// most the images in flight; rerunning computes only the missing images
// and ends with the same table. When the table of the whole data set is
// complete it is consolidated. Two sweeps must not share a cache directory
// at the same time (the shards of one sweep may: see sweepShard).
//
// With cfg.mergeOnly it computes nothing: it assembles the table from the
// consolidated table and the shard files of one split, and fails with a
// *MissingShardsError naming the shards that are missing. With
// cfg.readOnly too it does not consolidate either: the shards of an agent
// run read the sweep at the same time, and one consolidating (removing the
// shard files) would pull them from under the others.
func sweep(ctx context.Context, cfg sweepConfig) (*Table, error) {
	mode := readAll
	if cfg.mergeOnly {
		mode = readMerge
	}
	s, err := openSweep(ctx, &cfg, mode, Shard{})
	if err != nil {
		return nil, err
	}
	todo := s.missing(Shard{})
	if cfg.mergeOnly && len(todo) > 0 {
		return nil, s.missingShards(todo)
	}
	done := s.t.Images - len(todo)
	if cfg.progress != nil {
		cfg.progress(done, s.t.Images)
	}
	if len(todo) > 0 {
		if err := s.run(ctx, todo, done, s.t.Images); err != nil {
			return nil, err
		}
	}
	if cfg.sut {
		if err := s.sutPass(ctx, s.total); err != nil {
			return nil, err
		}
	}
	if s.t.Images < s.total || cfg.readOnly {
		return s.t, nil // only a whole table is consolidated, and not by a reader
	}
	if err := s.verdicts.consolidate(s.total, s.verdictLine); err != nil {
		return nil, err
	}
	if s.features != nil {
		if err := s.features.consolidate(s.total, s.featureLine); err != nil {
			return nil, err
		}
	}
	if s.sut != nil {
		dim := s.t.sutDim
		if err := s.sut.consolidate(s.total, func(i int) any {
			return featureLine{Image: i, Features: s.t.sut[i*dim : (i+1)*dim]}
		}); err != nil {
			return nil, err
		}
	}
	return s.t, nil
}

// sweepShard computes shard sh of the sweep: the images i < n (the
// sweep's images) with i mod sh.Count = sh.Index that the cache lacks.
// It checkpoints them to the shard's own files and, when the shard is
// done, writes its shard files (see sweepcache.go). Any number of shards
// of one split may run at the same time, on machines sharing the cache
// folder; rerunning a finished shard computes nothing. The progress counts
// the shard's images.
func sweepShard(ctx context.Context, cfg sweepConfig, sh Shard) (ShardStats, error) {
	st := ShardStats{Shard: sh}
	s, err := openSweep(ctx, &cfg, readShard, sh)
	if err != nil {
		return st, err
	}
	st.Items = sh.items(s.t.Images)
	todo := s.missing(sh)
	st.Cached, st.Computed = st.Items-len(todo), len(todo)
	if cfg.progress != nil {
		cfg.progress(st.Cached, st.Items)
	}
	if len(todo) > 0 {
		if err := s.run(ctx, todo, st.Cached, st.Items); err != nil {
			return st, err
		}
	}
	n := s.t.Images
	for _, c := range []struct {
		t    *cacheTable
		ld   loaded
		line func(int) any
	}{{s.verdicts, s.ldV, s.verdictLine}, {s.features, s.ldF, s.featureLine}} {
		if c.t == nil || c.ld.table {
			continue // no such table, or the whole table is consolidated
		}
		if upto, ok := c.ld.upto[sh.Index]; ok && upto >= n {
			continue // the shard file holds every row already
		}
		if err := c.t.writeShard(sh, n, c.line); err != nil {
			return st, err
		}
	}
	return st, nil
}

// openSweep checks the sweep's configuration, opens its cache tables and
// loads what they hold, reading as mode says (sh is the reading shard in
// readShard mode).
func openSweep(ctx context.Context, cfg *sweepConfig, mode readMode, sh Shard) (*sweepRun, error) {
	total := cfg.source.Len() // images of the cached table
	if total == 0 {
		return nil, errors.New("sweep: the data set is empty")
	}
	n := total // images of this sweep
	if cfg.limit > 0 && cfg.limit < total {
		n = cfg.limit
	}
	if len(cfg.variants) == 0 {
		return nil, errors.New("sweep: no follow-ups")
	}
	keys := make([]string, len(cfg.variants))
	for j, v := range cfg.variants {
		keys[j] = v.Key()
		if cfg.relations[keys[j]] == nil {
			return nil, fmt.Errorf("sweep: no relation for follow-up %s", keys[j])
		}
	}
	s := &sweepRun{cfg: cfg, shard: sh, total: total, haveV: make([]bool, n), haveF: make([]bool, n), stamp: time.Now().UnixNano()}
	s.t = &Table{Images: n, Variants: cfg.variants, study: cfg.study, judged: make([]judgement, n)}
	var err error
	if cfg.newExtractor != nil {
		if s.ext0, err = cfg.newExtractor(); err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
		s.t.Dim = s.ext0.Dim()
		s.t.Features = make([]float32, n*s.t.Dim)
	}
	if s.verdicts, err = openCache(cfg.cacheDir, "verdicts", cfg.verdictKey, cacheMeta{Kind: cfg.study.cacheKind(), Images: total, Variants: keys}); err != nil {
		return nil, err
	}
	if s.ldV, err = s.verdicts.load(ctx, mode, sh, func(line []byte) (int, error) {
		j, err := cfg.study.decode(line)
		if err != nil {
			return 0, err
		}
		if err := checkFits(j, total, len(keys)); err != nil {
			return 0, err
		}
		if i := j.image(); i < n && !s.haveV[i] {
			s.haveV[i], s.t.judged[i] = true, j
		}
		return j.image(), nil
	}); err != nil {
		return nil, err
	}
	if cfg.newExtractor != nil {
		dim := s.t.Dim
		if s.features, err = openCache(cfg.cacheDir, "features", cfg.featureKey, cacheMeta{Kind: "features", Images: total, Dim: dim}); err != nil {
			return nil, err
		}
		if s.ldF, err = s.features.load(ctx, mode, sh, func(line []byte) (int, error) {
			var l featureLine
			if err := strictJSON(line, &l); err != nil {
				return 0, err
			}
			if l.Image < 0 || l.Image >= total || len(l.Features) != dim {
				return 0, fmt.Errorf("image %d with %d features does not fit %d images × %d", l.Image, len(l.Features), total, dim)
			}
			if l.Image < n && !s.haveF[l.Image] {
				s.haveF[l.Image] = true
				copy(s.t.Features[l.Image*dim:], l.Features)
			}
			return l.Image, nil
		}); err != nil {
			return nil, err
		}
	} else {
		for i := range s.haveF {
			s.haveF[i] = true
		}
	}
	return s, nil
}
