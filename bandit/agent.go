package bandit

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/amt-dev/amt/scenario"
)

// Choice is an agent's decision: the main arm, the parameter index into
// that arm's values (−1 if the arm has no parameter bandit) and the
// probabilities with which they were drawn as the bandits learn them
// (after the optional rounding). Prob is the exact probability with which
// the arm and the parameter were drawn together (the product of the main
// and the parameter bandit's, unrounded): the propensity an off-policy
// estimate of the decision needs.
type Choice struct {
	Arm, Param         int
	ArmProb, ParamProb float64
	Prob               float64
}

// Layout describes the context vectors an agent sees: Dim values, the
// last Grey of which are a grey-box block (the system under test's own
// answer on the source case), which standardisation keeps unprojected
// (see Standardizer).
type Layout struct {
	Dim, Grey int
}

// check reports whether the layout is usable.
func (l Layout) check() error {
	if l.Dim < 1 || l.Grey < 0 || l.Grey > l.Dim {
		return fmt.Errorf("bandit: context dimension %d with a grey-box block of %d, want dimension >= 1 and 0 <= block <= dimension", l.Dim, l.Grey)
	}
	return nil
}

// Agent is a main bandit over a scenario's arms plus one parameter bandit
// per hierarchical arm, all of the same algorithm and configuration,
// queried with the same context — or, for an agent that decides both
// levels at once (hts), one learner over the whole scenario. It learns
// with the scenario's objective; what the arms' actions are is not its
// business. With standardisation (the standardize option, always for
// hts), one Standardizer transforms every context before the levels see
// it.
type Agent struct {
	name   string
	scen   scenario.Scenario
	layout Layout
	cfg    Config
	seed   uint64
	pre    *Standardizer // nil: contexts go to the levels as they are
	main   learner
	subs   []learner // per arm; nil for arms without a parameter bandit
	joint  jointLearner
}

// A jointLearner decides both levels of a scenario at once (hts). It sees
// the Agent's transformed contexts; the Agent checks choices before
// learn sees them.
type jointLearner interface {
	stateful
	// decide draws a main arm and, for a hierarchical arm, a parameter.
	decide(z []float32, rng *rand.Rand) (Choice, error)
	// learn teaches it whether choice c violated the relation.
	learn(z []float32, c Choice, violated bool) error
}

