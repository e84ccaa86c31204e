package experiments

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/nn/kernels"
	"github.com/amt-dev/amt/scenario"
)

// TuneConfig is the tune section of a configuration: amt tune runs every
// setting of each grid on the tuning seeds, keeps the setting with the
// highest mean violation rate, and then runs the experiment's agents with
// the chosen options on the experiment's seeds, which the tuning never
// saw (the two sets must be disjoint). Without Seeds there is no tuning.
type TuneConfig struct {
	Seeds []uint64
	Grid  []TuneGrid
}

// TuneGrid is the grid of one agent: each option's candidate values.
type TuneGrid struct {
	// Agent is the id of an agent of the configuration.
	Agent string
	// Options maps an option of the agent to its candidate values, in
	// the order given.
	Options map[string][]string
}

// maxGridSettings caps the settings of one agent's grid: each is a run per
// tuning seed.
const maxGridSettings = 1000

// Tuning reports whether the configuration has a tune section.
func (c *Config) Tuning() bool { return len(c.Tune.Seeds) > 0 }

// Settings returns the points of the grid: one options map per point, the
// options in ascending key order with the last one varying fastest.
func (g TuneGrid) Settings() []bandit.Options {
	keys := slices.Sorted(maps.Keys(g.Options))
	out := []bandit.Options{{}}
	for _, k := range keys {
		var next []bandit.Options
		for _, o := range out {
			for _, v := range g.Options[k] {
				p := maps.Clone(o)
				p[k] = v
				next = append(next, p)
			}
		}
		out = next
	}
	return out
}

// tuneSection checks the tune section against the keys read before it:
// tuning replays the cached sweep, and its seeds must not be evaluation
// seeds.
func tuneSection(c *Config) string {
	if c.Mode != "replay" {
		return "tuning runs every setting on every tuning seed: it needs mode replay"
	}
	if c.State != "" {
		return "tuning runs start afresh: it cannot be combined with state"
	}
	return ""
}

// tuneSeeds checks that no tuning seed is an evaluation seed.
func tuneSeeds(c *Config) string {
	eval := map[uint64]bool{}
	for _, s := range c.Seeds {
		eval[s] = true
	}
	var both []string
	for _, s := range c.Tune.Seeds {
		if eval[s] {
			both = append(both, fmt.Sprint(s))
		}
	}
	if len(both) > 0 {
		what := fmt.Sprintf("seed %s is", both[0])
		if len(both) > 1 {
			if len(both) > 5 {
				both = append(both[:5], "…")
			}
			what = fmt.Sprintf("seeds %s are", strings.Join(both, ", "))
		}
		return fmt.Sprintf("%s also in seeds, the evaluation seeds; tuning and evaluation seeds must be disjoint, or the numbers one tunes on are the numbers one reports", what)
	}
	return ""
}

// tuneGrids reads tune.grid: a non-empty list of mappings of agent and
// options, at most one per agent.
func tuneGrids() reader[[]TuneGrid] {
	return mappingList("a non-empty list of grids (mappings of agent and options)", "grids", "agent",
		func(g *TuneGrid) string { return g.Agent },
		func(agent string) string {
			return fmt.Sprintf("agent %q has two grids; give one grid with all its options", agent)
		})
}

// mappingList reads a non-empty list of mappings, each read with the
// schema's entries under key[], whose field identifies it: id returns its
// value, and a value given twice is an error at that field, worded by dup.
func mappingList[T any](want, items, field string, id func(*T) string, dup func(string) string) reader[[]T] {
	return reader[[]T]{want: want,
		parse: func(p *parser, n *yaml.Node, key string) ([]T, error) {
			if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
				return nil, p.errf(n, key, "want a non-empty list of %s, got %s", items, kindName(n))
			}
			out := make([]T, len(n.Content))
			seen := map[string]bool{}
			for i, g := range n.Content {
				item := fmt.Sprintf("%s[%d]", key, i)
				p.cfg.pos[item] = pos{g.Line, g.Column}
				if err := p.mapping(g, item, schemaPath(item), &out[i]); err != nil {
					return nil, err
				}
				v := id(&out[i])
				if seen[v] {
					return nil, p.errf(g, item+"."+field, "%s", dup(v))
				}
				seen[v] = true
			}
			return out, nil
		}}
}

