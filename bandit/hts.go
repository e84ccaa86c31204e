package bandit

import (
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/amt-dev/amt/scenario"
)

// hts is amt's own agent for adaptive metamorphic testing (issue #13):
// hierarchical Thompson sampling over one Bayesian probit model of the
// violation probability per relation, in which a parameterised relation's
// value (an angle) is an ordinal input of the model instead of a set of
// independent arms.
//
// # Model
//
// The agent standardises its contexts online and reduces their feature
// part by a fixed random projection (Standardizer: the Agent does it for
// hts, which sees the transformed context z); the trailing grey-box
// block (Layout.Grey: the system under test's own answer on the source
// image) is standardised but not projected. With c = [1, z], an action
// without parameter has P(violation | c) = Φ(θᵀc). All arms of one
// parameterised action (a hierarchical arm's values, or the fixed-value
// arms of one action in a flat scenario) share one model
//
//	P(violation | c, v) = Φ(θ_cᵀc + θ_bᵀb(v) + u·θ_iᵀc₊),
//	b(v) = (u, u², sign(v)·u),  u = |v|/max|v|,
//
// where c₊ is c without its constant (the per-context slopes in |v| are
// dropped when interact is 0). A violation at 40° thereby also teaches 35°
// and 45°: rates that rise smoothly with |v| are learned from a few dozen
// pulls rather than the hundreds that 36 independent arms need. Each model
// is a Gaussian posterior learned online by assumed density filtering
// (probitModel), one O(D²) rank-1 step per update.
//
// Optional terms (interact-sign and prior-value on by default, the suite's
// choice; interact-curve off):
//
//   - interact-sign > 0 adds per-context slopes in the signed value, the
//     term sign(v)·u·θ_sᵀc₊, so that the context can choose a rotation's or
//     shear's direction (an image of one class breaks turned left, one of
//     another turned right), which no fixed angle can.
//   - interact-curve > 0 adds per-context slopes in u², the term
//     u²·θ_qᵀc₊, so that the context can move the peak of the curve (an
//     image of one class breaks most at 15°, one of another at 90°).
//   - prior-value > 0 gives each value v an offset δ_v of its own (prior
//     N(0, prior-value²)): the smooth curve in |v| still shares strength
//     between neighbouring values early on, and the offsets let the model
//     follow a curve the basis cannot (a hump, a spike, a plateau with a
//     noisy top), so that it converges to the best value rather than to
//     the basis's best fit.
//
// # Decision
//
// Samples draws are taken from the posteriors (internal generator; each
// draw's standard deviations scaled by temp). In each draw every action's
// sampled violation curve p̃ gives each main arm a value, and the draw's
// choice is the main arm of best value, with its best parameter. The
// agent's distribution is the frequency of each choice over the draws; the
// caller's generator samples from it, so the logged probabilities are
// those the choice was drawn with. Values come from the scenario's
// rewards, so the objective is the scenario's:
//
//   - levels "coop" (the default): the parameter level picks the value
//     maximising p̃(v)·(MainReward/MainMax + param-weight·ParamReward(v)/ParamMax),
//     the sum of the two levels' normalised rewards its choice earns (the
//     main level's violation reward and its own); the main level picks
//     the arm maximising its own expected reward MainReward·p̃ at that
//     value. With the paper's halving reward this seeks violations and
//     prefers, by up to a factor 2, the smallest angles that violate about
//     as often; with a 0/1 parameter reward it seeks violations only.
//   - levels "own": each level maximises its own reward only (the
//     original's two independent bandits): the parameter level picks the
//     value maximising ParamReward(v)·p̃(v). With the paper's halving
//     reward this means small angles that rarely violate, so the main
//     level then rarely plays rotation or shear.
//
// A flat scenario (no hierarchical arm) has one level: the arm maximising
// MainReward·p̃, e.g. the halving reward of each angle in the paper's
// rotation-only scenario.
//
// The learned state (violation probabilities) does not depend on the
// rewards.
//
// # Cost
//
// Per decision O(models·D²) for the posterior moments of the draw summary
// plus O(Samples·(arms + values)) for the draws, with D = 1 + dim(z) (+ 3 +
// dim(z) for the models of parameterised actions with interact, as many
// with interact-sign and with interact-curve, + the number of values with
// prior-value); an update is one O(D²) step.
type hts struct {
	scen    scenario.Scenario
	ctx     Layout // of the transformed contexts z
	cfg     Config
	m0      int     // 1 + ctx.Dim: the context part [1, z]
	mainMax float64 // largest main reward

	groups []*htsGroup
	arms   []htsArm

	pcg *rand.PCG
	rng *rand.Rand

	// scratch
	c     []float64
	x     []float64
	draws []htsDraw
}

