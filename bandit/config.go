package bandit

import (
	"encoding/gob"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/amt-dev/amt/scenario"
)

// Config holds every tunable parameter of the agents. Each agent uses a
// subset (see Keys); Defaults gives an agent's values. Every field is set
// by exactly one Option, declared below.
type Config struct {
	Hidden     int       // hidden tanh units of the cost regressors; 0 = linear (key hidden)
	Policies   int       // cover: number of policies N (policies)
	Psi        float64   // cover: ψ (psi)
	Mode       string    // cover: legacy or modern (mode)
	Epsilon    float64   // cover-modern: floor ε/K, 0 = decaying; epsilon-greedy: ε (epsilon)
	Estimator  Estimator // cost estimator for policy learning (estimator: dr, ips, dm, iwr)
	LR         float64   // learning rate η of the regressors (lr)
	Lambda     float64   // softmax: inverse temperature on range-normalised costs; linucb/lints: ridge λ (lambda)
	GammaScale float64   // squarecb: γ = gamma-scale · t^gamma-exponent
	GammaExp   float64   // squarecb (gamma-exponent)
	Bags       int       // bootstrap-ts: number of bags (bags)
	Alpha      float64   // linucb: width multiplier α (alpha)
	V          float64   // lints: posterior scale v (v)
	Samples    int       // lints, hts: posterior draws per decision (samples)
	Round      bool      // agent: pass probabilities and costs rounded to 2 decimals to Learn, as the original tool did (round)

	Standardize bool    // agent: standardise contexts online before the levels see them (standardize)
	Proj        int     // standardisation: random projections of the features, 0 = none (proj)
	PriorBias   float64 // hts: prior sd of a model's intercept (prior-bias)
	Prior       float64 // hts: prior sd of the features' total contribution (prior)
	PriorGrey   float64 // hts: prior sd of each grey-box weight (prior-grey)
	PriorAngle  float64 // hts: prior sd of the value-basis weights (prior-angle)
	Interact    float64 // hts: prior sd of the per-context slopes in |value|, relative (interact)
	Temp        float64 // hts: scale of the posterior draws' sd (temp)
	Levels      string  // hts: coop or own (levels)
	ParamWeight float64 // hts: weight of the parameter reward in the coop parameter level (param-weight)
	Drift       float64 // hts: variance added per update, relative to the prior (drift)
	// FixedSeed makes every bandit of the agent, in every run, draw its
	// internal randomness from Seed instead of from the run's seed (seed:
	// an integer rather than run).
	FixedSeed bool
	Seed      uint64
}

// An Option is one agent option: a key of -agent-opts k=v,… or of a YAML
// options map, declared once and shared by every agent that takes it.
type Option struct {
	// Key is the option's name ("hidden").
	Key string
	// Doc is a one-line description, Want what a value must be ("an
	// integer in [0, 1024]"), Default the value an agent has unless its
	// table entry says otherwise.
	Doc, Want, Default string

	set func(c *Config, v string) error
	get func(c Config) string
	// omitDefault leaves the option out of Canonical at its default value,
	// so that state files saved before the option existed stay valid.
	omitDefault bool
}

func intOption(key, doc, def string, lo, hi int, field func(*Config) *int) Option {
	want := fmt.Sprintf("an integer in [%d, %d]", lo, hi)
	return Option{Key: key, Doc: doc, Want: want, Default: def,
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return fmt.Errorf("want %s", want)
			}
			*field(c) = n
			return nil
		},
		get: func(c Config) string { return strconv.Itoa(*field(&c)) }}
}

// floatOption accepts numbers in [lo, hi], or (lo, hi] with openLo.
func floatOption(key, doc, def string, lo, hi float64, openLo bool, field func(*Config) *float64) Option {
	want := fmt.Sprintf("a number in [%g, %g]", lo, hi)
	if openLo {
		want = fmt.Sprintf("a number in (%g, %g]", lo, hi)
	}
	return Option{Key: key, Doc: doc, Want: want, Default: def,
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || f < lo || f > hi || (openLo && f == lo) {
				return fmt.Errorf("want %s", want)
			}
			*field(c) = f
			return nil
		},
		get: func(c Config) string { return strconv.FormatFloat(*field(&c), 'g', -1, 64) }}
}