// splitmix derives independent seeds.
func splitmix(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// seedStandardizer is the splitmix index of the standardizer's seed, far
// from the levels' 0, 1, ….
const seedStandardizer = 1 << 62

// New returns the named agent (see Agents) for the scenario and contexts
// of the given layout, with opts overriding its defaults (see Keys). seed
// derives the agent's internal randomness (network initialisation,
// bagging, Thompson draws, the standardizer's projection); the caller's
// generator passed to Choose does the arm sampling.
func New(name string, spec scenario.Scenario, ctx Layout, opts Options, seed uint64) (*Agent, error) {
	cfg, err := Resolve(name, opts)
	if err != nil {
		return nil, err
	}
	return newAgent(name, spec, ctx, cfg, seed)
}

func newAgent(name string, spec scenario.Scenario, ctx Layout, cfg Config, seed uint64) (*Agent, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("bandit: %w", err)
	}
	if err := ctx.check(); err != nil {
		return nil, err
	}
	info, err := lookupAgent(name)
	if err != nil {
		return nil, err
	}
	a := &Agent{name: name, scen: spec, layout: ctx, cfg: cfg, seed: seed, subs: make([]learner, len(spec.Arms))}
	inner := ctx
	if info.standardized || cfg.Standardize {
		if a.pre, err = newLayoutStandardizer(ctx, cfg.Proj, splitmix(seed, seedStandardizer)); err != nil {
			return nil, fmt.Errorf("agent %s: %w", name, err)
		}
		inner = Layout{Dim: a.pre.Dim(), Grey: ctx.Grey}
	}
	if info.joint != nil {
		if a.joint, err = info.joint(spec, inner, cfg, splitmix(seed, 0)); err != nil {
			return nil, fmt.Errorf("agent %s: %w", name, err)
		}
		return a, nil
	}
	if a.main, err = newLearner(name, len(spec.Arms), inner.Dim, cfg, splitmix(seed, 0)); err != nil {
		return nil, err
	}
	for i, arm := range spec.Arms {
		if !arm.Hierarchical() {
			continue
		}
		if a.subs[i], err = newLearner(name, len(arm.Values), inner.Dim, cfg, splitmix(seed, uint64(i+1))); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// newLayoutStandardizer returns the standardizer of contexts of layout
// ctx: the grey-box block kept, the rest projected to proj dimensions
// unless that would not reduce them.
func newLayoutStandardizer(ctx Layout, proj int, seed uint64) (*Standardizer, error) {
	if proj >= ctx.Dim-ctx.Grey {
		proj = 0
	}
	return NewStandardizer(ctx.Dim, StandardizerConfig{Proj: proj, Keep: ctx.Grey}, seed)
}

// Name returns the agent's algorithm name.
func (a *Agent) Name() string { return a.name }

// UsesContext reports whether the agent's choices depend on the context;
// for a context-free agent (random, ucb1: AgentInfo.ContextFree) any
// vector of the right length gives the same choices, so callers need not
// compute features for it.
func (a *Agent) UsesContext() bool {
	info, err := lookupAgent(a.name)
	return err != nil || !info.ContextFree
}

// Config returns the agent's effective configuration.
func (a *Agent) Config() Config { return a.cfg }

// Scenario returns the agent's scenario.
func (a *Agent) Scenario() scenario.Scenario { return a.scen }

// Layout returns the layout of the contexts the agent takes.
func (a *Agent) Layout() Layout { return a.layout }

// Main returns the main bandit (nil for an agent that decides both levels
// at once). It takes the transformed contexts of a standardising agent.
func (a *Agent) Main() Policy {
	if a.main == nil {
		return nil
	}
	return a.main
}

// Sub returns arm's parameter bandit (nil if the arm has none, or the
// agent decides both levels at once).
func (a *Agent) Sub(arm int) Policy {
	if a.subs[arm] == nil {
		return nil
	}
	return a.subs[arm]
}

// observe checks ctx, adds it to the standardisation statistics and
// returns the context the levels see.
func (a *Agent) observe(ctx []float32) ([]float32, error) {
	if a.pre == nil {
		return ctx, checkContext(ctx, a.layout.Dim)
	}
	if err := a.pre.Observe(ctx); err != nil {
		return nil, err
	}
	return a.pre.Transform(make([]float32, a.pre.Dim()), ctx)
}

// transform checks ctx and returns the context the levels see, without
// changing the statistics: for the update, the same as Choose's.
func (a *Agent) transform(ctx []float32) ([]float32, error) {
	if a.pre == nil {
		return ctx, checkContext(ctx, a.layout.Dim)
	}
	return a.pre.Transform(make([]float32, a.pre.Dim()), ctx)
}

// round2 rounds to 2 decimals as Python's "%.2f" does.
func round2(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return r
}

// pick draws from p and returns the arm, its renormalised probability as
// the bandit learns it (rounded with Round) and exactly.
func (a *Agent) pick(p []float64, rng *rand.Rand) (i int, learnt, exact float64) {
	i = Sample(p, rng)
	sum := 0.0
	for _, v := range p {
		if v > 0 {
			sum += v
		}
	}
	exact = p[i] / sum
	learnt = exact
	if a.cfg.Round {
		learnt = round2(exact)
	}
	return i, learnt, exact
}

// Choose draws a main arm and, for a hierarchical arm, a parameter, using
// the caller's generator. A standardising agent adds ctx to its
// statistics first.
func (a *Agent) Choose(ctx []float32, rng *rand.Rand) (Choice, error) {
	z, err := a.observe(ctx)
	if err != nil {
		return Choice{}, err
	}
	if a.joint != nil {
		return a.joint.decide(z, rng)
	}
	ctx = z
	p, err := a.main.Distribution(ctx)
	if err != nil {
		return Choice{}, fmt.Errorf("main bandit: %w", err)
	}
	c := Choice{Param: -1}
	c.Arm, c.ArmProb, c.Prob = a.pick(p, rng)
	if sub := a.subs[c.Arm]; sub != nil {
		q, err := sub.Distribution(ctx)
		if err != nil {
			return Choice{}, fmt.Errorf("%s parameter bandit: %w", a.scen.Arms[c.Arm].Name, err)
		}
		var exact float64
		c.Param, c.ParamProb, exact = a.pick(q, rng)
		c.Prob *= exact
	}
	return c, nil
}

// Update teaches the agent the outcome of choice c for ctx (the context
// given to the Choose that made it). The levels of a table agent learn
// the scenario's costs (see scenario.Scenario.MainCost and ParamCost: the
// level's maximum reward minus the reward of the outcome); with rounding
// on, costs and probabilities are rounded to 2 decimals as the original
// did, and a bandit whose probability rounds to 0 does not learn (VW
// treated such a label as a test example). An agent that decides both
// levels at once learns the violation itself and applies the rewards when
// it decides.
func (a *Agent) Update(ctx []float32, c Choice, violated bool) error {
	if c.Arm < 0 || c.Arm >= len(a.scen.Arms) {
		return fmt.Errorf("%w: choice arm %d out of range [0, %d)", ErrInput, c.Arm, len(a.scen.Arms))
	}
	arm := a.scen.Arms[c.Arm]
	if !arm.Hierarchical() && c.Param != -1 {
		return fmt.Errorf("%w: arm %q has no parameters, choice has param %d", ErrInput, arm.Name, c.Param)
	}
	if arm.Hierarchical() && (c.Param < 0 || c.Param >= len(arm.Values)) {
		return fmt.Errorf("%w: param %d out of range [0, %d) for arm %q", ErrInput, c.Param, len(arm.Values), arm.Name)
	}
	ctx, err := a.transform(ctx)
	if err != nil {
		return err
	}
	if a.joint != nil {
		return a.joint.learn(ctx, c, violated)
	}
	sub := a.subs[c.Arm]
	cost := a.scen.MainCost(c.Arm, violated)
	var pcost float64
	if sub != nil {
		pcost = a.scen.ParamCost(c.Arm, c.Param, violated)
	}
	if a.cfg.Round {
		cost, pcost = round2(cost), round2(pcost)
	}
	// Validate both feedbacks before either bandit learns.
	learnMain := !(a.cfg.Round && c.ArmProb == 0)
	learnSub := sub != nil && !(a.cfg.Round && c.ParamProb == 0)
	if learnMain {
		if err := checkFeedback(len(a.scen.Arms), c.Arm, c.ArmProb, cost); err != nil {
			return fmt.Errorf("main bandit: %w", err)
		}
	}
	if learnSub {
		if err := checkFeedback(len(arm.Values), c.Param, c.ParamProb, pcost); err != nil {
			return fmt.Errorf("%s parameter bandit: %w", arm.Name, err)
		}
	}
	if learnMain {
		if err := a.main.Learn(ctx, c.Arm, c.ArmProb, cost); err != nil {
			return fmt.Errorf("main bandit: %w", err)
		}
	}
	if learnSub {
		if err := sub.Learn(ctx, c.Param, c.ParamProb, pcost); err != nil {
			return fmt.Errorf("%s parameter bandit: %w", arm.Name, err)
		}
	}
	return nil
}
