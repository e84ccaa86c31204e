package bandit

import (
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"
)

// Cover is VW's online cover exploration (cb_explore --cover N --psi ψ) over
// a cost-sensitive oracle: N policies, policy 0 trained on the estimator's
// cost vector (DR by default), policies 1..N−1 on cover-adjusted DR costs
// ĉ_DR(a) [+1] − ψ·μ/Q_i(a) that reward arms the earlier policies rarely
// choose. The distribution puts 1/N on each policy's argmin, then applies a
// probability floor μ.
//
// Legacy mode is VW 8.x (the paper's version): μ = min(1/K, 1/√(tK)) with t
// counting Distribution and Learn calls, the floor raised only on arms some
// policy chose (so at most N arms have non-zero probability, and for N = 3
// every probability is 1, 2/3, 1/2 or 1/3), epsilon ignored, pseudo-costs
// with VW 8.x's constant +1. Modern mode follows VW ≥ 8.10/9: the floor on
// every arm, μ = ε/K when epsilon > 0 (else the decaying floor), t counting
// Learn calls only, pseudo-costs without the +1. In both modes the floor is
// applied with VW ≤ 9.6's enforce_minimum_probability (raise small entries,
// rescale the others); modern mode does not split argmin ties as VW's ADF
// cover does, and uses the post-update DR regressor for the cover costs.
//
// All (N+1)·K regressors form one batched bank: block 0 is policy 0, block
// 1 the DR regressor ĉ, blocks 2..N policies 1..N−1 (VW's weight layout).
//
// NewPolicy("cover" or "cover-modern", ...) returns a *Cover.
type Cover struct {
	k, dim, n int
	psi       float64
	modern    bool
	epsilon   float64
	est       Estimator
	bank      *bank
	gd        gdState
	counter   int64

	choice     []int
	chat, cvec []float64
	dr, pmass  []float64
	rows       []int
	labels     []float64
	wts        []float64
}

// coverLearner is the constructor of the cover agents' table entries.
func coverLearner(k, dim int, cfg Config, seed uint64) (learner, error) {
	if cfg.Estimator == IWR {
		return nil, fmt.Errorf("estimator iwr is not available for cover (use dr, ips or dm)")
	}
	return newCover(k, dim, cfg, seed)
}

// newCover returns a cover policy; cfg.Policies, Psi, Mode, Epsilon,
// Estimator, Hidden and LR are used.
func newCover(k, dim int, cfg Config, seed uint64) (*Cover, error) {
	c := &Cover{k: k, dim: dim, n: cfg.Policies, psi: cfg.Psi, modern: cfg.Mode == "modern",
		epsilon: cfg.Epsilon, est: cfg.Estimator}
	rng := rand.New(rand.NewPCG(seed, 0x636f766572))
	var err error
	if c.bank, err = newBank((c.n+1)*k, dim, cfg.Hidden, rng); err != nil {
		return nil, err
	}
	c.gd = initState(cfg.LR, c.bank)
	c.choice = make([]int, c.n)
	c.chat = make([]float64, k)
	c.cvec = make([]float64, k)
	c.dr = make([]float64, k)
	c.pmass = make([]float64, k)
	return c, nil
}

// Arms implements Policy.
func (c *Cover) Arms() int { return c.k }

// block returns the first bank row of policy i.
func (c *Cover) block(i int) int {
	if i == 0 {
		return 0
	}
	return (i + 1) * c.k
}

// mu returns the current probability floor.
func (c *Cover) mu() float64 {
	k := float64(c.k)
	if c.modern && c.epsilon > 0 {
		return c.epsilon / k
	}
	return min(1/k, 1/math.Sqrt(float64(c.counter)*k))
}

// predict fills c.choice with every policy's argmin for ctx.
func (c *Cover) predict(ctx []float32) error {
	if err := c.bank.forward(ctx); err != nil {
		return err
	}
	for i := 0; i < c.n; i++ {
		b := c.block(i)
		c.choice[i] = argmin(c.bank.raw[b : b+c.k])
	}
	return nil
}

// Distribution implements Policy. In legacy mode it advances the floor's
// counter, as VW 8.x's predict did.
func (c *Cover) Distribution(ctx []float32) ([]float64, error) {
	if err := checkContext(ctx, c.dim); err != nil {
		return nil, err
	}
	if err := c.predict(ctx); err != nil {
		return nil, err
	}
	mu := c.mu()
	if !c.modern {
		c.counter++
	}
	p := make([]float64, c.k)
	for _, a := range c.choice {
		p[a]++
	}
	for a := range p {
		p[a] /= float64(c.n)
	}
	enforceMinimum(p, mu*float64(c.k), c.modern)
	return checkDist(p)
}