// The options. A new option is a Config field and one declaration here.
var (
	optHidden   = intOption("hidden", "hidden tanh units of the cost regressors; 0 = linear", "16", 0, 1024, func(c *Config) *int { return &c.Hidden })
	optPolicies = intOption("policies", "number of cover policies N", "3", 1, 64, func(c *Config) *int { return &c.Policies })
	optPsi      = floatOption("psi", "cover's ψ: weight of the diversity term of the cover policies", "1", 0, 1e6, false, func(c *Config) *float64 { return &c.Psi })
	optMode     = Option{Key: "mode", Doc: "cover semantics: legacy (VW 8.x, the paper's) or modern (VW ≥ 9)", Want: "legacy or modern", Default: "legacy",
		set: func(c *Config, v string) error {
			if v != "legacy" && v != "modern" {
				return fmt.Errorf("want legacy or modern")
			}
			c.Mode = v
			return nil
		},
		get: func(c Config) string { return c.Mode }}
	optEpsilon   = floatOption("epsilon", "exploration ε: epsilon-greedy's uniform share; modern cover's floor ε/K (0 = decaying)", "0.1", 0, 1, false, func(c *Config) *float64 { return &c.Epsilon })
	optEstimator = Option{Key: "estimator", Doc: "cost estimator of policy learning: dr, ips, dm or iwr", Want: "dr, ips, dm or iwr", Default: "dr",
		set: func(c *Config, v string) (err error) {
			c.Estimator, err = ParseEstimator(v)
			return err
		},
		get: func(c Config) string { return c.Estimator.String() }}
	optLR         = floatOption("lr", "learning rate η of the cost regressors", "0.5", 0, 1e6, true, func(c *Config) *float64 { return &c.LR })
	optLambda     = floatOption("lambda", "softmax: inverse temperature on range-normalised costs; linucb, lints: ridge λ", "10", 0, 1e12, true, func(c *Config) *float64 { return &c.Lambda })
	optGammaScale = floatOption("gamma-scale", "squarecb: γ = gamma-scale · t^gamma-exponent", "10", 0, 1e12, false, func(c *Config) *float64 { return &c.GammaScale })
	optGammaExp   = floatOption("gamma-exponent", "squarecb: the exponent of t in γ", "0.5", 0, 10, false, func(c *Config) *float64 { return &c.GammaExp })
	optBags       = intOption("bags", "bootstrap-ts: number of bags", "4", 1, 1024, func(c *Config) *int { return &c.Bags })
	optAlpha      = floatOption("alpha", "linucb, ucb1: width multiplier α of the confidence bound (linucb: in units of the logged cost range)", "1", 0, 1e12, false, func(c *Config) *float64 { return &c.Alpha })
	optV          = floatOption("v", "lints: posterior scale v (in units of the logged cost range)", "1", 0, 1e12, false, func(c *Config) *float64 { return &c.V })
	optSamples    = intOption("samples", "lints, hts: posterior draws per decision (the probabilities are their frequencies)", "100", 1, 1000000, func(c *Config) *int { return &c.Samples })
	optRound      = boolOption("round", "pass probabilities and costs rounded to 2 decimals to learning, as the original tool did", "false", func(c *Config) *bool { return &c.Round })

	optStandardize = boolOption("standardize", "standardise contexts online (running mean and variance, ±5 sd) before the bandits see them, projecting all but the grey-box block to proj dimensions", "false", func(c *Config) *bool { return &c.Standardize })
	optProj        = intOption("proj", "random projections of the standardised features (the grey-box block is kept as it is); 0 = none, as when the features have no more values", "16", 0, 4096, func(c *Config) *int { return &c.Proj })
	optPriorBias   = floatOption("prior-bias", "hts: prior sd of each model's intercept (probit scale)", "3", 0, 1e6, true, func(c *Config) *float64 { return &c.PriorBias })
	optPrior       = floatOption("prior", "hts: prior sd of the features' total contribution (each of the n weights has prior/√n)", "0.2", 0, 1e6, true, func(c *Config) *float64 { return &c.Prior })
	optPriorGrey   = floatOption("prior-grey", "hts: prior sd of each grey-box weight", "0.15", 0, 1e6, true, func(c *Config) *float64 { return &c.PriorGrey })
	optPriorAngle  = floatOption("prior-angle", "hts: prior sd of the weights of the value basis (u, u², sign·u, u the value's magnitude over the largest)", "2", 0, 1e6, true, func(c *Config) *float64 { return &c.PriorAngle })
	optInteract    = floatOption("interact", "hts: prior sd of the per-context slopes in the value's magnitude, relative to the context weights' (0 = no such terms)", "2", 0, 1e6, false, func(c *Config) *float64 { return &c.Interact })
	optTemp        = floatOption("temp", "hts: scale of the posterior draws' sd (1 = Thompson sampling, 0 = greedy on the posterior mean)", "0.5", 0, 100, false, func(c *Config) *float64 { return &c.Temp })
	optLevels      = Option{Key: "levels", Doc: "hts: what the parameter level maximises: coop (its choice's violation probability times the sum of both levels' normalised rewards) or own (its own reward only, as the paper's separate bandits)", Want: "coop or own", Default: "coop",
		set: func(c *Config, v string) error {
			if !slices.Contains(htsLevels, v) {
				return fmt.Errorf("want coop or own")
			}
			c.Levels = v
			return nil
		},
		get: func(c Config) string { return c.Levels }}
	optParamWeight = floatOption("param-weight", "hts: weight of the parameter reward in the coop parameter level's objective", "1", 0, 1e6, false, func(c *Config) *float64 { return &c.ParamWeight })
	optDrift       = floatOption("drift", "hts: variance added to every weight per update, relative to its prior (0 for a fixed SUT, e.g. 0.001 to follow one that changes)", "0", 0, 1, false, func(c *Config) *float64 { return &c.Drift })
)