// htsLevels are the values of the levels option.
var htsLevels = []string{"coop", "own"}

// htsBasis is the number of value-basis functions b(v).
const htsBasis = 3

// htsGroup is one action's model.
type htsGroup struct {
	angle  bool // the model has value terms
	maxAbs float64
	// slopes are its blocks of per-context slopes (interact, interact-sign,
	// interact-curve, in that order, where > 0).
	slopes []htsSlope
	// nres is the number of per-value offsets (prior-value > 0: one per
	// value of the action), resOff their place in the model's weights and
	// sres in the draw summary.
	nres, resOff, sres int
	prior              []float64
	model              *probitModel
	// decision scratch: mean and Cholesky factor of the draw summary
	// s = (θ_cᵀc, θ_b, the slopes' θᵀc₊, δ), a draw w of it, Σ times the
	// context direction [c, 0]
	mean, cov, w []float64
	u            []float64
}

// htsSlope is one block of per-context slopes θᵀc₊ of a model: they
// multiply the value's basis function b(v)[basis].
type htsSlope struct {
	basis int       // which basis function
	off   int       // first weight in the model
	sum   int       // entry in the draw summary
	us    []float64 // decision scratch: Σ times the direction [0, c₊] of the block
}

// basis fills dst with b(v).
func (g *htsGroup) basis(dst []float64, v float64) {
	u := math.Abs(v) / g.maxAbs
	s := 0.0
	if v > 0 {
		s = 1
	} else if v < 0 {
		s = -1
	}
	dst[0], dst[1], dst[2] = u, u*u, s*u
}

// htsArm is one main arm: its group and its cells (one per value of a
// hierarchical arm; a single cell otherwise).
type htsArm struct {
	group   int
	grid    bool
	basis   [][]float64 // per cell, b(v) (nil for an arm without value)
	vidx    []int       // per cell, the value's index among its group's values
	pweight []float64   // per cell of a grid arm, its factor in the parameter level's value
	reward  float64
	// decision scratch
	best int
	val  float64
}

type htsDraw struct{ arm, param int }

