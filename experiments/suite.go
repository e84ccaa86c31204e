package experiments

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/nn/kernels"
	"github.com/amt-dev/amt/scenario"
)

// SuiteConfig is a parsed agent benchmark (amt suite): systems under test,
// each an exhaustive table, times scenarios times objectives make its
// environments; every agent runs on every environment once per seed.
// Every SUT entry is read with the experiment schema (its data, sut and
// features keys, errors and defaults), so adding a system under test is one
// entry naming an ONNX model, its data and its preprocessing.
type SuiteConfig struct {
	File, Name, Description string
	// Output is the results folder (default results/<name>); Cache the
	// sweep cache, shared with the experiments (default .cache/amt).
	Output, Cache string
	// Scenarios are built-in scenario names; Objectives "paper" or "fault".
	Scenarios, Objectives []string
	Agents                []AgentSpec
	Seeds                 []uint64
	// Recommended is the id of the agent whose claims the report checks;
	// Reference the id of the random-selection agent the normalised
	// scores and "never worse than" claims compare with.
	Recommended, Reference string
	// Tune, when it has seeds, chooses agents' options on the suite, as
	// amt tune does on one table: every setting of an agent's grid runs on
	// every environment with the tuning seeds, the setting of the best mean
	// normalised score over the environments is chosen, and the agent runs
	// with it on Seeds, which the tuning never saw.
	Tune TuneConfig
	// Workers is the number of agent runs at a time (0 = the cores).
	Workers int
	// SUTs are the systems under test, each an experiment configuration
	// (mode replay, action set hierarchical: its sweep holds every built-in
	// scenario's follow-ups).
	SUTs []*Config
}

// suiteKeys are the top-level keys of a suite configuration, and sutKeys
// those of one entry of suts (the rest of an experiment comes from the
// suite).
var (
	suiteKeys = []string{"name", "description", "output", "cache", "scenarios", "objectives", "agents", "seeds", "tune", "recommended", "reference", "workers", "features", "suts"}
	sutKeys   = []string{"name", "case_study", "data", "sut", "features"}
)

