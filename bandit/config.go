package bandit

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Config holds every tunable parameter of the agents. Each agent uses a
// subset (see Keys); Defaults gives an agent's values.
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
	Samples    int       // lints: Monte Carlo draws for the probabilities (samples)
	Round      bool      // agent: pass probabilities and costs rounded to 2 decimals to Learn, as the original tool did (round)
}

// Agents lists the agent names New accepts, in a stable order.
func Agents() []string {
	return []string{"random", "cover", "cover-modern", "epsilon-greedy", "softmax", "squarecb", "bootstrap-ts", "linucb", "lints"}
}

// Defaults returns the default configuration of the named agent. "cover"
// is the paper's setting (VW 8.x --cover 3 --psi 1 --nn 16, DR, rounded
// probabilities); "cover-modern" is the same command line with VW ≥ 9
// semantics (floor 0.1/K on every arm). epsilon-greedy, softmax and
// bootstrap-ts learn with importance-weighted regression (the bake-off's
// best choice for them; estimator=dr gives VW's non-ADF default).
func Defaults(agent string) (Config, error) {
	c := Config{Hidden: 16, Policies: 3, Psi: 1, Mode: "legacy", Epsilon: 0.1, Estimator: DR, LR: 0.5,
		Lambda: 10, GammaScale: 10, GammaExp: 0.5, Bags: 4, Alpha: 1, V: 1, Samples: 100}
	switch agent {
	case "random", "squarecb":
	case "epsilon-greedy", "softmax", "bootstrap-ts":
		c.Estimator = IWR
	case "cover":
		c.Round = true
	case "cover-modern":
		c.Mode = "modern"
	case "linucb", "lints":
		c.Lambda = 1
	default:
		return Config{}, fmt.Errorf("unknown agent %q (known: %s)", agent, strings.Join(Agents(), ", "))
	}
	return c, nil
}

// Keys returns the option keys the named agent accepts, sorted.
func Keys(agent string) []string {
	var k []string
	switch agent {
	case "random":
		k = []string{"round"}
	case "cover", "cover-modern":
		k = []string{"hidden", "policies", "psi", "mode", "epsilon", "estimator", "lr", "round"}
	case "epsilon-greedy":
		k = []string{"hidden", "epsilon", "estimator", "lr", "round"}
	case "softmax":
		k = []string{"hidden", "lambda", "estimator", "lr", "round"}
	case "squarecb":
		k = []string{"hidden", "gamma-scale", "gamma-exponent", "lr", "round"}
	case "bootstrap-ts":
		k = []string{"hidden", "bags", "estimator", "lr", "round"}
	case "linucb":
		k = []string{"lambda", "alpha", "round"}
	case "lints":
		k = []string{"lambda", "v", "samples", "round"}
	}
	slices.Sort(k)
	return k
}

// Options are agent parameter overrides by key (as in -agent-opts
// k=v,... or a YAML map).
type Options map[string]string

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
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	allowed := Keys(agent)
	for _, k := range keys {
		v := opts[k]
		if !slices.Contains(allowed, k) {
			return c, fmt.Errorf("agent %s: unknown option %q (known: %s)", agent, k, strings.Join(allowed, ", "))
		}
		if err := c.set(k, v); err != nil {
			return c, fmt.Errorf("agent %s: option %s=%q: %w", agent, k, v, err)
		}
	}
	return c, nil
}

func parseInt(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("want an integer in [%d, %d]", lo, hi)
	}
	return n, nil
}

func parseFloat(v string, lo, hi float64, openLo bool) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	bad := err != nil || math.IsNaN(f) || f < lo || f > hi || (openLo && f == lo)
	if bad {
		if openLo {
			return 0, fmt.Errorf("want a number in (%g, %g]", lo, hi)
		}
		return 0, fmt.Errorf("want a number in [%g, %g]", lo, hi)
	}
	return f, nil
}

