package experiments

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/nn/kernels"
	"github.com/amt-dev/amt/scenario"
)

// suiteEnv is one environment of a suite while it runs.
type suiteEnv struct {
	rec   record.SuiteEnv
	sc    scenario.Scenario
	env   Env
	table string // the identity of its SUT's table (cache keys)
}

// suiteRunVersion is part of every cached suite run's key: a change of
// the loop that alters runs must change it (a change of an agent's code
// that alters its runs raises the agent's revision, and a change of its
// defaults changes the key by itself).
const suiteRunVersion = 1

// RunSuite runs an agent benchmark: it computes (or reads from the sweep
// cache) every SUT's exhaustive table, then runs every agent on every
// environment once per seed (in parallel, cfg.Workers at a time; each
// finished run is cached in the sweep cache under a key of its table, its
// scenario, objective, agent and seed, so an interrupted or repeated suite
// redoes nothing done) and writes Output/suite.json. Messages go to log;
// progress (may be nil) gets the sweeps' and the runs' progress.
func RunSuite(ctx context.Context, cfg *SuiteConfig, log io.Writer, progress ProgressFunc) (record.Suite, error) {
	res := record.Suite{Name: cfg.Name, Description: cfg.Description, Seeds: cfg.Seeds, Recommended: cfg.Recommended, Reference: cfg.Reference, Version: record.Version()}
	for _, a := range cfg.Agents {
		res.Agents = append(res.Agents, record.SuiteAgent{ID: a.ID, Name: a.Name, Options: a.Options})
	}
	var envs []*suiteEnv
	for _, c := range cfg.SUTs {
		e, err := Prepare(ctx, c)
		if err != nil {
			return res, err
		}
		pf := sweepProgress(progress, c.Name)
		t, err := sweep(ctx, e.sweepSetup(pf))
		if err != nil {
			return res, err
		}
		// A run depends on the verdicts and on the whole context: the
		// features and, with kind sut, the grey-box block (which the
		// verdicts' key covers: the same model on the same images), and on
		// how many of the images the table has: the verdict and feature
		// caches hold per-image rows, so their keys are those of every
		// data.limit.
		keys, err := json.Marshal([]any{e.verdictKey, e.featureKey, c.Features.kind(), t.Images})
		if err != nil {
			return res, fmt.Errorf("suite: %w", err)
		}
		sutName := strings.TrimPrefix(c.Name, cfg.Name+"-")
		res.SUTs = append(res.SUTs, record.SuiteSUT{Name: sutName, CaseStudy: c.CaseStudy,
			Model:      record.File{Path: filepath.ToSlash(relAssets(c.SUT.Model)), SHA256: e.modelHash},
			Data:       record.File{Path: filepath.ToSlash(relAssets(c.Data.Path)), SHA256: e.dataHash},
			Features:   record.File{Path: filepath.ToSlash(relAssets(c.Features.Model)), SHA256: e.featHash},
			DataFormat: c.Data.Format, Images: t.Images, Grey: c.Data.Format == "idx" || c.Data.Format == "fashion-mnist", SutContext: c.Features.sut()})
		// The SUT's environments share one context matrix, and a
		// scenario's objectives one replay (its outcomes do not depend on
		// the objective; both are read only).
		feats, layout, err := t.contexts(c.Features.sut())
		if err != nil {
			return res, fmt.Errorf("suite: %s: %w", c.Name, err)
		}
		for _, scName := range cfg.Scenarios {
			paper, err := mr.Builtin(scName)
			if err != nil {
				return res, err
			}
			rows, err := t.Verdicts(paper.Variants())
			if err != nil {
				return res, err
			}
			env, err := NewReplayEnv(rows, feats, layout, paper)
			if err != nil {
				return res, fmt.Errorf("suite: %s: %w", c.Name, err)
			}
			for _, obj := range cfg.Objectives {
				sc := paper
				if obj == "fault" {
					sc.Objective = scenario.Fault
				}
				se := &suiteEnv{sc: sc, env: env, table: record.SHA256(keys),
					rec: record.SuiteEnv{Name: sutName + "/" + scName + "/" + obj, SUT: sutName, Scenario: scName, Objective: obj, Images: t.Images,
						Oracles: SuiteOracles(rows, sc, t.Images)}}
				envs = append(envs, se)
			}
		}
		fmt.Fprintf(log, "suite %s: %s: %d images, table ready\n", cfg.Name, sutName, t.Images)
	}
	agents := slices.Clone(cfg.Agents)
	if len(cfg.Tune.Seeds) > 0 {
		tuning, err := tuneSuite(ctx, cfg, envs, progress)
		if err != nil {
			return res, err
		}
		for _, tu := range tuning {
			k := slices.IndexFunc(agents, func(a AgentSpec) bool { return a.ID == tu.Agent })
			agents[k].Options = tu.Settings[tu.Chosen].Options
			res.Agents[k].Options = tu.Settings[tu.Chosen].Options
			fmt.Fprintf(log, "suite %s: tuned %s on seeds %s: %s (mean normalised score %.3f of %d settings' best)\n",
				cfg.Name, tu.Agent, seedRangeText(tu.Seeds), canonical(tu.Settings[tu.Chosen].Options), tu.Settings[tu.Chosen].MeanNorm, len(tu.Settings))
		}
		res.Tuning = tuning
	}
	var cells []suiteCell
	for _, e := range envs {
		e.rec.Runs = make([]record.SuiteRuns, len(agents))
		for k, spec := range agents {
			cells = append(cells, suiteCell{runs: &e.rec.Runs[k], env: e, spec: spec, seeds: cfg.Seeds})
		}
	}
	if err := runSuiteJobs(ctx, cfg, "runs", cells, progress); err != nil {
		return res, err
	}
	for _, e := range envs {
		res.Envs = append(res.Envs, e.rec)
	}
	if err := record.WriteSuite(filepath.Join(cfg.Output, record.SuiteFile), res); err != nil {
		return res, err
	}
	fmt.Fprintf(log, "suite %s: %d environments × %d agents × %d seeds; results in %s\n", cfg.Name, len(envs), len(cfg.Agents), len(cfg.Seeds), cfg.Output)
	return res, nil
}

