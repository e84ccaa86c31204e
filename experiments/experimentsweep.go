package experiments

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/scenario"
)

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
	pf := sweepProgress(progress, e.Config.Name+" shard "+sh.String())
	return sweepShard(ctx, e.sweepSetup(pf), sh)
}

// sweep is Sweep, or with mergeOnly MergeSweep.
func (e *Experiment) sweep(ctx context.Context, progress ProgressFunc, mergeOnly bool) (*Table, error) {
	pf := sweepProgress(progress, e.Config.Name)
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
	pf := sweepProgress(progress, e.Config.Name+" (SUT after the change)")
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
