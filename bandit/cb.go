package bandit

import (
	"encoding/gob"
	"fmt"
	"math/rand/v2"
)

// Estimator turns logged bandit feedback into a full cost vector for the
// cost-sensitive oracle (VW --cb_type).
type Estimator int

const (
	// DR is the doubly robust estimator: ĉ(x,a) + 1[a=aₜ]·(cₜ − ĉ(x,a))/pₜ,
	// with ĉ a separate per-arm regressor trained on the chosen arm with
	// importance weight 1/pₜ.
	DR Estimator = iota
	// IPS is inverse propensity scoring: 1[a=aₜ]·cₜ/pₜ.
	IPS
	// DM is the direct method: ĉ(x,a) for every arm, with ĉ trained on the
	// chosen arm with weight 1.
	DM
	// IWR is importance-weighted regression (VW's mtr): the policy's own
	// regressor of the chosen arm learns cₜ with importance weight 1/pₜ and
	// the other arms learn nothing. The bake-off (Bietti et al.) found it
	// the best estimator for greedy-type explorations. Cover cannot use it
	// for its cover policies, which always learn DR costs.
	IWR
)

// String returns the estimator's option name (dr, ips, dm).
func (e Estimator) String() string {
	switch e {
	case DR:
		return "dr"
	case IPS:
		return "ips"
	case DM:
		return "dm"
	case IWR:
		return "iwr"
	}
	return fmt.Sprintf("Estimator(%d)", int(e))
}

// ParseEstimator parses dr, ips, dm or iwr (alias mtr).
func ParseEstimator(s string) (Estimator, error) {
	switch s {
	case "iwr", "mtr":
		return IWR, nil
	case "dr":
		return DR, nil
	case "ips":
		return IPS, nil
	case "dm":
		return DM, nil
	}
	return 0, fmt.Errorf("estimator %q, want dr, ips, dm or iwr", s)
}

// costVector fills dst with the estimator's cost vector for the logged
// (arm, prob, cost), given the regressor's pre-update clipped predictions
// chat, and returns the regressor's importance weight for the chosen arm
// (0 = do not train it). IWR has no cost vector; it is handled by the
// callers and treated as DR here.
func (e Estimator) costVector(dst, chat []float64, arm int, prob, cost float64) float64 {
	prob = max(prob, minProb)
	switch e {
	case IPS:
		for a := range dst {
			dst[a] = 0
		}
		dst[arm] = cost / prob
		return 0
	case DM:
		copy(dst, chat)
		return 1
	default:
		copy(dst, chat)
		dst[arm] += (cost - chat[arm]) / prob
		return 1 / prob
	}
}

// csPolicy is a cost-sensitive-oracle policy (VW cb → csoaa → regressor)
// with one of four explorations on top (its exploration, explore.go):
//
//   - epsilon-greedy: ε/K on every arm plus 1 − ε on the argmin of the
//     policy's raw predicted costs (VW's default cb_explore);
//   - softmax: p ∝ exp(−λ·(ĉ_a − min ĉ)/range) over the predictions
//     clipped to the label range, with range the span of the logged costs
//     so that λ does not depend on the cost unit (VW's --softmax works on
//     raw scores; with the paper's costs of up to 10000 that is greedy);
//   - bootstrap-ts: B bags, each learning every example with a Poisson(1)
//     weight from the internal generator (online bagging, VW --bag); the
//     distribution is the fraction of bags whose argmin is each arm, which
//     is exactly the probability of playing the argmin of a uniformly drawn
//     bag (bootstrapped Thompson sampling);
//   - squarecb: inverse-gap weighting (Foster & Rakhlin 2020) on a direct
//     regression oracle trained on the chosen arm with weight 1:
//     p_a = 1/(K + γ·gap_a) for a ≠ argmin, the rest on the argmin, with
//     γ = gamma-scale·t^gamma-exponent (VW's defaults 10 and 0.5) and gaps
//     of the clipped predictions divided by the range of logged costs.
//
// The regressors live in one bank: blocks 0..B−1 are the B policies (B = 1
// except for bootstrap), block B the estimator's regressor ĉ (unused with
// IWR).
type csPolicy struct {
	explore exploration
	k, dim  int
	est     Estimator
	cfg     Config
	bags    int
	bank    *bank
	gd      gdState
	pcg     *rand.PCG
	rng     *rand.Rand
	t       int64 // learn calls
	// range of the logged costs, the unit of softmax's and SquareCB's gaps
	cLo, cHi float64

	chat, cvec []float64
	rows       []int
	labels     []float64
	wts        []float64
}