// LoadSuite reads and checks a suite configuration. Errors are
// *ConfigError values naming the file, line, column and key
// ("suts[3].sut.model"), as LoadConfig's.
func LoadSuite(path, assetsDir string) (*SuiteConfig, error) {
	b, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(path, err)
	}
	if len(root.Content) == 0 {
		return nil, &ConfigError{File: path, Err: errors.New("empty suite configuration")}
	}
	top := root.Content[0]
	errf := func(n *yaml.Node, key, format string, args ...any) error {
		return &ConfigError{File: path, Line: n.Line, Column: n.Column, Key: key, Err: fmt.Errorf(format, args...)}
	}
	given, err := strictKeys(top, "", suiteKeys, errf)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"name", "agents", "seeds", "features", "suts"} {
		if given[k] == nil {
			return nil, errf(top, k, "missing required key")
		}
	}
	s := &SuiteConfig{File: path, Name: given["name"].Value, Cache: ".cache/amt", Reference: "random",
		Scenarios: []string{"hierarchical"}, Objectives: []string{"paper"}}
	if s.Name == "" || strings.ContainsAny(s.Name, "/\\\x00") {
		return nil, errf(given["name"], "name", "%q: want a plain name", s.Name)
	}
	s.Output = filepath.Join("results", s.Name)
	for _, f := range []struct {
		key string
		dst *string
	}{{"description", &s.Description}, {"output", &s.Output}, {"cache", &s.Cache}, {"recommended", &s.Recommended}, {"reference", &s.Reference}} {
		if n := given[f.key]; n != nil {
			if n.Kind != yaml.ScalarNode || n.Value == "" || strings.ContainsRune(n.Value, 0) {
				return nil, errf(n, f.key, "want a non-empty string, got %s", kindName(n))
			}
			*f.dst = n.Value
		}
	}
	if n := given["workers"]; n != nil {
		var w int
		if n.Kind != yaml.ScalarNode || n.Decode(&w) != nil || w < 0 || w > 1024 {
			return nil, errf(n, "workers", "want an integer in [0, 1024], got %s", kindName(n))
		}
		s.Workers = w
	}
	for _, l := range []struct {
		key   string
		dst   *[]string
		known []string
	}{{"scenarios", &s.Scenarios, mr.BuiltinNames()}, {"objectives", &s.Objectives, []string{"paper", "fault"}}} {
		n := given[l.key]
		if n == nil {
			continue
		}
		if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
			return nil, errf(n, l.key, "want a non-empty list of %s, got %s", strings.Join(l.known, ", "), kindName(n))
		}
		*l.dst = nil
		for i, c := range n.Content {
			key := fmt.Sprintf("%s[%d]", l.key, i)
			if c.Kind != yaml.ScalarNode || !slices.Contains(l.known, c.Value) {
				return nil, errf(c, key, "%s: want one of %s%s", kindName(c), strings.Join(l.known, ", "), didYouMean(c.Value, l.known))
			}
			if slices.Contains(*l.dst, c.Value) {
				return nil, errf(c, key, "%q given twice", c.Value)
			}
			*l.dst = append(*l.dst, c.Value)
		}
	}
	suts := given["suts"]
	if suts.Kind != yaml.SequenceNode || len(suts.Content) == 0 {
		return nil, errf(suts, "suts", "want a non-empty list of systems under test, got %s", kindName(suts))
	}
	names := map[string]bool{}
	for i, n := range suts.Content {
		key := fmt.Sprintf("suts[%d]", i)
		sg, err := strictKeys(n, key, sutKeys, errf)
		if err != nil {
			return nil, err
		}
		for _, k := range []string{"name", "case_study", "data", "sut"} {
			if sg[k] == nil {
				return nil, errf(n, key+"."+k, "missing required key")
			}
		}
		name := sg["name"].Value
		if name == "" || strings.ContainsAny(name, "/\\\x00 ") || names[name] {
			return nil, errf(sg["name"], key+".name", "%q: want a plain name, unique in the suite", name)
		}
		names[name] = true
		features := given["features"]
		if sg["features"] != nil {
			features = sg["features"]
		}
		doc := mappingNode(
			"name", scalarAt(s.Name+"-"+name, sg["name"]),
			"case_study", sg["case_study"],
			"mode", scalarAt("replay", n),
			"data", sg["data"],
			"sut", sg["sut"],
			"features", features,
			"action_set", scalarAt("hierarchical", n),
			"agents", given["agents"],
			"seeds", given["seeds"],
		)
		if given["tune"] != nil {
			doc.Content = append(doc.Content, mappingNode("tune", given["tune"]).Content...)
		}
		doc.Content = append(doc.Content, mappingNode(
			"output", scalarAt(filepath.Join(s.Output, "suts", name), n),
			"cache", scalarAt(s.Cache, n),
		).Content...)
		raw, err := yaml.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("suite: %w", err)
		}
		p := newParser(path, assetsDir)
		if err := p.mapping(doc, "", "", p.cfg); err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) && ce.Key != "" && !strings.HasPrefix(ce.Key, "agents") && !strings.HasPrefix(ce.Key, "seeds") && !strings.HasPrefix(ce.Key, "tune") && !(sg["features"] == nil && strings.HasPrefix(ce.Key, "features")) {
				ce.Key = key + "." + ce.Key
			}
			return nil, err
		}
		p.cfg.doc = raw
		s.SUTs = append(s.SUTs, p.cfg)
	}
	first := s.SUTs[0]
	s.Agents, s.Seeds, s.Tune = first.Agents, first.Seeds, first.Tune
	ids := make([]string, len(s.Agents))
	for i, a := range s.Agents {
		ids[i] = a.ID
	}
	if !slices.Contains(ids, s.Reference) {
		return nil, errf(given["agents"], "reference", "the reference agent %q is not among the agents (%s)", s.Reference, strings.Join(ids, ", "))
	}
	if s.Recommended != "" && !slices.Contains(ids, s.Recommended) {
		return nil, errf(given["recommended"], "recommended", "%q is not among the agents (%s)%s", s.Recommended, strings.Join(ids, ", "), didYouMean(s.Recommended, ids))
	}
	return s, nil
}

