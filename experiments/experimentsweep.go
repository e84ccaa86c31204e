package experiments

import (
	"context"
	"errors"
	"fmt"
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
	t, publish, err := e.sweepTables(ctx, progress, mergeOnly)
	if err != nil {
		return nil, err
	}
	return t, publish()
}

// sweepTables computes (or loads from the cache) the experiment's tables:
// the SUT's, and a regression experiment's after the change
// (AfterTable) or a corruption report's reference SUT's (ReferenceTable).
// It writes nothing into the results folder; publish writes their result
// files: sweep.csv, run.json and config.yaml, and sweep-after.csv, or
// sweep-reference.csv and corruption.json. Sweep publishes at once; Run
// publishes with its agents' results, when all are done, so that an
// interrupted run leaves the previous results as they were.
func (e *Experiment) sweepTables(ctx context.Context, progress ProgressFunc, mergeOnly bool) (t *Table, publish func() error, err error) {
	setup := e.sweepSetup(sweepProgress(progress, e.Config.Name))
	setup.mergeOnly = mergeOnly
	if t, err = sweep(ctx, setup); err != nil {
		return nil, nil, err
	}
	if e.after != nil {
		if e.afterTable, err = sweep(ctx, e.after.sweepSetup(sweepProgress(progress, e.Config.Name+" (SUT after the change)"))); err != nil {
			return nil, nil, err
		}
	}
	if e.reference != nil {
		if e.referenceTable, err = sweep(ctx, e.reference.sweepSetup(sweepProgress(progress, e.Config.Name+" (reference SUT)"))); err != nil {
			return nil, nil, fmt.Errorf("corruption.reference: %w", err)
		}
	}
	publish = func() error {
		out, variants := e.Config.Output, e.Config.Scenario.Variants()
		sum, err := writeTableCSV(t, filepath.Join(out, record.VerdictsFile), variants)
		if err != nil {
			return err
		}
		if err := e.writeRunFiles(sum); err != nil {
			return err
		}
		if e.after != nil {
			if _, err := writeTableCSV(e.afterTable, filepath.Join(out, record.VerdictsAfterFile), variants); err != nil {
				return err
			}
		}
		if e.reference != nil {
			return e.writeReferenceFiles()
		}
		return nil
	}
	return t, publish, nil
}

// writeTableCSV writes t's rows of variants to path and returns the file's
// sha256.
func writeTableCSV(t *Table, path string, variants []scenario.Variant) (string, error) {
	if err := t.WriteCSV(path, variants); err != nil {
		return "", err
	}
	return record.FileSHA256(path)
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
