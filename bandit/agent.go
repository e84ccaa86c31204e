package bandit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Arm is one arm of an agent's main bandit: a metamorphic relation, either
// plain, with a fixed parameter (flat scenarios), or with a grid of
// parameters explored by its own parameter bandit (hierarchical scenario).
type Arm struct {
	Name   string    // relation name, e.g. "blur", "rotation"
	Degree float64   // the fixed parameter when Fixed
	Fixed  bool      // the arm is the relation at Degree
	Grid   []float64 // parameter grid of a hierarchical arm (nil: no parameter bandit)
	Reward float64   // main reward when the arm finds a violation (0 otherwise)
}

// Label returns the arm's display name ("blur", "rotation:-30").
func (a Arm) Label() string {
	if a.Fixed {
		return a.Name + ":" + strconv.FormatFloat(a.Degree, 'g', -1, 64)
	}
	return a.Name
}

// Scenario is the action space of an agent and its rewards.
type Scenario struct {
	Name string
	Arms []Arm
	// ParamReward is a parameter bandit's reward for a violation at the
	// given parameter (0 without a violation).
	ParamReward func(deg float64) float64
	// ParamMax is the largest parameter reward; parameter costs are
	// ParamMax − reward.
	ParamMax float64
}

// MainMax returns the largest main reward; main costs are MainMax − reward.
func (s Scenario) MainMax() float64 {
	m := 0.0
	for _, a := range s.Arms {
		m = max(m, a.Reward)
	}
	return m
}

// HalvingReward is the paper's parameter reward for a violation at deg
// degrees: 10000 / 2^(|deg|/5 − 1), so the smallest violating angle earns
// the most and ±deg earn the same.
func HalvingReward(deg float64) float64 {
	return 10000 / math.Pow(2, math.Abs(deg)/5-1)
}

// grid returns −max, …, −step, step, …, max.
func grid(maxDeg, step int) []float64 {
	var g []float64
	for d := -maxDeg; d <= maxDeg; d += step {
		if d != 0 {
			g = append(g, float64(d))
		}
	}
	return g
}

// Hierarchical is the paper's hierarchical scenario: blur, fliplr, flipud,
// grayscale, invert, rotation (36-arm parameter bandit over ±5..±90°) and
// shear (18-arm parameter bandit over ±5..±45°), main reward 1.
func Hierarchical() Scenario {
	arms := []Arm{{Name: "blur"}, {Name: "fliplr"}, {Name: "flipud"}, {Name: "grayscale"}, {Name: "invert"},
		{Name: "rotation", Grid: grid(90, 5)}, {Name: "shear", Grid: grid(45, 5)}}
	for i := range arms {
		arms[i].Reward = 1
	}
	return Scenario{Name: "hierarchical", Arms: arms, ParamReward: HalvingReward, ParamMax: 10000}
}

// Basic is the original's basic scenario: nine flat arms (blur, fliplr,
// flipud, grayscale, invert, rotation ±30°, shear ±20°), reward 1.
func Basic() Scenario {
	arms := []Arm{{Name: "blur"}, {Name: "fliplr"}, {Name: "flipud"}, {Name: "grayscale"}, {Name: "invert"},
		{Name: "rotation", Fixed: true, Degree: -30}, {Name: "rotation", Fixed: true, Degree: 30},
		{Name: "shear", Fixed: true, Degree: -20}, {Name: "shear", Fixed: true, Degree: 20}}
	for i := range arms {
		arms[i].Reward = 1
	}
	return Scenario{Name: "basic", Arms: arms, ParamReward: HalvingReward, ParamMax: 10000}
}

// flat returns a single bandit over the relation at every grid angle, with
// the halving reward as main reward (max 10000).
func flat(name, mr string, g []float64) Scenario {
	arms := make([]Arm, len(g))
	for i, d := range g {
		arms[i] = Arm{Name: mr, Fixed: true, Degree: d, Reward: HalvingReward(d)}
	}
	return Scenario{Name: name, Arms: arms, ParamReward: HalvingReward, ParamMax: 10000}
}

// Rotation is the flat rotation scenario: 36 arms ±5..±90°.
func Rotation() Scenario { return flat("rotation", "rotation", grid(90, 5)) }

// Shear is the flat shear scenario: 18 arms ±5..±45°.
func Shear() Scenario { return flat("shear", "shear", grid(45, 5)) }

