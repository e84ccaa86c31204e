package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
)

// denseImages renumbers the images of a detection table, whose image_id
// column holds the data set's (sparse) image ids, 0, 1, … in order of first
// appearance: the data set's order in a table from amt sweep -csv, which is
// also the row order of amt sweep -features. A table already numbered
// 0..n-1 image by image is unchanged.
func denseImages(rows []record.Verdict) {
	idx := map[int]int{}
	for k := range rows {
		i, ok := idx[rows[k].Image]
		if !ok {
			i = len(idx)
			idx[rows[k].Image] = i
		}
		rows[k].Image = i
	}
}

// cmdReplay runs one bandit agent against a precomputed verdict table.
func cmdReplay(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "replay", "-verdicts TABLE.csv -features FEATS.f32 -scenario NAME -agent NAME [-agent-opts k=v,...] -seeds 1-10 [-passes 1] -out DIR")
	verdicts := fs.String("verdicts", "", "verdict table CSV (columns image,mr,param,violation at least; e.g. from amt sweep -csv; a detection table's image_id column is numbered by first appearance)")
	feats := fs.String("features", "", "context features: raw little-endian float32 [images, dim], row i = image i (amt sweep -features)")
	dim := fs.Int("dim", 0, "feature dimension (0: derived from the file size and the table's image count)")
	scenario := fs.String("scenario", "hierarchical", "built-in scenario: "+strings.Join(mr.BuiltinNames(), "|"))
	agent := fs.String("agent", "", "agent: "+strings.Join(bandit.Agents(), "|"))
	agentOpts := fs.String("agent-opts", "", "agent options k=v,... overriding its defaults")
	seedSpec := fs.String("seeds", "1-10", "seeds: a range 1-10, a list 1,2,5, or both")
	passes := fs.Int("passes", 1, "passes over the images per run (each pass visits every image once, shuffled by the seed)")
	iters := fs.Int("iterations", 0, "iterations per run (0: passes × images)")
	interval := fs.Int("log-interval", 100, "iterations between progress log lines")
	timing := fs.Bool("timing", false, "put measured times into summary.json (they are always in timing.json; off keeps summary.json byte-reproducible)")
	out := fs.String("out", "", "output folder: summary.json, seed-<n>.jsonl, timing.json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("replay: unexpected arguments %q", fs.Args())
	}
	for _, f := range []struct{ name, v string }{{"verdicts", *verdicts}, {"features", *feats}, {"agent", *agent}, {"out", *out}} {
		if f.v == "" {
			fs.Usage()
			return fmt.Errorf("replay: -%s is required", f.name)
		}
	}
	// Check everything before any work, so nothing is written on an error.
	if *passes < 1 || *iters < 0 || *interval < 1 || *dim < 0 {
		return fmt.Errorf("replay: -passes and -log-interval must be ≥ 1, -iterations and -dim ≥ 0")
	}
	seeds, err := experiments.ParseSeeds(*seedSpec)
	if err != nil {
		return fmt.Errorf("replay: -seeds: %w", err)
	}
	sc, err := mr.Builtin(*scenario)
	if err != nil {
		return fmt.Errorf("replay: -scenario: %w", err)
	}
	if !slices.Contains(bandit.Agents(), *agent) {
		return fmt.Errorf("replay: -agent: unknown agent %q (known: %s)", *agent, strings.Join(bandit.Agents(), ", "))
	}
	opts, err := bandit.ParseOptions(*agentOpts)
	if err != nil {
		return fmt.Errorf("replay: -agent-opts: %w", err)
	}
	if _, err := bandit.Resolve(*agent, opts); err != nil {
		return fmt.Errorf("replay: -agent-opts: %w", err)
	}
	rows, err := record.ReadVerdictsCSV(*verdicts)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if len(rows) == 0 {
		return fmt.Errorf("replay: %s has no rows", *verdicts)
	}
	if !math.IsNaN(rows[0].MapOriginal) {
		denseImages(rows)
	}
	images := 0
	for _, r := range rows {
		images = max(images, r.Image+1)
	}
	features, d, err := experiments.ReadFeatures(*feats, images, *dim)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	renv, err := experiments.NewReplayEnv(rows, features, d, sc)
	if err != nil {
		return fmt.Errorf("%s, %s: %w", *verdicts, *feats, err)
	}
	if *iters > *passes*images {
		return fmt.Errorf("replay: -iterations %d is more than passes × images = %d", *iters, *passes*images)
	}
	spec := experiments.AgentSpec{ID: *agent, Name: *agent, Options: opts}
	if _, err := experiments.NewAgent(spec, sc, d, seeds[0]); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	sum, err := experiments.RunSeeds(ctx, renv, sc, func(seed uint64) (experiments.Agent, error) {
		return experiments.NewAgent(spec, sc, d, seed)
	}, *out, experiments.SeedsOptions{
		Agent: *agent, Mode: "replay", Seeds: seeds, Passes: *passes, Iter: *iters, Interval: *interval, Timing: *timing,
	})
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	var it, viol int
	for _, r := range sum.Runs {
		it += r.Iterations
		viol += r.Violations
	}
	fmt.Fprintf(env.stdout, "%s on %s: %d runs, %d violations in %d iterations (%.2f%%); results in %s\n",
		*agent, sc.Name, len(sum.Runs), viol, it, 100*float64(viol)/float64(max(it, 1)), *out)
	return nil
}