// relAssets returns path relative to the assets folder when it lies in
// it, so that results do not depend on where the assets are.
func relAssets(path string) string {
	if dir, err := data.AssetsDir(); err == nil {
		if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return path
}

// SuiteOracles computes an environment's oracle scores from its table
// rows (image-major, in the scenario's variant order): the reward of a
// violating follow-up is its main arm's reward under the scenario's
// objective, as the loop scores it. BestPerClass is computed when every
// image has a predicted class (PredOriginal ≥ 0: a classifier's table).
func SuiteOracles(rows []record.Verdict, sc scenario.Scenario, images int) record.SuiteOracles {
	vars := sc.Variants()
	reward := make([]float64, len(vars))
	weight := make([]float64, len(vars)) // the probability that random selection picks the variant
	for j, v := range vars {
		reward[j] = sc.MainReward(v.Arm)
		n := 1
		if sc.Arms[v.Arm].Hierarchical() {
			n = len(sc.Arms[v.Arm].Values)
		}
		weight[j] = 1 / float64(len(sc.Arms)*n)
	}
	var o record.SuiteOracles
	sums := make([]float64, len(vars))
	perClass := map[int][]float64{} // per predicted class, each variant's total reward
	classes := images > 0 && len(vars) > 0
	for i := range images {
		best := 0.0
		class := -1
		if len(vars) > 0 {
			class = rows[i*len(vars)].PredOriginal
		}
		classes = classes && class >= 0
		cs := perClass[class]
		if cs == nil {
			cs = make([]float64, len(vars))
			perClass[class] = cs
		}
		for j := range vars {
			r := rows[i*len(vars)+j]
			if !r.Violation {
				continue
			}
			sums[j] += reward[j]
			cs[j] += reward[j]
			o.Random += weight[j] * reward[j]
			best = max(best, reward[j])
		}
		o.PerImage += best
	}
	for j, s := range sums {
		if j == 0 || s > o.BestVariant {
			o.BestVariant, o.BestVariantKey = s, vars[j].Key()
		}
	}
	if classes {
		// The classes in order, so that the sum's rounding is the same in
		// every run.
		for _, c := range slices.Sorted(maps.Keys(perClass)) {
			o.BestPerClass += slices.Max(perClass[c])
		}
	}
	n := float64(images)
	o.Random, o.BestVariant, o.PerImage, o.BestPerClass = o.Random/n, o.BestVariant/n, o.PerImage/n, o.BestPerClass/n
	return o
}

// suiteCell is one agent's runs on one environment over some seeds.
type suiteCell struct {
	env   *suiteEnv
	spec  AgentSpec
	seeds []uint64
	runs  *record.SuiteRuns // filled by runSuiteJobs
}

// suiteJob is one seed of a cell.
type suiteJob struct {
	cell *suiteCell
	seed int // index into cell.seeds
}

// suiteRun is a cached run's content.
type suiteRun struct {
	Score      float64 `json:"score"`
	Violations int     `json:"violations"`
	Iterations int     `json:"iterations"`
}

// runSuiteJobs runs every cell's seeds, cfg.Workers at a time, filling
// the cells' runs; what names the stage ("runs", "tuning").
func runSuiteJobs(ctx context.Context, cfg *SuiteConfig, what string, cells []suiteCell, progress ProgressFunc) error {
	var jobs []suiteJob
	for c := range cells {
		cell := &cells[c]
		n := len(cell.seeds)
		*cell.runs = record.SuiteRuns{Agent: cell.spec.ID, Scores: make([]float64, n), Violations: make([]int, n), Iterations: make([]int, n)}
		for s := range n {
			jobs = append(jobs, suiteJob{cell: cell, seed: s})
		}
	}
	workers := cfg.Workers
	if workers == 0 {
		workers = kernels.Threads()
	}
	cacheDir := filepath.Join(cfg.Cache, "suite-runs")
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu   sync.Mutex
		done int
		next = make(chan suiteJob)
		wg   sync.WaitGroup
	)
	stage := Stage{Name: "suite " + cfg.Name + " " + what, Unit: "run"}
	if progress != nil {
		progress(stage, 0, len(jobs))
	}
	for range min(workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				r, err := suiteRunOf(ctx, j, cacheDir)
				if err != nil {
					cancel(err)
					continue
				}
				runs := j.cell.runs
				mu.Lock()
				runs.Scores[j.seed], runs.Violations[j.seed], runs.Iterations[j.seed] = r.Score, r.Violations, r.Iterations
				done++
				if progress != nil {
					progress(stage, done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return fmt.Errorf("suite %s: %d of %d %s done (each run is cached: run the same command again to go on): %w", cfg.Name, done, len(jobs), what, err)
	}
	return nil
}

// seedRangeText writes seeds for a message.
func seedRangeText(seeds []uint64) string {
	var parts []string
	for _, s := range seeds {
		parts = append(parts, fmt.Sprint(s))
	}
	return strings.Join(parts, ",")
}

// suiteRunKey returns the name of job j's file in the run cache: a hash
// of what the run depends on — the table, the scenario, the objective, the
// agent with its effective options (its defaults with the given ones
// applied: a change of an agent's defaults is a new run, and an option
// written out at its default the same run), its revision
// (bandit.AgentInfo.Revision; left out at 0, so that the keys made before
// revisions existed stay valid), and the seed.
func suiteRunKey(j suiteJob) (string, error) {
	env, spec, seed := j.cell.env, j.cell.spec, j.cell.seeds[j.seed]
	cfg, err := bandit.Resolve(spec.Name, spec.Options)
	if err != nil {
		return "", fmt.Errorf("suite: agent %s: %w", spec.ID, err)
	}
	key, err := json.Marshal(struct {
		Version                    int
		Table, Scenario, Objective string
		Variants                   []string
		Agent, Options             string
		Revision                   int `json:",omitempty"`
		Seed                       uint64
	}{suiteRunVersion, env.table, env.sc.Name, env.rec.Objective, env.sc.Keys(), spec.Name, cfg.Canonical(spec.Name), bandit.AgentRevision(spec.Name), seed})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])[:24] + ".json", nil
}