func (c *Config) set(k, v string) (err error) {
	switch k {
	case "hidden":
		c.Hidden, err = parseInt(v, 0, 1024)
	case "policies":
		c.Policies, err = parseInt(v, 1, 64)
	case "psi":
		c.Psi, err = parseFloat(v, 0, 1e6, false)
	case "mode":
		if v != "legacy" && v != "modern" {
			return fmt.Errorf("want legacy or modern")
		}
		c.Mode = v
	case "epsilon":
		c.Epsilon, err = parseFloat(v, 0, 1, false)
	case "estimator":
		c.Estimator, err = ParseEstimator(v)
	case "lr":
		c.LR, err = parseFloat(v, 0, 1e6, true)
	case "lambda":
		c.Lambda, err = parseFloat(v, 0, 1e12, true)
	case "gamma-scale":
		c.GammaScale, err = parseFloat(v, 0, 1e12, false)
	case "gamma-exponent":
		c.GammaExp, err = parseFloat(v, 0, 10, false)
	case "bags":
		c.Bags, err = parseInt(v, 1, 1024)
	case "alpha":
		c.Alpha, err = parseFloat(v, 0, 1e12, false)
	case "v":
		c.V, err = parseFloat(v, 0, 1e12, false)
	case "samples":
		c.Samples, err = parseInt(v, 1, 1000000)
	case "round":
		c.Round, err = strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
	default:
		return fmt.Errorf("unknown option")
	}
	return err
}

// get returns the option value of key k as text.
func (c Config) get(k string) string {
	switch k {
	case "hidden":
		return strconv.Itoa(c.Hidden)
	case "policies":
		return strconv.Itoa(c.Policies)
	case "psi":
		return strconv.FormatFloat(c.Psi, 'g', -1, 64)
	case "mode":
		return c.Mode
	case "epsilon":
		return strconv.FormatFloat(c.Epsilon, 'g', -1, 64)
	case "estimator":
		return c.Estimator.String()
	case "lr":
		return strconv.FormatFloat(c.LR, 'g', -1, 64)
	case "lambda":
		return strconv.FormatFloat(c.Lambda, 'g', -1, 64)
	case "gamma-scale":
		return strconv.FormatFloat(c.GammaScale, 'g', -1, 64)
	case "gamma-exponent":
		return strconv.FormatFloat(c.GammaExp, 'g', -1, 64)
	case "bags":
		return strconv.Itoa(c.Bags)
	case "alpha":
		return strconv.FormatFloat(c.Alpha, 'g', -1, 64)
	case "v":
		return strconv.FormatFloat(c.V, 'g', -1, 64)
	case "samples":
		return strconv.Itoa(c.Samples)
	case "round":
		return strconv.FormatBool(c.Round)
	}
	return ""
}

// Canonical returns the agent's effective parameters as sorted "k=v"
// pairs joined by commas (the form saved in state files).
func (c Config) Canonical(agent string) string {
	keys := Keys(agent)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + c.get(k)
	}
	return strings.Join(parts, ",")
}

// NewPolicy returns the named agent's flat policy over k arms for contexts
// of dimension dim, with internal randomness derived from seed.
func NewPolicy(agent string, k, dim int, cfg Config, seed uint64) (Policy, error) {
	if k < 1 || dim < 1 {
		return nil, fmt.Errorf("bandit: policy needs k >= 1 arms and context dimension >= 1, got k=%d dim=%d", k, dim)
	}
	switch agent {
	case "random":
		return NewUniform(k, dim)
	case "cover", "cover-modern":
		if cfg.Estimator == IWR {
			return nil, fmt.Errorf("agent %s: estimator iwr is not available for cover (use dr, ips or dm)", agent)
		}
		return newCover(k, dim, cfg, seed)
	case "epsilon-greedy":
		return newCSPolicy(kindEpsGreedy, k, dim, cfg, seed)
	case "softmax":
		return newCSPolicy(kindSoftmax, k, dim, cfg, seed)
	case "squarecb":
		return newCSPolicy(kindSquareCB, k, dim, cfg, seed)
	case "bootstrap-ts":
		return newCSPolicy(kindBootstrap, k, dim, cfg, seed)
	case "linucb":
		return newLinPolicy(false, k, dim, cfg, seed), nil
	case "lints":
		return newLinPolicy(true, k, dim, cfg, seed), nil
	}
	return nil, fmt.Errorf("unknown agent %q (known: %s)", agent, strings.Join(Agents(), ", "))
}