// tunedAgent reads the id of an agent of the configuration.
func tunedAgent() reader[string] {
	agentIDs := func(p *parser) []string {
		var ids []string
		for _, a := range p.cfg.Agents {
			ids = append(ids, a.ID)
		}
		return ids
	}
	return listed("the id of an agent of agents", agentIDs,
		func(s string, ids []string) string {
			return fmt.Sprintf("%q is not the id of an agent of agents (%s)", s, strings.Join(ids, ", "))
		})
}

// gridOptions reads a grid's options: option: [value, …] (or one value),
// each option one the agent takes and does not set in agents, each value
// one it accepts.
func gridOptions() value {
	return value{want: "a mapping of option: [value, …] (the agent's options)",
		read: func(p *parser, n *yaml.Node, key string, dst any) error {
			g := dst.(*TuneGrid)
			if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
				return p.errf(n, key, "want a non-empty mapping of option: [value, …], got %s", kindName(n))
			}
			var spec AgentSpec
			for _, a := range p.cfg.Agents {
				if a.ID == g.Agent {
					spec = a
				}
			}
			keys := bandit.Keys(spec.Name)
			g.Options = map[string][]string{}
			settings := 1
			for j := 0; j+1 < len(n.Content); j += 2 {
				k, v := n.Content[j], n.Content[j+1]
				full := key + "." + k.Value
				switch {
				case k.Kind != yaml.ScalarNode:
					return p.errf(k, key, "want an option name, got %s", kindName(k))
				case !slices.Contains(keys, k.Value):
					return p.errf(k, full, "agent %s has no option %q%s (its options: %s)", spec.Name, k.Value, suggest.DidYouMean(k.Value, keys), strings.Join(keys, ", "))
				case g.Options[k.Value] != nil:
					return p.errf(k, full, "option given twice")
				}
				if _, fixed := spec.Options[k.Value]; fixed {
					return p.errf(k, full, "agent %s sets %s in agents; tune it here or fix it there, not both", spec.ID, k.Value)
				}
				vals := []*yaml.Node{v}
				if v.Kind == yaml.SequenceNode {
					vals = v.Content
				}
				if len(vals) == 0 {
					return p.errf(v, full, "want a value or a list of values, got an empty list")
				}
				for _, e := range vals {
					if e.Kind != yaml.ScalarNode {
						return p.errf(e, full, "want a value, got %s", kindName(e))
					}
					if slices.Contains(g.Options[k.Value], e.Value) {
						return p.errf(e, full, "value %q given twice", e.Value)
					}
					if _, err := bandit.Resolve(spec.Name, bandit.Options{k.Value: e.Value}); err != nil {
						return p.errf(e, full, "%v", err)
					}
					g.Options[k.Value] = append(g.Options[k.Value], e.Value)
				}
				settings *= len(vals)
				if settings > maxGridSettings {
					return p.errf(v, full, "the grid has more than %d settings (each one runs on every tuning seed)", maxGridSettings)
				}
			}
			return nil
		},
		fields: func(dst any) []any { return []any{&dst.(*TuneGrid).Options} },
	}
}

// Tune tunes the configured agents on the tuning seeds, then runs every
// agent on the evaluation seeds (Run, with the chosen options) and writes
// Output/tune.json (record.Tuning). The tuning runs replay the cached
// sweep, cfg.Workers (0 = one per core) at a time; the result does not
// depend on their number. Messages go to log; progress (may be nil) gets
// the sweep's progress, then each grid's (stage "tune <agent id>": runs
// done), then the evaluation's.
func (e *Experiment) Tune(ctx context.Context, log io.Writer, progress ProgressFunc) error {
	cfg := e.Config
	if !cfg.Tuning() {
		return fmt.Errorf("tune: %s has no tune section (amt config -ref describes it)", cfg.File)
	}
	// The run files are the evaluation's (Run writes them, or finds its
	// results up to date), not those of the untuned configuration.
	t, _, err := e.sweepTables(ctx, progress, false)
	if err != nil {
		return err
	}
	env, err := t.replayEnv(cfg.Scenario, cfg.Features.sut())
	if err != nil {
		return err
	}
	rec, agents, err := tuneAgents(ctx, env, cfg, log, progress)
	if err != nil {
		return err
	}
	tuned := *cfg
	tuned.Tune = TuneConfig{}
	tuned.Agents = agents
	ev := *e
	ev.Config = &tuned
	if err := ev.Run(ctx, log, progress); err != nil {
		return err
	}
	return record.WriteTuning(filepath.Join(cfg.Output, record.TuneFile), rec)
}

