package bandit

import (
	"fmt"
	"strings"

	"github.com/amt-dev/amt/internal/suggest"
)

// Config holds every tunable parameter of the agents. Each agent uses a
// subset (see Keys); Defaults gives an agent's values. Every field is set
// by exactly one Option (option.go).
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

	Standardize   bool    // agent: standardise contexts online before the levels see them (standardize)
	Proj          int     // standardisation: random projections of the features, 0 = none (proj)
	PriorBias     float64 // hts: prior sd of a model's intercept (prior-bias)
	Prior         float64 // hts: prior sd of the features' total contribution (prior)
	PriorGrey     float64 // hts: prior sd of each grey-box weight (prior-grey)
	PriorAngle    float64 // hts: prior sd of the value-basis weights (prior-angle)
	PriorValue    float64 // hts: prior sd of each value's own offset (prior-value)
	InteractSign  float64 // hts: prior sd of the per-context slopes in sign(v)·|v|, relative (interact-sign)
	InteractCurve float64 // hts: prior sd of the per-context slopes in (|v|/max)², relative (interact-curve)
	Interact      float64 // hts: prior sd of the per-context slopes in |value|, relative (interact)
	Temp          float64 // hts: scale of the posterior draws' sd (temp)
	Levels        string  // hts: coop or own (levels)
	ParamWeight   float64 // hts: weight of the parameter reward in the coop parameter level (param-weight)
	Drift         float64 // hts: variance added per update, relative to the prior (drift)
	// FixedSeed makes every bandit of the agent, in every run, draw its
	// internal randomness from Seed instead of from the run's seed (seed:
	// an integer rather than run).
	FixedSeed bool
	Seed      uint64
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
			return c, fmt.Errorf("agent %s: unknown option %q%s (known: %s)", agent, k, suggest.DidYouMean(k, Keys(agent)), strings.Join(Keys(agent), ", "))
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
