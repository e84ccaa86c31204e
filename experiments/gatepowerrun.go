package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/amt-dev/amt/experiments/gate"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
)

// ErrNotCached is the error of a study that may not compute sweeps when a
// model's sweep is not all in the cache.
var ErrNotCached = errors.New("the sweep is not all in the cache")

// GatePower runs the configuration's gate power study (amt gate-power):
// it prepares every model of power.pairs with the configuration's other
// sut keys, computes or loads its exhaustive sweep from the cache, replays
// the study (PowerStudy) and writes into Output the snapshot config.yaml,
// study.json (record.GatePower) and outcomes.csv (one line per CI cycle).
// plots.WriteGatePower draws the report from the last two. The same
// configuration gives byte-identical files.
//
// With cachedOnly it computes no sweep: a model whose table is not all in
// the cache is an error wrapping ErrNotCached, for checks that must not
// run the models.
func GatePower(ctx context.Context, cfg *Config, log io.Writer, progress ProgressFunc, cachedOnly bool) (record.GatePower, []PowerOutcome, error) {
	var g record.GatePower
	if !cfg.Powering() {
		return g, nil, cfg.errAt("power", "no power.pairs: not a gate power study")
	}
	pc := cfg.Power
	var spec AgentSpec
	for _, a := range cfg.Agents {
		if a.ID == cfg.Check.Agent {
			spec = a
		}
	}
	// The models, each once, in order of appearance.
	var paths []string
	for _, p := range pc.Pairs {
		for _, m := range []string{p.Old, p.New} {
			if !slices.Contains(paths, m) {
				paths = append(paths, m)
			}
		}
	}
	envs := map[string]Env{}
	g = record.GatePower{
		Experiment: cfg.Name, Agent: spec.Name, AgentOptions: spec.Options, Audit: pc.Audit, CheckAudit: cfg.Check.Audit,
		Alpha: cfg.Check.Alpha, MarginPP: cfg.Check.Margin,
		Scenario: cfg.Scenario.Name, Relations: cfg.Scenario.Actions(),
		Features: cfg.Features.kind(),
		Budgets:  pc.Budgets, Methods: PowerMethods(), Cycles: pc.Cycles,
	}
	for i, path := range paths {
		c := *cfg
		c.SUT.Model, c.Power = path, PowerConfig{}
		e, err := prepare(ctx, &c, "power.pairs")
		if err != nil {
			return g, nil, fmt.Errorf("gate power: model %s: %w", path, err)
		}
		pf := sweepProgress(progress, filepath.Base(path))
		setup := e.sweepSetup(pf)
		sctx, missing := ctx, 0
		if cachedOnly {
			// The first report counts the cached images: any missing one
			// stops the sweep before it computes.
			var cancel context.CancelFunc
			sctx, cancel = context.WithCancel(ctx)
			defer cancel()
			setup.progress = func(done, total int) {
				if done < total && missing == 0 {
					missing = total - done
					cancel()
				}
			}
		}
		t, err := sweep(sctx, setup)
		if missing > 0 {
			return g, nil, fmt.Errorf("gate power: model %s: %d images of its sweep are not in the cache %s: %w", path, missing, cfg.Cache, ErrNotCached)
		}
		if err != nil {
			return g, nil, fmt.Errorf("gate power: model %s: %w", path, err)
		}
		env, err := t.replayEnv(cfg.Scenario, cfg.Features.sut())
		if err != nil {
			return g, nil, fmt.Errorf("gate power: model %s: %w", path, err)
		}
		envs[path] = env
		g.Models = append(g.Models, record.File{Path: filepath.Base(path), SHA256: e.modelHash})
		if i == 0 {
			g.Data = record.File{Path: filepath.Base(cfg.Data.Path), SHA256: e.dataHash}
			g.Images = e.src.Len()
		}
	}
	st := PowerStudy{
		Scenario: cfg.Scenario, Envs: envs, Agent: spec, Audit: pc.Audit,
		Regression: gate.Regression{MarginPP: cfg.Check.Margin, Alpha: cfg.Check.Alpha},
		Budgets:    pc.Budgets, Passes: cfg.Passes, Methods: PowerMethods(), Cycles: pc.Cycles,
	}
	for _, p := range pc.Pairs {
		st.Pairs = append(st.Pairs, PowerPair(p))
		g.Pairs = append(g.Pairs, record.GatePowerPair{Name: p.Name, Old: filepath.Base(p.Old), New: filepath.Base(p.New), Reseed: p.Reseed, Regressed: p.Regressed})
	}
	fmt.Fprintf(log, "%s: %s × %d designs × %s × %s: %s\n", cfg.Name, plural.Count(len(st.Pairs), "pair"), len(st.Methods),
		plural.Count(len(st.Budgets), "budget"), plural.Count(len(st.Cycles), "cycle"), plural.Count(len(st.Pairs)*len(st.Methods)*len(st.Budgets)*len(st.Cycles), "CI cycle"))
	outs, err := st.Run(ctx, progress)
	if err != nil {
		return g, nil, err
	}
	if err := record.WriteFileAtomic(filepath.Join(cfg.Output, record.ConfigFile), cfg.doc); err != nil {
		return g, nil, err
	}
	if err := record.WriteGatePower(filepath.Join(cfg.Output, record.GatePowerFile), g); err != nil {
		return g, nil, err
	}
	return g, outs, record.WriteGatePowerOutcomes(filepath.Join(cfg.Output, record.GatePowerOutcomesFile), outs)
}
