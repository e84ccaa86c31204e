package bandit

import (
	"encoding/gob"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/scenario"
)

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
	// Revision counts the changes of the agent's arithmetic that change
	// its runs for the same seed (0 for none yet): run caches put it in
	// their keys, so that a run of an earlier revision is not reused.
	Revision int

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

// bankRevision is the Revision of the agents built on regressor banks
// (bank.go): 1 since their per-weight inverse square root is exact (gd.go).
const bankRevision = 1

// agents is the agent table, in listing order. A new agent is its own file
// (the policy, with saveState/loadState) and one entry here.
var agents = []AgentInfo{
	{Name: "random", Doc: "uniform arm, then uniform parameter (the original's RandomAgent)", Options: []Option{optRound}, ContextFree: true,
		new: func(k, dim int, _ Config, _ uint64) (learner, error) { return NewUniform(k, dim) }},
	{Name: "cover", Doc: "the paper's: VW 8.x online cover (--cover 3 --psi 1 --nn 16, DR), rounded probabilities and costs",
		Options: []Option{optHidden, optPolicies, optPsi, optMode, optEpsilon, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"round": "true"},
		new: coverLearner, Revision: bankRevision},
	{Name: "cover-modern", Doc: "cover with VW ≥ 9 semantics (a floor ε/K on every arm)",
		Options: []Option{optHidden, optPolicies, optPsi, optMode, optEpsilon, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"mode": "modern"},
		new: coverLearner, Revision: bankRevision},
	{Name: "epsilon-greedy", Doc: "ε uniform, else the arm of least predicted cost (importance-weighted regression)",
		Options: []Option{optHidden, optEpsilon, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"estimator": "iwr"},
		new: csLearner(epsGreedy{}), Revision: bankRevision},
	{Name: "softmax", Doc: "probabilities ∝ exp(−λ · range-normalised predicted cost)",
		Options: []Option{optHidden, optLambda, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"estimator": "iwr"},
		new: csLearner(softmax{}), Revision: bankRevision},
	{Name: "squarecb", Doc: "inverse-gap weighting on a regression oracle (Foster & Rakhlin 2020)",
		Options: []Option{optHidden, optGammaScale, optGammaExp, optLR, optRound, optStandardize, optProj, optSeed},
		new:     csLearner(squareCB{}), Revision: bankRevision},
	{Name: "bootstrap-ts", Doc: "bootstrapped Thompson sampling over online bags",
		Options: []Option{optHidden, optBags, optEstimator, optLR, optRound, optStandardize, optProj, optSeed}, Defaults: Options{"estimator": "iwr"},
		new: csLearner(bootstrapTS{}), Revision: bankRevision},
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
		Options: []Option{optProj, optPriorBias, optPrior, optPriorGrey, optPriorAngle, optPriorValue, optInteract, optInteractSign, optInteractCurve, optTemp, optSamples,
			optLevels, optParamWeight, optDrift},
		Defaults: Options{"samples": "32", "proj": "64", "interact-sign": "4", "prior-value": "0.3"}, standardized: true,
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

// AgentRevision returns the named agent's Revision (0 for an unknown name).
func AgentRevision(agent string) int {
	a, err := lookupAgent(agent)
	if err != nil {
		return 0
	}
	return a.Revision
}

// lookupAgent returns the table entry of the named agent.
func lookupAgent(name string) (*AgentInfo, error) {
	for i := range agents {
		if agents[i].Name == name {
			return &agents[i], nil
		}
	}
	return nil, fmt.Errorf("unknown agent %q%s (known: %s)", name, suggest.DidYouMean(name, Agents()), strings.Join(Agents(), ", "))
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
