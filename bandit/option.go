package bandit

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

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

// omitAtDefault returns o left out of Canonical at its default value (an
// option added after results and states were saved).
func omitAtDefault(o Option) Option {
	o.omitDefault = true
	return o
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

// The options. A new option is a Config field, one declaration here, its
// place in allOptions (the order of the README's option table) and its key
// in the table entries of the agents that take it (agents.go).
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

	optStandardize   = boolOption("standardize", "standardise contexts online (running mean and variance, ±5 sd) before the bandits see them, projecting all but the grey-box block to proj dimensions", "false", func(c *Config) *bool { return &c.Standardize })
	optProj          = intOption("proj", "random projections of the standardised features (the grey-box block is kept as it is); 0 = none, as when the features have no more values", "16", 0, 4096, func(c *Config) *int { return &c.Proj })
	optPriorBias     = floatOption("prior-bias", "hts: prior sd of each model's intercept (probit scale)", "3", 0, 1e6, true, func(c *Config) *float64 { return &c.PriorBias })
	optPrior         = floatOption("prior", "hts: prior sd of the features' total contribution (each of the n weights has prior/√n)", "0.2", 0, 1e6, true, func(c *Config) *float64 { return &c.Prior })
	optPriorGrey     = floatOption("prior-grey", "hts: prior sd of each grey-box weight", "0.15", 0, 1e6, true, func(c *Config) *float64 { return &c.PriorGrey })
	optPriorAngle    = floatOption("prior-angle", "hts: prior sd of the weights of the value basis (u, u², sign·u, u the value's magnitude over the largest)", "2", 0, 1e6, true, func(c *Config) *float64 { return &c.PriorAngle })
	optPriorValue    = omitAtDefault(floatOption("prior-value", "hts: prior sd of each value's own offset from the smooth curve in the value's magnitude (probit scale; 0 = none), so that a curve the basis cannot follow is still learned value by value", "0", 0, 1e6, false, func(c *Config) *float64 { return &c.PriorValue }))
	optInteractSign  = omitAtDefault(floatOption("interact-sign", "hts: prior sd of the per-context slopes in the signed value sign(v)·u, relative to the context weights' (0 = none): lets the context choose the direction of a rotation or shear", "0", 0, 1e6, false, func(c *Config) *float64 { return &c.InteractSign }))
	optInteractCurve = omitAtDefault(floatOption("interact-curve", "hts: prior sd of the per-context slopes in the squared value u², relative to the context weights' (0 = none): lets the context move the peak of the violation curve, e.g. the angle at which an image of one class breaks most", "0", 0, 1e6, false, func(c *Config) *float64 { return &c.InteractCurve }))
	optInteract      = floatOption("interact", "hts: prior sd of the per-context slopes in the value's magnitude, relative to the context weights' (0 = no such terms)", "2", 0, 1e6, false, func(c *Config) *float64 { return &c.Interact })
	optTemp          = floatOption("temp", "hts: scale of the posterior draws' sd (1 = Thompson sampling, 0 = greedy on the posterior mean)", "0.5", 0, 100, false, func(c *Config) *float64 { return &c.Temp })
	optLevels        = Option{Key: "levels", Doc: "hts: what the parameter level maximises: coop (its choice's violation probability times the sum of both levels' normalised rewards) or own (its own reward only, as the paper's separate bandits)", Want: "coop or own", Default: "coop",
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
	optPriorBias, optPrior, optPriorGrey, optPriorAngle, optPriorValue, optInteract, optInteractSign, optInteractCurve, optTemp, optLevels, optParamWeight, optDrift, optSeed}

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