// csLearner returns the constructor of a cost-sensitive agent's table
// entry.
func csLearner(explore exploration) func(k, dim int, cfg Config, seed uint64) (learner, error) {
	return func(k, dim int, cfg Config, seed uint64) (learner, error) {
		return newCSPolicy(explore, k, dim, cfg, seed)
	}
}

func newCSPolicy(explore exploration, k, dim int, cfg Config, seed uint64) (*csPolicy, error) {
	p := &csPolicy{explore: explore, k: k, dim: dim, est: cfg.Estimator, cfg: cfg, bags: explore.bags(cfg)}
	p.pcg = rand.NewPCG(seed, 0x62616e646974)
	p.rng = rand.New(p.pcg)
	blocks := p.bags + 1
	if explore.direct() || p.est == IWR {
		blocks = p.bags
	}
	var err error
	if p.bank, err = newBank(blocks*k, dim, cfg.Hidden, p.rng); err != nil {
		return nil, err
	}
	p.gd = initState(cfg.LR, p.bank)
	p.chat = make([]float64, k)
	p.cvec = make([]float64, k)
	return p, nil
}

// Arms implements Policy.
func (p *csPolicy) Arms() int { return p.k }

// scale returns the width of the range of logged costs (at least a tiny
// positive value), used to make softmax and SquareCB independent of the
// cost unit.
func (p *csPolicy) scale() float64 {
	return max(p.cHi-p.cLo, 1e-12)
}

// Distribution implements Policy.
func (p *csPolicy) Distribution(ctx []float32) ([]float64, error) {
	if err := checkContext(ctx, p.dim); err != nil {
		return nil, err
	}
	if err := p.bank.forward(ctx); err != nil {
		return nil, err
	}
	pr := make([]float64, p.k)
	p.explore.distribution(p, pr)
	return checkDist(pr)
}

// Learn implements Policy.
func (p *csPolicy) Learn(ctx []float32, arm int, prob, cost float64) error {
	if err := checkLearn(ctx, p.dim, p.k, arm, prob, cost); err != nil {
		return err
	}
	if err := p.bank.forward(ctx); err != nil {
		return err
	}
	if p.t == 0 {
		p.cLo, p.cHi = cost, cost
	}
	p.cLo, p.cHi = min(p.cLo, cost), max(p.cHi, cost)
	k := p.k
	p.rows, p.labels, p.wts = p.rows[:0], p.labels[:0], p.wts[:0]
	switch {
	case p.explore.direct():
		// Plain online regression on the chosen arm.
		p.rows = append(p.rows, arm)
		p.labels = append(p.labels, cost)
		p.wts = append(p.wts, 1)
	case p.est == IWR:
		for b := 0; b < p.bags; b++ {
			// bagWeight is exactly 1 but for bootstrap-ts, and w > 0 for
			// a valid prob, so only a bag's zero draw skips it.
			w := 1 / max(prob, minProb) * p.explore.bagWeight(p.rng)
			if w == 0 {
				continue
			}
			p.rows = append(p.rows, b*k+arm)
			p.labels = append(p.labels, cost)
			p.wts = append(p.wts, w)
		}
	default:
		reg := p.bags * k
		for a := 0; a < k; a++ {
			p.chat[a] = p.gd.clip(float64(p.bank.raw[reg+a]))
		}
		if w := p.est.costVector(p.cvec, p.chat, arm, prob, cost); w > 0 {
			p.rows = append(p.rows, reg+arm)
			p.labels = append(p.labels, cost)
			p.wts = append(p.wts, w)
		}
		for b := 0; b < p.bags; b++ {
			w := p.explore.bagWeight(p.rng)
			if w == 0 {
				continue
			}
			for a := 0; a < k; a++ {
				p.rows = append(p.rows, b*k+a)
				p.labels = append(p.labels, p.cvec[a])
				p.wts = append(p.wts, w)
			}
		}
	}
	p.bank.learn(&p.gd, p.rows, p.labels, p.wts)
	p.t++
	return nil
}

type csState struct {
	T    int64
	CLo  float64
	CHi  float64
	GD   gdState
	Bank bankState
	RNG  []byte
}

func (p *csPolicy) saveState(enc *gob.Encoder) error {
	rng, err := p.pcg.MarshalBinary()
	if err != nil {
		return err
	}
	return enc.Encode(csState{p.t, p.cLo, p.cHi, p.gd, p.bank.state(), rng})
}

func (p *csPolicy) loadState(dec *gob.Decoder) error {
	s, err := decodeState(dec, func(s csState) error { return s.check(p.gd.Eta) })
	if err != nil {
		return err
	}
	if err := p.pcg.UnmarshalBinary(s.RNG); err != nil {
		return err
	}
	p.t, p.cLo, p.cHi, p.gd = s.T, s.CLo, s.CHi, s.GD
	return p.bank.setState(s.Bank)
}
