package main

import (
	"context"
	"fmt"
	"time"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/plots"
)

const gatePowerSynopsis = `-config FILE [-out DIR]

amt gate-power measures whether amt check works: for every pair of models
of the configuration's power section (old → new, with a known ground truth:
no change, or a regressed MR), every budget, every follow-up design and
every cycle seed, it replays the CI cycle of examples/ci in memory from the
models' cached sweeps — a check of the old model that saves its agent state
and results, then a check of the new model that continues from that state
with those results as the baseline — and records whether the second check
failed and on which MRs. It writes config.yaml, study.json, outcomes.csv,
report.md (failure rates with 95 % Wilson intervals, the budget each design
needs for 90 % power, the verdict) and figures/power-<pair>.png and .svg.
The same configuration gives byte-identical files.`

// cmdGatePower runs a gate power study and draws its report.
func cmdGatePower(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "gate-power", gatePowerSynopsis)
	c := newConfigFlags(fs, "study configuration (YAML) with a power section, e.g. experiments/configs/gate-power.yaml", assetsHelp)
	c.declareOut()
	if err := c.parse(args); err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	start := time.Now()
	p := experiments.NewProgress(env.stderr)
	_, _, err = experiments.GatePower(ctx, cfg, env.stderr, p.Report, false)
	p.Done()
	if err != nil {
		return err
	}
	s, err := plots.WriteGatePower(cfg.Output)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s: %d CI cycles in %s; report %s/report.md (amt check's design: %s)\n", cfg.Name,
		len(s.Study.Pairs)*len(s.Study.Methods)*len(s.Study.Budgets)*len(s.Study.Cycles), time.Since(start).Round(time.Second), cfg.Output, s.DefaultMethod())
	return nil
}