// newHTS returns the hts agent for the scenario (checked by the caller)
// and transformed contexts of layout ctx; seed derives the posterior
// draws.
func newHTS(spec scenario.Scenario, ctx Layout, cfg Config, seed uint64) (*hts, error) {
	if cfg.Levels != "coop" && cfg.Levels != "own" {
		return nil, fmt.Errorf("hts: levels %q, want coop or own", cfg.Levels)
	}
	h := &hts{scen: spec, ctx: ctx, cfg: cfg, m0: 1 + ctx.Dim, mainMax: spec.MainMax()}
	if !(h.mainMax > 0) || math.IsInf(h.mainMax, 0) {
		return nil, fmt.Errorf("hts: scenario %q: largest main reward %v, want a positive number", spec.Name, h.mainMax)
	}
	h.pcg = rand.NewPCG(seed, 0x68747300) // "hts"
	h.rng = rand.New(h.pcg)
	// Context prior: intercept, features, grey-box block.
	ctxPrior := make([]float64, h.m0)
	ctxPrior[0] = cfg.PriorBias
	nf := ctx.Dim - ctx.Grey
	for i := 1; i <= nf; i++ {
		ctxPrior[i] = cfg.Prior / math.Sqrt(float64(nf))
	}
	for i := 1 + nf; i < h.m0; i++ {
		ctxPrior[i] = cfg.PriorGrey
	}
	newGroup := func(angle bool, values []float64) int {
		g := &htsGroup{angle: angle}
		g.prior = append([]float64(nil), ctxPrior...)
		n := 1
		if angle {
			for _, v := range values {
				g.maxAbs = max(g.maxAbs, math.Abs(v))
			}
			if g.maxAbs == 0 {
				g.maxAbs = 1
			}
			for range htsBasis {
				g.prior = append(g.prior, cfg.PriorAngle)
			}
			n += htsBasis
		}
		for _, sl := range []struct {
			basis int
			sd    float64
		}{{0, cfg.Interact}, {2, cfg.InteractSign}, {1, cfg.InteractCurve}} {
			if !angle || sl.sd == 0 {
				continue
			}
			g.slopes = append(g.slopes, htsSlope{basis: sl.basis, off: len(g.prior), sum: n})
			for _, p := range ctxPrior[1:] {
				g.prior = append(g.prior, p*sl.sd)
			}
			n++
		}
		if angle && cfg.PriorValue > 0 {
			g.nres, g.resOff, g.sres = len(values), len(g.prior), n
			for range values {
				g.prior = append(g.prior, cfg.PriorValue)
			}
			n += g.nres
		}
		g.model = newProbitModel(g.prior)
		g.mean, g.cov, g.w = make([]float64, n), make([]float64, n*n), make([]float64, n)
		g.u = make([]float64, len(g.prior))
		for i := range g.slopes {
			g.slopes[i].us = make([]float64, len(g.prior))
		}
		h.groups = append(h.groups, g)
		return len(h.groups) - 1
	}
	// The fixed-value arms of one action (flat scenarios) share a model.
	fixedValues := map[string][]float64{}
	for _, a := range spec.Arms {
		if len(a.Values) == 1 {
			fixedValues[a.Action] = append(fixedValues[a.Action], a.Values[0])
		}
	}
	fixedGroup := map[string]int{}
	paramMax := spec.ParamMax()
	for i, a := range spec.Arms {
		arm := htsArm{reward: spec.MainReward(i)}
		if r := arm.reward; math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
			return nil, fmt.Errorf("hts: scenario %q arm %q: reward %v, want a finite number >= 0", spec.Name, a.Name, r)
		}
		switch {
		case a.Hierarchical():
			if !(paramMax > 0) || math.IsInf(paramMax, 0) {
				return nil, fmt.Errorf("hts: scenario %q: largest parameter reward %v, want a positive number", spec.Name, paramMax)
			}
			arm.group = newGroup(true, a.Values)
			arm.grid = true
			for j := range a.Values {
				r := spec.ParamReward(i, j)
				if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
					return nil, fmt.Errorf("hts: scenario %q arm %q: parameter reward %v at %v", spec.Name, a.Name, r, a.Values[j])
				}
				w := r // levels own
				if cfg.Levels == "coop" {
					w = arm.reward/h.mainMax + cfg.ParamWeight*r/paramMax
				}
				arm.pweight = append(arm.pweight, w)
			}
		case len(a.Values) == 1:
			g, ok := fixedGroup[a.Action]
			if !ok {
				g = newGroup(true, fixedValues[a.Action])
				fixedGroup[a.Action] = g
			}
			arm.group = g
		default:
			arm.group = newGroup(false, nil)
		}
		if g := h.groups[arm.group]; g.angle {
			for j, v := range a.Values {
				b := make([]float64, htsBasis)
				g.basis(b, v)
				arm.basis = append(arm.basis, b)
				if a.Hierarchical() {
					arm.vidx = append(arm.vidx, j)
				} else {
					arm.vidx = append(arm.vidx, slices.Index(fixedValues[a.Action], v))
				}
			}
		}
		h.arms = append(h.arms, arm)
	}
	maxD := 0
	for _, g := range h.groups {
		maxD = max(maxD, len(g.prior))
	}
	h.c = make([]float64, h.m0)
	h.x = make([]float64, maxD)
	h.draws = make([]htsDraw, cfg.Samples)
	return h, nil
}

// context loads z into h.c = [1, z].
func (h *hts) context(z []float32) error {
	if err := checkContext(z, h.ctx.Dim); err != nil {
		return err
	}
	h.c[0] = 1
	for i, v := range z {
		h.c[i+1] = float64(v)
	}
	return nil
}

// features fills the model input of group g for the context in h.c,
// basis values b (nil for an action without value) and value index vi
// (its offset's indicator) and returns it.
func (h *hts) features(g *htsGroup, b []float64, vi int) []float64 {
	x := h.x[:len(g.prior)]
	copy(x, h.c)
	if g.angle {
		copy(x[h.m0:], b)
	}
	for _, sl := range g.slopes {
		for i, v := range h.c[1:] {
			x[sl.off+i] = b[sl.basis] * v
		}
	}
	if g.nres > 0 {
		res := x[g.resOff : g.resOff+g.nres]
		clear(res)
		res[vi] = 1
	}
	return x
}