// suiteRunOf returns job j's run: from the cache, or run and cached.
func suiteRunOf(ctx context.Context, j suiteJob, cacheDir string) (suiteRun, error) {
	env, spec, seed := j.cell.env, j.cell.spec, j.cell.seeds[j.seed]
	name, err := suiteRunKey(j)
	if err != nil {
		return suiteRun{}, err
	}
	path := filepath.Join(cacheDir, name)
	var r suiteRun
	if b, err := limits.ReadFile(path, limits.JSONBytes); err == nil {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if dec.Decode(&r) == nil && r.Iterations == env.rec.Images && r.Violations >= 0 && r.Violations <= r.Iterations {
			return r, nil
		}
	}
	r.Score, r.Violations, r.Iterations, err = SuiteRun(ctx, env.env, env.sc, spec, seed)
	if err != nil {
		return r, fmt.Errorf("suite: %s: %w", env.rec.Name, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return r, err
	}
	if err := record.WriteFileAtomic(path, b); err != nil {
		return r, fmt.Errorf("suite: caching a run: %w", err)
	}
	return r, nil
}

// SuiteRun runs one agent with one seed on a suite environment — one pass
// over env's images — and returns its score (total reward per iteration
// under sc's objective), violations and iterations.
func SuiteRun(ctx context.Context, env Env, sc scenario.Scenario, spec AgentSpec, seed uint64) (score float64, violations, iterations int, err error) {
	agent, err := NewAgent(spec, sc, env.Layout(), seed)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("agent %s, seed %d: %w", spec.ID, seed, err)
	}
	res, err := runLoop(ctx, env, sc, agent, loopOptions{AgentName: spec.ID, Seed: seed, Passes: 1, LogInterval: 1 << 30})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("agent %s, seed %d: %w", spec.ID, seed, err)
	}
	last := res.Log[len(res.Log)-1]
	return last.Reward / float64(res.Run.Iterations), res.Run.Violations, res.Run.Iterations, nil
}