func boolOption(key, doc, def string, field func(*Config) *bool) Option {
	return Option{Key: key, Doc: doc, Want: "true or false", Default: def,
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("want true or false")
			}
			*field(c) = b
			return nil
		},
		get: func(c Config) string { return strconv.FormatBool(*field(&c)) }}
}

// optSeed chooses between amt's seeding and the original's: the original
// tool never passed a seed to Vowpal Wabbit, so every VW instance of every
// run — the main bandit and each parameter bandit — used VW's default
// random_seed 0 (original-implementation.md §1, §5), while amt derives each
// bandit's seed from the run's seed. seed: 0 reproduces the original's
// behaviour (every run starts from the same network initialisation).
var optSeed = Option{Key: "seed", Doc: "internal randomness (network initialisation, bagging, Thompson draws): run = derived from the run's seed, one stream per bandit; an integer = that seed for every bandit of every run, as the original's unseeded VW (0)",
	Want: "run or an integer in [0, 2^64)", Default: "run", omitDefault: true,
	set: func(c *Config, v string) error {
		if v == "run" {
			c.FixedSeed, c.Seed = false, 0
			return nil
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("want run or an integer in [0, 2^64)")
		}
		c.FixedSeed, c.Seed = true, n
		return nil
	},
	get: func(c Config) string {
		if !c.FixedSeed {
			return "run"
		}
		return strconv.FormatUint(c.Seed, 10)
	}}

// allOptions lists every option, for the defaults every Config starts from.
var allOptions = []Option{optHidden, optPolicies, optPsi, optMode, optEpsilon, optEstimator, optLR, optLambda,
	optGammaScale, optGammaExp, optBags, optAlpha, optV, optSamples, optRound, optStandardize, optProj,
	optPriorBias, optPrior, optPriorGrey, optPriorAngle, optInteract, optTemp, optLevels, optParamWeight, optDrift, optSeed}

// learner is a Policy whose learned state can be saved and restored
// (the structure comes from the agent's construction). Every agent's
// constructor returns one, so an agent that cannot be saved does not
// compile.
type learner interface {
	Policy
	saveState(enc *gob.Encoder) error
	loadState(dec *gob.Decoder) error
}

// AgentInfo is one agent's table entry.
type AgentInfo struct {
	// Name is the agent's name in configurations and on the command line.
	Name string
	// Doc is a one-line description.
	Doc string
	// Options are the keys the agent accepts.
	Options []Option
	// Defaults are the agent's values where they differ from its
	// options' defaults.
	Defaults Options
	// ContextFree marks an agent whose choices never depend on the
	// context (it only checks its length): callers need not compute
	// features for it, as the original's RandomAgent never did.
	ContextFree bool

	// new returns a policy over k arms for contexts of dimension dim
	// (both ≥ 1, checked by NewPolicy), with internal randomness derived
	// from seed.
	new func(k, dim int, cfg Config, seed uint64) (learner, error)
	// joint, set instead of new for an agent that decides both levels of a
	// scenario at once, returns it for the scenario and the layout of the
	// (transformed) contexts it sees.
	joint func(spec scenario.Scenario, ctx Layout, cfg Config, seed uint64) (jointLearner, error)
	// standardized agents always standardise their contexts (with the
	// proj option); the others do when their standardize option is on.
	standardized bool
}

