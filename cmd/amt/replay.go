package main

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
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
	fs := newFlagSet(env, "replay", "-verdicts TABLE.csv -features FEATS.f32 [-sut-features SUT.f32] -scenario NAME [-objective paper|fault] -agent NAME [-agent-opts k=v,...] -seeds 1-10 [-passes 1] [-log-decisions] -out DIR")
	verdicts := fs.String("verdicts", "", "verdict table CSV (columns image,mr,param,violation at least; e.g. from amt sweep -csv; a detection table's image_id column is numbered by first appearance)")
	feats := fs.String("features", "", "context features: raw little-endian float32 [images, dim], row i = image i (amt sweep -features)")
	sutFeats := fs.String("sut-features", "", "the grey-box block, appended to each context: raw little-endian float32 [images, n] (amt sweep -sut-features)")
	dim := fs.Int("dim", 0, "dimension of -features (0: derived from the file size and the table's image count)")
	scenarioName := fs.String("scenario", "hierarchical", "built-in scenario: "+strings.Join(mr.BuiltinNames(), "|"))
	objective := fs.String("objective", "paper", "paper (the scenario's own rewards) or fault (every violation earns 1 on both levels)")
	agent := fs.String("agent", "", "agent: "+strings.Join(bandit.Agents(), "|"))
	agentOpts := fs.String("agent-opts", "", "agent options k=v,... overriding its defaults")
	seedSpec := fs.String("seeds", "1-10", "seeds: a range 1-10, a list 1,2,5, or both")
	passes := fs.Int("passes", 1, "passes over the images per run (each pass visits every image once, shuffled by the seed)")
	iters := fs.Int("iterations", 0, "iterations per run (0: passes × images)")
	interval := fs.Int("log-interval", 100, "iterations between progress log lines")
	timing := fs.Bool("timing", false, "put measured times into summary.json (they are always in timing.json; off keeps summary.json byte-reproducible)")
	out := fs.String("out", "", "output folder: summary.json, seed-<n>.jsonl, timing.json")
	logDecisions := fs.Bool("log-decisions", false, "also write every decision (image, follow-up, its probability, cost, context) to decisions-seed-<n>.jsonl, the log format of amt ope")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("replay: unexpected arguments %q", fs.Args())
	}
	for _, f := range []struct{ name, v string }{{"verdicts", *verdicts}, {"agent", *agent}, {"out", *out}} {
		if f.v == "" {
			return showUsagef(fs, "replay: -%s is required", f.name)
		}
	}
	if *feats == "" && *sutFeats == "" {
		return showUsagef(fs, "replay: -features or -sut-features (or both) is required")
	}
	// Check everything before any work, so nothing is written on an error.
	if *passes < 1 || *iters < 0 || *interval < 1 || *dim < 0 {
		return usagef("replay: -passes and -log-interval must be ≥ 1, -iterations and -dim ≥ 0")
	}
	seeds, err := experiments.ParseSeeds(*seedSpec)
	if err != nil {
		return usagef("replay: -seeds: %w", err)
	}
	sc, err := mr.Builtin(*scenarioName)
	if err != nil {
		return usagef("replay: -scenario: %w", err)
	}
	switch *objective {
	case "paper":
	case "fault":
		sc.Objective = scenario.Fault
	default:
		return usagef("replay: -objective: %q is not paper or fault%s", *objective, suggest.DidYouMean(*objective, []string{"paper", "fault"}))
	}
	if _, err := bandit.Defaults(*agent); err != nil {
		return usagef("replay: -agent: %w", err)
	}
	opts, err := bandit.ParseOptions(*agentOpts)
	if err != nil {
		return usagef("replay: -agent-opts: %w", err)
	}
	if _, err := bandit.Resolve(*agent, opts); err != nil {
		return usagef("replay: -agent-opts: %w", err)
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
	// The table alone first: a table cut short in the middle of an image
	// is reported as such, not as a mismatch with the features.
	if _, err := experiments.NewReplayEnv(rows, nil, bandit.Layout{}, sc); err != nil {
		return fmt.Errorf("%s: %w", *verdicts, err)
	}
	images := 0
	for _, r := range rows {
		images = max(images, r.Image+1)
	}
	var features []float32
	var layout bandit.Layout
	if *feats != "" {
		if features, layout.Dim, err = record.ReadFeatures(*feats, images, *dim); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	} else if *dim != 0 {
		return fmt.Errorf("replay: -dim without -features")
	}
	if *sutFeats != "" {
		g, gd, err := record.ReadFeatures(*sutFeats, images, 0)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		features = experiments.ConcatRows(features, layout.Dim, g, gd, images)
		layout = bandit.Layout{Dim: layout.Dim + gd, Grey: gd}
	}
	renv, err := experiments.NewReplayEnv(rows, features, layout, sc)
	if err != nil {
		return fmt.Errorf("%s, %s: %w", *verdicts, strings.Trim(*feats+", "+*sutFeats, ", "), err)
	}
	if *iters > *passes*images {
		return fmt.Errorf("replay: -iterations %d is more than passes × images = %d", *iters, *passes*images)
	}
	spec := experiments.AgentSpec{ID: *agent, Name: *agent, Options: opts}
	if _, err := experiments.NewAgent(spec, sc, layout, seeds[0]); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	settings := fmt.Sprintf("scenario %s\nseeds %v\npasses %d\niterations %d\nlog-interval %d\ntiming %v\ndim %d\n",
		sc.Name, seeds, *passes, *iters, *interval, *timing, layout.Dim-layout.Grey)
	if *objective != "paper" {
		settings += "objective " + *objective + "\n"
	}
	id, err := replayIdentity(*verdicts, *feats, *sutFeats, settings)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	sum, err := experiments.RunSeeds(ctx, renv, sc, func(seed uint64) (experiments.Agent, error) {
		return experiments.NewAgent(spec, sc, layout, seed)
	}, *out, experiments.SeedsOptions{
		Agent: *agent, Mode: "replay", Seeds: seeds, Passes: *passes, Iter: *iters, Interval: *interval, Timing: *timing,
		Identity:     id,
		LogDecisions: *logDecisions,
	})
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	var it, viol int
	for _, r := range sum.Runs {
		it += r.Iterations
		viol += r.Violations
	}
	fmt.Fprintf(env.stdout, "%s on %s: %s, %s in %s (%.2f%%); results in %s\n",
		*agent, sc.Name, plural.Count(len(sum.Runs), "run"), plural.Count(viol, "violation"), plural.Count(it, "iteration"), 100*float64(viol)/float64(max(it, 1)), *out)
	return nil
}

// replayIdentity is the identity of amt replay's results (record.Identity):
// it has no configuration, so its config_sha256 hashes what stands in for
// one, the input files' sha256 and the settings every agent of a
// comparison shares (scenario, seeds, passes…; not the agent and its
// options, so that replays of several agents on one table into sibling
// folders plot together, as the agents of one amt run do); its sweep key
// names the two files by their sha256.
func replayIdentity(verdicts, features, sutFeatures, settings string) (record.Identity, error) {
	vs, err := record.FileSHA256(verdicts)
	if err != nil {
		return record.Identity{}, err
	}
	doc, key := "amt replay\nverdicts "+vs+"\n", "file-"+vs[:20]
	if features != "" {
		fs, err := record.FileSHA256(features)
		if err != nil {
			return record.Identity{}, err
		}
		doc, key = doc+"features "+fs+"\n", key+" file-"+fs[:20]
	}
	if sutFeatures != "" {
		ss, err := record.FileSHA256(sutFeatures)
		if err != nil {
			return record.Identity{}, err
		}
		doc, key = doc+"sut-features "+ss+"\n", key+" file-"+ss[:20]
	}
	return record.Identity{ConfigSHA256: record.SHA256([]byte(doc + settings)), SweepKey: key}, nil
}