// moments computes, for every group, the posterior mean and the Cholesky
// factor of the covariance of the draw summary s = (θ_cᵀc, θ_b, the slopes'
// θᵀc₊, δ), from which the probit of every value is
// s₀ + s_bᵀb(v) + Σ_slopes s_k·b(v)[basis_k] + δ_v (each term where the
// model has it).
func (h *hts) moments() {
	m0 := h.m0
	for _, g := range h.groups {
		mod := g.model
		d := mod.d
		n := len(g.mean)
		// u = Σ[:, :m0]·c, and per slope block us = Σ[:, off:off+m0−1]·c₊
		mulRows(g.u[:d], mod.sigma, d, 0, h.c)
		for _, sl := range g.slopes {
			mulRows(sl.us[:d], mod.sigma, d, sl.off, h.c[1:])
		}
		g.mean[0] = dot64(mod.mu[:m0], h.c)
		g.cov[0] = max(dot64(g.u[:m0], h.c), 0)
		if g.angle {
			for k := 1; k <= htsBasis; k++ {
				g.mean[k] = mod.mu[m0+k-1]
				g.cov[k*n], g.cov[k] = g.u[m0+k-1], g.u[m0+k-1]
				for l := 1; l <= htsBasis; l++ {
					g.cov[k*n+l] = mod.sigma[(m0+k-1)*d+m0+l-1]
				}
			}
		}
		for j, sl := range g.slopes {
			k := sl.sum
			g.slopeMoments(k, sl.off, sl.us, h.c, m0)
			for _, t := range g.slopes[:j] {
				ct := dot64(sl.us[t.off:t.off+m0-1], h.c[1:])
				g.cov[k*n+t.sum], g.cov[t.sum*n+k] = ct, ct
			}
			for r := 0; r < g.nres; r++ {
				cr := sl.us[g.resOff+r]
				g.cov[k*n+g.sres+r], g.cov[(g.sres+r)*n+k] = cr, cr
			}
		}
		for r := 0; r < g.nres; r++ {
			i, k := g.resOff+r, g.sres+r
			g.mean[k] = mod.mu[i]
			g.cov[k*n], g.cov[k] = g.u[i], g.u[i]
			for l := 1; l <= htsBasis; l++ {
				g.cov[k*n+l], g.cov[l*n+k] = mod.sigma[i*d+m0+l-1], mod.sigma[i*d+m0+l-1]
			}
			for q := 0; q < g.nres; q++ {
				g.cov[k*n+g.sres+q] = mod.sigma[i*d+g.resOff+q]
			}
		}
		cholesky(g.cov, n)
	}
}

// slopeMoments fills entry k of the draw summary, the per-context slopes
// θᵀc₊ whose weights start at off, given us = Σ[:, off:off+m0−1]·c₊: its mean, its
// variance and its covariances with θ_cᵀc and the basis weights.
func (g *htsGroup) slopeMoments(k, off int, us, c []float64, m0 int) {
	mod, n := g.model, len(g.mean)
	g.mean[k] = dot64(mod.mu[off:off+m0-1], c[1:])
	g.cov[k*n+k] = max(dot64(us[off:off+m0-1], c[1:]), 0)
	c0 := dot64(us[:m0], c)
	g.cov[k*n], g.cov[k] = c0, c0
	for l := 1; l <= htsBasis; l++ {
		g.cov[k*n+l], g.cov[l*n+k] = us[m0+l-1], us[m0+l-1]
	}
}

// draw fills every group's w with a draw of its summary: mean + temp·L·ε.
// Each w_l is mean_l + Σ_{k≤l} L_lk·temp·ε_k summed in k order, the ε_k
// drawn in k order.
func (h *hts) draw() {
	for _, g := range h.groups {
		n := len(g.mean)
		e := g.w // ε first, then overwritten row by row from the last
		for k := range n {
			e[k] = h.cfg.Temp * h.rng.NormFloat64()
		}
		for l := n - 1; l >= 0; l-- {
			row := g.cov[l*n : l*n+l+1]
			s := g.mean[l]
			for k, v := range row {
				s += v * e[k]
			}
			g.w[l] = s
		}
	}
}

// choose returns the choice of the current draw.
func (h *hts) choose() htsDraw {
	best, bestV := 0, math.Inf(-1)
	for ai := range h.arms {
		a := &h.arms[ai]
		g := h.groups[a.group]
		switch {
		case !g.angle:
			a.best, a.val = -1, a.reward*normCDF(g.w[0])
		default:
			bi, bv, bp := 0, math.Inf(-1), 0.0
			for j, b := range a.basis {
				z := g.w[0] + g.w[1]*b[0] + g.w[2]*b[1] + g.w[3]*b[2]
				for _, sl := range g.slopes {
					z += g.w[sl.sum] * b[sl.basis]
				}
				if g.nres > 0 {
					z += g.w[g.sres+a.vidx[j]]
				}
				p := normCDF(z)
				v := p
				if a.grid {
					v *= a.pweight[j]
				}
				if v > bv {
					bi, bv, bp = j, v, p
				}
			}
			a.best, a.val = bi, a.reward*bp
			if !a.grid {
				a.best = -1
			}
		}
		if a.val > bestV {
			best, bestV = ai, a.val
		}
	}
	return htsDraw{best, h.arms[best].best}
}