// agents is the agent table, in listing order. A new agent is its own file
// (the policy, with saveState/loadState) and one entry here.
var agents = []AgentInfo{
	{Name: "random", Doc: "uniform arm, then uniform parameter (the original's RandomAgent)", Options: []Option{optRound}, ContextFree: true,
		new: func(k, dim int, _ Config, _ uint64) (learner, error) { return NewUniform(k, dim) }},
	{Name: "cover", Doc: "the paper's: VW 8.x online cover (--cover 3 --psi 1 --nn 16, DR), rounded probabilities and costs",
		Options: []Option{optHidden, optPolicies, optPsi, optMode, optEpsilon, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"round": "true"},
		new: coverLearner},
	{Name: "cover-modern", Doc: "cover with VW ≥ 9 semantics (a floor ε/K on every arm)",
		Options: []Option{optHidden, optPolicies, optPsi, optMode, optEpsilon, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"mode": "modern"},
		new: coverLearner},
	{Name: "epsilon-greedy", Doc: "ε uniform, else the arm of least predicted cost (importance-weighted regression)",
		Options: []Option{optHidden, optEpsilon, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"estimator": "iwr"},
		new: csLearner(epsGreedy{})},
	{Name: "softmax", Doc: "probabilities ∝ exp(−λ · range-normalised predicted cost)",
		Options: []Option{optHidden, optLambda, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"estimator": "iwr"},
		new: csLearner(softmax{})},
	{Name: "squarecb", Doc: "inverse-gap weighting on a regression oracle (Foster & Rakhlin 2020)",
		Options: []Option{optHidden, optGammaScale, optGammaExp, optLR, optRound, optStandardize, optProj, optSeed},
		new:     csLearner(squareCB{})},
	{Name: "bootstrap-ts", Doc: "bootstrapped Thompson sampling over online bags",
		Options: []Option{optHidden, optBags, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"estimator": "iwr"},
		new: csLearner(bootstrapTS{})},
	{Name: "linucb", Doc: "LinUCB on costs: per-arm ridge regression, lower confidence bound; standardised, projected contexts",
		Options:  []Option{optLambda, optAlpha, optStandardize, optProj, optRound},
		Defaults: Options{"lambda": "1", "alpha": "0.1", "standardize": "true"},
		new: func(k, dim int, cfg Config, seed uint64) (learner, error) {
			return newLinPolicy(false, k, dim, cfg, seed), nil
		}},
	{Name: "lints", Doc: "linear Thompson sampling on costs; standardised, projected contexts",
		Options:  []Option{optLambda, optV, optSamples, optStandardize, optProj, optRound, optSeed},
		Defaults: Options{"lambda": "1", "v": "0.02", "standardize": "true", "proj": "8"},
		new: func(k, dim int, cfg Config, seed uint64) (learner, error) {
			return newLinPolicy(true, k, dim, cfg, seed), nil
		}},
	{Name: "ucb1", Doc: "UCB1 on range-normalised costs, ignoring the context (a non-contextual baseline)",
		Options: []Option{optAlpha, optRound}, ContextFree: true,
		new: func(k, dim int, cfg Config, _ uint64) (learner, error) { return newUCB1(k, dim, cfg), nil }},
	{Name: "hts", Doc: "amt's own (recommended): hierarchical Thompson sampling over Bayesian probit models of the violation probability, a relation's angle an ordinal input; standardised, projected contexts",
		Options: []Option{optProj, optPriorBias, optPrior, optPriorGrey, optPriorAngle, optInteract, optTemp, optSamples,
			optLevels, optParamWeight, optDrift},
		Defaults: Options{"samples": "32", "proj": "64"}, standardized: true,
		joint: func(spec scenario.Scenario, ctx Layout, cfg Config, seed uint64) (jointLearner, error) {
			return newHTS(spec, ctx, cfg, seed)
		}},
}

// Agents lists the agent names New accepts, in a stable order.
func Agents() []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = a.Name
	}
	return out
}

// AgentTable returns the agent table's entries, in the order of Agents.
func AgentTable() []AgentInfo {
	out := slices.Clone(agents)
	for i := range out {
		out[i].Options = slices.Clone(out[i].Options)
		out[i].Defaults = maps.Clone(out[i].Defaults)
	}
	return out
}

// lookupAgent returns the table entry of the named agent.
func lookupAgent(name string) (*AgentInfo, error) {
	for i := range agents {
		if agents[i].Name == name {
			return &agents[i], nil
		}
	}
	return nil, fmt.Errorf("unknown agent %q (known: %s)", name, strings.Join(Agents(), ", "))
}

// option returns the agent's option with key k.
func (a *AgentInfo) option(k string) *Option {
	for i := range a.Options {
		if a.Options[i].Key == k {
			return &a.Options[i]
		}
	}
	return nil
}