// ScenarioByName returns hierarchical, basic, rotation or shear.
func ScenarioByName(name string) (Scenario, error) {
	switch name {
	case "hierarchical":
		return Hierarchical(), nil
	case "basic":
		return Basic(), nil
	case "rotation":
		return Rotation(), nil
	case "shear":
		return Shear(), nil
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (known: hierarchical, basic, rotation, shear)", name)
}

// Choice is an agent's decision: the main arm, the parameter index into
// that arm's Grid (−1 if the arm has no parameter bandit) and the
// probabilities with which they were drawn (after the optional rounding).
type Choice struct {
	Arm, Param         int
	ArmProb, ParamProb float64
}

// Agent is a main bandit over a scenario's arms plus one parameter bandit
// per arm with a Grid, all of the same algorithm and configuration, queried
// with the same context.
type Agent struct {
	name string
	scen Scenario
	dim  int
	cfg  Config
	seed uint64
	main Policy
	subs []Policy // per arm; nil for arms without a Grid
}

// splitmix derives independent seeds.
func splitmix(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// New returns the named agent (see Agents) for the scenario and contexts of
// dimension dim, with opts overriding its defaults (see Keys). seed derives
// the agent's internal randomness (network initialisation, bagging,
// Thompson draws); the caller's generator passed to Choose does the arm
// sampling.
func New(name string, spec Scenario, dim int, opts Options, seed uint64) (*Agent, error) {
	cfg, err := Resolve(name, opts)
	if err != nil {
		return nil, err
	}
	return newAgent(name, spec, dim, cfg, seed)
}

func newAgent(name string, spec Scenario, dim int, cfg Config, seed uint64) (*Agent, error) {
	if len(spec.Arms) == 0 {
		return nil, fmt.Errorf("bandit: scenario %q has no arms", spec.Name)
	}
	if dim < 1 {
		return nil, fmt.Errorf("bandit: context dimension %d, want >= 1", dim)
	}
	a := &Agent{name: name, scen: spec, dim: dim, cfg: cfg, seed: seed, subs: make([]Policy, len(spec.Arms))}
	var err error
	if a.main, err = NewPolicy(name, len(spec.Arms), dim, cfg, splitmix(seed, 0)); err != nil {
		return nil, err
	}
	for i, arm := range spec.Arms {
		if len(arm.Grid) == 0 {
			continue
		}
		if spec.ParamReward == nil {
			return nil, fmt.Errorf("bandit: scenario %q arm %q has a grid but no ParamReward", spec.Name, arm.Name)
		}
		if a.subs[i], err = NewPolicy(name, len(arm.Grid), dim, cfg, splitmix(seed, uint64(i+1))); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Name returns the agent's algorithm name.
func (a *Agent) Name() string { return a.name }

// Config returns the agent's effective configuration.
func (a *Agent) Config() Config { return a.cfg }

// Scenario returns the agent's scenario.
func (a *Agent) Scenario() Scenario { return a.scen }

// Main returns the main bandit.
func (a *Agent) Main() Policy { return a.main }

// Sub returns arm's parameter bandit (nil if the arm has no grid).
func (a *Agent) Sub(arm int) Policy { return a.subs[arm] }

// round2 rounds to 2 decimals as Python's "%.2f" does.
func round2(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return r
}

// pick draws from p and returns the arm and its renormalised probability.
func (a *Agent) pick(p []float64, rng *rand.Rand) (int, float64) {
	i := Sample(p, rng)
	sum := 0.0
	for _, v := range p {
		if v > 0 {
			sum += v
		}
	}
	prob := p[i] / sum
	if a.cfg.Round {
		prob = round2(prob)
	}
	return i, prob
}

// Choose draws a main arm and, for an arm with a grid, a parameter, using
// the caller's generator.
func (a *Agent) Choose(ctx []float32, rng *rand.Rand) (Choice, error) {
	p, err := a.main.Distribution(ctx)
	if err != nil {
		return Choice{}, fmt.Errorf("main bandit: %w", err)
	}
	c := Choice{Param: -1}
	c.Arm, c.ArmProb = a.pick(p, rng)
	if sub := a.subs[c.Arm]; sub != nil {
		q, err := sub.Distribution(ctx)
		if err != nil {
			return Choice{}, fmt.Errorf("%s parameter bandit: %w", a.scen.Arms[c.Arm].Name, err)
		}
		c.Param, c.ParamProb = a.pick(q, rng)
	}
	return c, nil
}

// Update teaches the agent the outcome of choice c for ctx with the
// paper's rewards: the main bandit earns the arm's Reward on a violation
// (cost MainMax − reward), the parameter bandit ParamReward(degree) (cost
// ParamMax − reward). With rounding on, costs and probabilities are rounded
// to 2 decimals as the original did, and a bandit whose probability rounds
// to 0 does not learn (VW treated such a label as a test example).
func (a *Agent) Update(ctx []float32, c Choice, violated bool) error {
	if c.Arm < 0 || c.Arm >= len(a.scen.Arms) {
		return fmt.Errorf("%w: choice arm %d out of range [0, %d)", ErrInput, c.Arm, len(a.scen.Arms))
	}
	arm := a.scen.Arms[c.Arm]
	sub := a.subs[c.Arm]
	if sub == nil && c.Param != -1 {
		return fmt.Errorf("%w: arm %q has no parameters, choice has param %d", ErrInput, arm.Name, c.Param)
	}
	if sub != nil && (c.Param < 0 || c.Param >= len(arm.Grid)) {
		return fmt.Errorf("%w: param %d out of range [0, %d) for arm %q", ErrInput, c.Param, len(arm.Grid), arm.Name)
	}
	if err := checkContext(ctx, a.dim); err != nil {
		return err
	}
	reward := 0.0
	if violated {
		reward = arm.Reward
	}
	cost := a.scen.MainMax() - reward
	var pcost float64
	if sub != nil {
		pr := 0.0
		if violated {
			pr = a.scen.ParamReward(arm.Grid[c.Param])
		}
		pcost = a.scen.ParamMax - pr
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
		if err := checkFeedback(len(arm.Grid), c.Param, c.ParamProb, pcost); err != nil {
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