// enforceMinimum is VW ≤ 9.6's enforce_minimum_probability: with
// epsTotal > 0.999 the result is uniform over the eligible arms; otherwise
// every eligible entry at or below epsTotal/K is raised to it and the other
// entries are rescaled to keep the sum at 1. Zero entries are eligible only
// if floorZero.
func enforceMinimum(p []float64, epsTotal float64, floorZero bool) {
	k := len(p)
	if epsTotal > 0.999 {
		n := 0
		for _, v := range p {
			if floorZero || v > 0 {
				n++
			}
		}
		for i, v := range p {
			if floorZero || v > 0 {
				p[i] = 1 / float64(n)
			}
		}
		return
	}
	pmin := epsTotal / float64(k)
	touched, untouched := 0.0, 0.0
	for i, v := range p {
		if (v > 0 || floorZero) && v <= pmin {
			touched += pmin
			p[i] = pmin
		} else {
			untouched += v
		}
	}
	if touched > 0 && untouched > 0 {
		ratio := (1 - touched) / untouched
		for i, v := range p {
			if v > pmin {
				p[i] = v * ratio
			}
		}
	}
}

// Learn implements Policy.
func (c *Cover) Learn(ctx []float32, arm int, prob, cost float64) error {
	if err := checkLearn(ctx, c.dim, c.k, arm, prob, cost); err != nil {
		return err
	}
	if err := c.predict(ctx); err != nil {
		return err
	}
	mu := c.mu()
	c.counter++
	k := c.k
	// Estimator regressor (block 1) and policy 0 on the cost vector built
	// from the pre-update predictions.
	for a := 0; a < k; a++ {
		c.chat[a] = c.gd.clip(float64(c.bank.raw[k+a]))
	}
	c.est.costVector(c.cvec, c.chat, arm, prob, cost)
	c.rows, c.labels, c.wts = c.rows[:0], c.labels[:0], c.wts[:0]
	pe := max(prob, minProb)
	c.rows = append(c.rows, k+arm)
	c.labels = append(c.labels, cost)
	c.wts = append(c.wts, 1/pe)
	for a := 0; a < k; a++ {
		c.rows = append(c.rows, a)
		c.labels = append(c.labels, c.cvec[a])
		c.wts = append(c.wts, 1)
	}
	c.bank.learn(&c.gd, c.rows, c.labels, c.wts)
	// DR cost vector with the updated regressor (only arm's changed).
	copy(c.dr, c.chat)
	c.dr[arm] = c.gd.clip(c.bank.predictOne(k + arm))
	c.dr[arm] += (cost - c.dr[arm]) / pe
	// Cover policies on pseudo-costs; their cached forward values are
	// untouched by the update above.
	shift := 1.0
	if c.modern {
		shift = 0
	}
	for a := range c.pmass {
		c.pmass[a] = 0
	}
	c.rows, c.labels, c.wts = c.rows[:0], c.labels[:0], c.wts[:0]
	for i := 0; i < c.n; i++ {
		if i > 0 {
			norm := 0.0
			for _, v := range c.pmass {
				norm += max(v, mu)
			}
			b := c.block(i)
			for a := 0; a < k; a++ {
				q := max(c.pmass[a], mu) / norm
				c.rows = append(c.rows, b+a)
				c.labels = append(c.labels, c.dr[a]+shift-c.psi*mu/q)
				c.wts = append(c.wts, 1)
			}
		}
		c.pmass[c.choice[i]] += 1 / float64(c.n)
	}
	c.bank.learn(&c.gd, c.rows, c.labels, c.wts)
	return nil
}

type coverState struct {
	Counter int64
	GD      gdState
	Bank    bankState
}

func (c *Cover) saveState(enc *gob.Encoder) error {
	return enc.Encode(coverState{c.counter, c.gd, c.bank.state()})
}

func (c *Cover) loadState(dec *gob.Decoder) error {
	s, err := decodeState(dec, func(s coverState) error { return s.check(c.gd.Eta) })
	if err != nil {
		return err
	}
	c.counter, c.gd = s.Counter, s.GD
	return c.bank.setState(s.Bank)
}