// Defaults returns the default configuration of the named agent: every
// option's default, then the agent's own (see the table: "cover" is the
// paper's setting, VW 8.x --cover 3 --psi 1 --nn 16, DR, rounded
// probabilities; "cover-modern" the same command line with VW ≥ 9
// semantics; epsilon-greedy, softmax and bootstrap-ts learn with
// importance-weighted regression, the bake-off's best choice for them).
func Defaults(agent string) (Config, error) {
	a, err := lookupAgent(agent)
	if err != nil {
		return Config{}, err
	}
	var c Config
	for _, o := range allOptions {
		if err := o.set(&c, o.Default); err != nil {
			panic(fmt.Sprintf("bandit: option %s: default %q: %v", o.Key, o.Default, err))
		}
	}
	for _, k := range sortedKeys(a.Defaults) {
		o := a.option(k)
		if o == nil {
			panic(fmt.Sprintf("bandit: agent %s: default for option %q it does not take", agent, k))
		}
		if err := o.set(&c, a.Defaults[k]); err != nil {
			panic(fmt.Sprintf("bandit: agent %s: default %s=%q: %v", agent, k, a.Defaults[k], err))
		}
	}
	return c, nil
}

// Keys returns the option keys the named agent accepts, sorted.
func Keys(agent string) []string {
	a, err := lookupAgent(agent)
	if err != nil {
		return nil
	}
	k := make([]string, len(a.Options))
	for i, o := range a.Options {
		k[i] = o.Key
	}
	slices.Sort(k)
	return k
}

// Options are agent parameter overrides by key (as in -agent-opts
// k=v,... or a YAML map).
type Options map[string]string

func sortedKeys(o Options) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ParseOptions parses "k=v,k=v" (empty string = no options).
func ParseOptions(s string) (Options, error) {
	o := Options{}
	if strings.TrimSpace(s) == "" {
		return o, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("agent option %q: want key=value", kv)
		}
		if _, dup := o[k]; dup {
			return nil, fmt.Errorf("agent option %q given twice", k)
		}
		o[k] = v
	}
	return o, nil
}

// Resolve returns the named agent's defaults with opts applied; unknown
// keys and bad values are errors naming the key, the value and what was
// expected.
func Resolve(agent string, opts Options) (Config, error) {
	c, err := Defaults(agent)
	if err != nil {
		return c, err
	}
	a, _ := lookupAgent(agent)
	for _, k := range sortedKeys(opts) {
		v := opts[k]
		o := a.option(k)
		if o == nil {
			return c, fmt.Errorf("agent %s: unknown option %q (known: %s)", agent, k, strings.Join(Keys(agent), ", "))
		}
		if err := o.set(&c, v); err != nil {
			return c, fmt.Errorf("agent %s: option %s=%q: %w", agent, k, v, err)
		}
	}
	return c, nil
}

// Canonical returns the agent's effective parameters as sorted "k=v"
// pairs joined by commas (the form saved in state files).
func (c Config) Canonical(agent string) string {
	a, err := lookupAgent(agent)
	if err != nil {
		return ""
	}
	var parts []string
	for _, k := range Keys(agent) {
		o := a.option(k)
		if v := o.get(c); !o.omitDefault || v != o.Default {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, ",")
}

// NewPolicy returns the named agent's flat policy over k arms for contexts
// of dimension dim, with internal randomness derived from seed; with the
// standardize option on, the policy standardises its contexts itself. An
// agent that decides a whole scenario at once (hts) has no flat policy.
func NewPolicy(agent string, k, dim int, cfg Config, seed uint64) (Policy, error) {
	p, err := newLearner(agent, k, dim, cfg, seed)
	if err != nil || !cfg.Standardize {
		return p, err
	}
	pre, err := newLayoutStandardizer(Layout{Dim: dim}, cfg.Proj, splitmix(seed, seedStandardizer))
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", agent, err)
	}
	if p, err = newLearner(agent, k, pre.Dim(), cfg, seed); err != nil {
		return nil, err
	}
	return &standardized{pre: pre, p: p}, nil
}

func newLearner(agent string, k, dim int, cfg Config, seed uint64) (learner, error) {
	if k < 1 || dim < 1 {
		return nil, fmt.Errorf("bandit: policy needs k >= 1 arms and context dimension >= 1, got k=%d dim=%d", k, dim)
	}
	a, err := lookupAgent(agent)
	if err != nil {
		return nil, err
	}
	if a.new == nil {
		return nil, fmt.Errorf("agent %s decides over a whole scenario; it has no flat policy", agent)
	}
	if cfg.FixedSeed {
		seed = cfg.Seed
	}
	p, err := a.new(k, dim, cfg, seed)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", agent, err)
	}
	return p, nil
}