// IsSuite reports whether the configuration file at path is a suite's
// (its top level has the key suts) rather than an experiment's.
func IsSuite(path string) bool {
	b, err := readConfigFile(path)
	if err != nil {
		return false
	}
	var root yaml.Node
	if yaml.Unmarshal(b, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return false
	}
	top := root.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "suts" {
			return true
		}
	}
	return false
}

// strictKeys returns the values of mapping n's keys, refusing keys not in
// known (with a suggestion) and keys given twice; key is n's dotted path.
func strictKeys(n *yaml.Node, key string, known []string, errf func(*yaml.Node, string, string, ...any) error) (map[string]*yaml.Node, error) {
	where := key
	if where == "" {
		where = "top level"
	}
	if n.Kind != yaml.MappingNode {
		return nil, errf(n, where, "want a mapping of keys, got %s", kindName(n))
	}
	given := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		full := join(key, k.Value)
		if k.Kind != yaml.ScalarNode || !slices.Contains(known, k.Value) {
			return nil, errf(k, full, "unknown key%s (known keys: %s)", didYouMean(k.Value, known), strings.Join(known, ", "))
		}
		if given[k.Value] != nil {
			return nil, errf(k, full, "key given twice")
		}
		given[k.Value] = n.Content[i+1]
	}
	return given, nil
}

// mappingNode returns a YAML mapping of the key/value pairs kv (a string
// key, then a *yaml.Node value).
func mappingNode(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i < len(kv); i += 2 {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[i].(string)}, kv[i+1].(*yaml.Node))
	}
	return m
}

// scalarAt returns a string scalar placed, for messages, at at's position.
func scalarAt(v string, at *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: at.Line, Column: at.Column}
}

// suiteEnv is one environment of a suite while it runs.
type suiteEnv struct {
	rec   record.SuiteEnv
	sc    scenario.Scenario
	env   Env
	table string // the identity of its SUT's table (cache keys)
}