// decide draws a main arm and, for a hierarchical arm, a parameter for the
// transformed context z, using the caller's generator.
func (h *hts) decide(z []float32, rng *rand.Rand) (Choice, error) {
	if err := h.context(z); err != nil {
		return Choice{}, err
	}
	h.moments()
	for s := range h.draws {
		h.draw()
		h.draws[s] = h.choose()
	}
	// Frequencies of the main arms, then of the chosen arm's parameters.
	S := float64(len(h.draws))
	p := make([]float64, len(h.arms))
	for _, d := range h.draws {
		p[d.arm]++
	}
	for i := range p {
		p[i] /= S
	}
	c := Choice{Param: -1}
	c.Arm = Sample(p, rng)
	c.ArmProb = p[c.Arm]
	if a := h.arms[c.Arm]; a.grid {
		q := make([]float64, len(a.basis))
		n := 0.0
		for _, d := range h.draws {
			if d.arm == c.Arm {
				q[d.param]++
				n++
			}
		}
		for j := range q {
			q[j] /= n
		}
		c.Param = Sample(q, rng)
		c.ParamProb = q[c.Param]
	}
	return c, nil
}

// cell returns the arm and the basis values of a choice (checked by the
// Agent).
func (h *hts) cell(arm, param int) (*htsArm, []float64, int) {
	a := &h.arms[arm]
	if a.basis == nil {
		return a, nil, -1
	}
	return a, a.basis[max(param, 0)], a.vidx[max(param, 0)]
}

// learn teaches the model of the chosen action whether the follow-up
// violated the relation. Rewards do not enter the model (they are applied
// at decision time).
func (h *hts) learn(z []float32, c Choice, violated bool) error {
	if err := h.context(z); err != nil {
		return err
	}
	a, b, vi := h.cell(c.Arm, c.Param)
	g := h.groups[a.group]
	if err := g.model.learn(h.features(g, b, vi), violated); err != nil {
		return err
	}
	if h.cfg.Drift > 0 {
		for _, g := range h.groups {
			g.model.inflate(h.cfg.Drift, g.prior)
		}
	}
	return nil
}

// probability returns the posterior predictive probability that the
// follow-up of arm (and parameter index, −1 for none) violates the
// relation for the transformed context z.
func (h *hts) probability(z []float32, arm, param int) (float64, error) {
	if err := h.context(z); err != nil {
		return 0, err
	}
	a, b, vi := h.cell(arm, param)
	g := h.groups[a.group]
	x := h.features(g, b, vi)
	g.model.mulSigma(g.model.sx, x)
	return normCDF(dot64(x, g.model.mu) / math.Sqrt(1+dot64(x, g.model.sx))), nil
}

// htsState is hts's learned state.
type htsState struct {
	Mu, Sigma [][]float64
	RNG       []byte
}

func (h *hts) saveState(enc *gob.Encoder) error {
	rng, err := h.pcg.MarshalBinary()
	if err != nil {
		return err
	}
	st := htsState{RNG: rng}
	for _, g := range h.groups {
		st.Mu = append(st.Mu, g.model.mu)
		st.Sigma = append(st.Sigma, g.model.sigma)
	}
	return enc.Encode(st)
}

func (h *hts) loadState(dec *gob.Decoder) error {
	var st htsState
	if err := dec.Decode(&st); err != nil {
		return err
	}
	if len(st.Mu) != len(h.groups) || len(st.Sigma) != len(h.groups) {
		return fmt.Errorf("hts state has %d models, want %d", len(st.Mu), len(h.groups))
	}
	for i, g := range h.groups {
		d := g.model.d
		if len(st.Mu[i]) != d || len(st.Sigma[i]) != d*d {
			return fmt.Errorf("hts state model %d has %d weights, want %d", i, len(st.Mu[i]), d)
		}
	}
	if err := st.check(); err != nil {
		return err
	}
	if err := h.pcg.UnmarshalBinary(st.RNG); err != nil {
		return err
	}
	for i, g := range h.groups {
		copy(g.model.mu, st.Mu[i])
		copy(g.model.sigma, st.Sigma[i])
	}
	return nil
}