// tuneAgents runs every grid of the tune section on env and returns the
// tuning record and the configuration's agents with the chosen options.
func tuneAgents(ctx context.Context, env Env, cfg *Config, log io.Writer, progress ProgressFunc) (record.Tuning, []AgentSpec, error) {
	rec := record.Tuning{TuneSeeds: cfg.Tune.Seeds, EvalSeeds: cfg.Seeds, Metric: "violation rate"}
	agents := slices.Clone(cfg.Agents)
	for _, g := range cfg.Tune.Grid {
		i := slices.IndexFunc(agents, func(a AgentSpec) bool { return a.ID == g.Agent })
		if i < 0 {
			return rec, nil, fmt.Errorf("tune: no agent %q", g.Agent)
		}
		spec := cfg.Agents[i]
		settings := g.Settings()
		fmt.Fprintf(log, "%s: tuning %s (%s): %s × %s\n", cfg.Name, spec.ID, spec.Name, plural.Count(len(settings), "setting"), plural.Count(len(cfg.Tune.Seeds), "tuning seed"))
		rates, err := tuneRuns(ctx, env, cfg.Scenario, spec, settings, cfg, progress)
		if err != nil {
			return rec, nil, err
		}
		ta := record.TunedAgent{ID: spec.ID, Name: spec.Name, Fixed: spec.Options, Grid: g.Options}
		best := math.Inf(-1)
		for j, s := range settings {
			ta.Settings = append(ta.Settings, record.TuneSetting{Options: s, Rates: rates[j]})
			if m := mean(rates[j]); m > best {
				best, ta.Chosen = m, j
			}
		}
		rec.Agents = append(rec.Agents, ta)
		agents[i].Options = withOptions(spec.Options, settings[ta.Chosen])
		fmt.Fprintf(log, "%s: %s: chose %s (mean violation rate %.2f %% on the tuning seeds)\n", cfg.Name, spec.ID, canonical(settings[ta.Chosen]), 100*best)
	}
	return rec, agents, nil
}

// withOptions returns fixed with the options of setting added.
func withOptions(fixed, setting bandit.Options) bandit.Options {
	out := bandit.Options{}
	maps.Copy(out, fixed)
	maps.Copy(out, setting)
	return out
}

// tuneRuns runs one agent with each setting on every tuning seed and
// returns the runs' violation rates, [setting][seed].
func tuneRuns(ctx context.Context, env Env, sc scenario.Scenario, spec AgentSpec, settings []bandit.Options, cfg *Config, progress ProgressFunc) ([][]float64, error) {
	seeds := cfg.Tune.Seeds
	rates := make([][]float64, len(settings))
	for i := range rates {
		rates[i] = make([]float64, len(seeds))
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = kernels.Threads()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan [2]int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	total := len(settings) * len(seeds)
	stage := Stage{Name: "tune " + spec.ID, Unit: "replay"}
	if progress != nil {
		progress(stage, 0, total)
	}
	for w := 0; w < min(workers, total); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s, k := j[0], j[1]
				a := AgentSpec{ID: spec.ID, Name: spec.Name, Options: withOptions(spec.Options, settings[s])}
				ag, err := NewAgent(a, sc, env.Layout(), seeds[k])
				if err == nil {
					var res runResult
					res, err = runLoop(ctx, env, sc, ag, loopOptions{AgentName: spec.ID, Seed: seeds[k], Passes: cfg.Passes, Iterations: cfg.Iterations, LogInterval: math.MaxInt32})
					if err == nil {
						rates[s][k] = float64(res.Run.Violations) / float64(res.Run.Iterations)
					}
				}
				if err != nil {
					cancel(fmt.Errorf("tune %s, %s, seed %d: %w", spec.ID, canonical(settings[s]), seeds[k], err))
					continue
				}
				if progress != nil {
					mu.Lock()
					done++
					progress(stage, done, total)
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for s := range settings {
		for k := range seeds {
			select {
			case jobs <- [2]int{s, k}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return rates, nil
}

// mean returns the arithmetic mean of xs.
func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// canonical writes options as sorted k=v pairs.
func canonical(o bandit.Options) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o)) {
		parts = append(parts, k+"="+o[k])
	}
	return strings.Join(parts, ",")
}