// suiteRunVersion is part of every cached suite run's key: a change of
// the loop or of the agents that alters runs must change it.
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
		var pf func(done, total int)
		if progress != nil {
			stage := Stage{Name: "sweep " + c.Name, Unit: "image", Resumed: "cached"}
			pf = func(done, total int) { progress(stage, done, total) }
		}
		t, err := sweep(ctx, e.sweepSetup(pf))
		if err != nil {
			return res, err
		}
		// A run depends on the verdicts and on the whole context: the
		// features and, with kind sut, the grey-box block (which the
		// verdicts' key covers: the same model on the same images).
		keys, err := json.Marshal([]any{e.verdictKey, e.featureKey, c.Features.kind()})
		if err != nil {
			return res, fmt.Errorf("suite: %w", err)
		}
		sutName := strings.TrimPrefix(c.Name, cfg.Name+"-")
		res.SUTs = append(res.SUTs, record.SuiteSUT{Name: sutName, CaseStudy: c.CaseStudy,
			Model:      record.File{Path: filepath.ToSlash(relAssets(c.SUT.Model)), SHA256: e.modelHash},
			Data:       record.File{Path: filepath.ToSlash(relAssets(c.Data.Path)), SHA256: e.dataHash},
			Features:   record.File{Path: filepath.ToSlash(relAssets(c.Features.Model)), SHA256: e.featHash},
			DataFormat: c.Data.Format, Images: t.Images, Grey: c.Data.Format == "idx" || c.Data.Format == "fashion-mnist", SutContext: c.Features.sut()})
		for _, scName := range cfg.Scenarios {
			for _, obj := range cfg.Objectives {
				sc, err := mr.Builtin(scName)
				if err != nil {
					return res, err
				}
				if obj == "fault" {
					sc.Objective = scenario.Fault
				}
				env, err := t.replayEnv(sc, c.Features.sut())
				if err != nil {
					return res, fmt.Errorf("suite: %s: %w", c.Name, err)
				}
				rows, err := t.Verdicts(sc.Variants())
				if err != nil {
					return res, err
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
// objective, as the loop scores it.
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
	for i := range images {
		best := 0.0
		for j := range vars {
			r := rows[i*len(vars)+j]
			if !r.Violation {
				continue
			}
			sums[j] += reward[j]
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
	n := float64(images)
	o.Random, o.BestVariant, o.PerImage = o.Random/n, o.BestVariant/n, o.PerImage/n
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

// tuneSuite runs every setting of every tune grid on every environment
// with the tuning seeds and chooses, per agent, the setting of the best
// mean normalised score over the environments (the first in grid order on
// a tie).
func tuneSuite(ctx context.Context, cfg *SuiteConfig, envs []*suiteEnv, progress ProgressFunc) ([]record.SuiteTuning, error) {
	var out []record.SuiteTuning
	for _, g := range cfg.Tune.Grid {
		k := slices.IndexFunc(cfg.Agents, func(a AgentSpec) bool { return a.ID == g.Agent })
		base := cfg.Agents[k]
		settings := g.Settings()
		runs := make([][]record.SuiteRuns, len(settings)) // [setting][env]
		var cells []suiteCell
		for i, set := range settings {
			runs[i] = make([]record.SuiteRuns, len(envs))
			spec := AgentSpec{ID: base.ID, Name: base.Name, Options: withOptions(base.Options, set)}
			for e, env := range envs {
				cells = append(cells, suiteCell{env: env, spec: spec, seeds: cfg.Tune.Seeds, runs: &runs[i][e]})
			}
		}
		if err := runSuiteJobs(ctx, cfg, "tuning "+g.Agent, cells, progress); err != nil {
			return nil, err
		}
		tu := record.SuiteTuning{Agent: g.Agent, Seeds: cfg.Tune.Seeds}
		for i, set := range settings {
			st := record.SuiteSetting{Options: withOptions(base.Options, set)}
			n := 0
			for e, env := range envs {
				o := env.rec.Oracles
				if o.PerImage > o.Random {
					st.MeanNorm += (mean(runs[i][e].Scores) - o.Random) / (o.PerImage - o.Random)
					n++
				}
			}
			st.MeanNorm /= float64(max(n, 1))
			if i == 0 || st.MeanNorm > tu.Settings[tu.Chosen].MeanNorm {
				tu.Chosen = i
			}
			tu.Settings = append(tu.Settings, st)
		}
		out = append(out, tu)
	}
	return out, nil
}

// seedRangeText writes seeds for a message.
func seedRangeText(seeds []uint64) string {
	var parts []string
	for _, s := range seeds {
		parts = append(parts, fmt.Sprint(s))
	}
	return strings.Join(parts, ",")
}

// suiteRunOf returns job j's run: from the cache, or run and cached.
func suiteRunOf(ctx context.Context, j suiteJob, cacheDir string) (suiteRun, error) {
	env, spec, seed := j.cell.env, j.cell.spec, j.cell.seeds[j.seed]
	key, err := json.Marshal(struct {
		Version                    int
		Table, Scenario, Objective string
		Variants                   []string
		Agent, Options             string
		Seed                       uint64
	}{suiteRunVersion, env.table, env.sc.Name, env.rec.Objective, env.sc.Keys(), spec.Name, canonical(spec.Options), seed})
	if err != nil {
		return suiteRun{}, err
	}
	sum := sha256.Sum256(key)
	path := filepath.Join(cacheDir, hex.EncodeToString(sum[:])[:24]+".json")
	var r suiteRun
	if b, err := limits.ReadFile(path, limits.JSONBytes); err == nil {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if dec.Decode(&r) == nil && r.Iterations > 0 && r.Violations >= 0 && r.Violations <= r.Iterations {
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
