package bandit

import (
	"encoding/gob"
	"fmt"
	"math"
)

// ucb1 is UCB1 (Auer, Cesa-Bianchi & Fischer 2002) on costs, a
// non-contextual baseline: it checks the context but does not use it, so
// comparing it with the contextual agents measures what the context is
// worth. It plays every arm once, in order, then the argmin over arms of
//
//	mean cost_a − α·range·√(2 ln t / n_a)
//
// with t the number of Learn calls, n_a the arm's and range the span of
// the costs logged so far (1 while they are all equal), so that α does not
// depend on the cost unit (the paper's main costs are 0/1, its parameter
// costs 0…10000); ties go to the first arm. Its distribution is one-hot,
// like LinUCB's, and it ignores the logged probability (an on-policy
// learner).
type ucb1 struct {
	k, dim int
	alpha  float64
	n      []int64
	sum    []float64
	t      int64
	// range of the logged costs (valid when t > 0)
	cLo, cHi float64
}

func newUCB1(k, dim int, cfg Config) *ucb1 {
	return &ucb1{k: k, dim: dim, alpha: cfg.Alpha, n: make([]int64, k), sum: make([]float64, k)}
}

// Arms implements Policy.
func (u *ucb1) Arms() int { return u.k }

// Distribution implements Policy.
func (u *ucb1) Distribution(ctx []float32) ([]float64, error) {
	if err := checkContext(ctx, u.dim); err != nil {
		return nil, err
	}
	p := make([]float64, u.k)
	p[u.choose()] = 1
	return checkDist(p)
}

func (u *ucb1) choose() int {
	for a, n := range u.n {
		if n == 0 {
			return a
		}
	}
	scale := u.cHi - u.cLo
	if !(scale > 0) {
		scale = 1
	}
	logT := math.Log(float64(u.t))
	best, bestV := 0, math.Inf(1)
	for a, n := range u.n {
		v := u.sum[a]/float64(n) - u.alpha*scale*math.Sqrt(2*logT/float64(n))
		if v < bestV {
			best, bestV = a, v
		}
	}
	return best
}

// Learn implements Policy.
func (u *ucb1) Learn(ctx []float32, arm int, prob, cost float64) error {
	if err := checkLearn(ctx, u.dim, u.k, arm, prob, cost); err != nil {
		return err
	}
	if u.t == 0 {
		u.cLo, u.cHi = cost, cost
	}
	u.cLo, u.cHi = min(u.cLo, cost), max(u.cHi, cost)
	u.t++
	u.n[arm]++
	u.sum[arm] += cost
	return nil
}

type ucb1State struct {
	T        int64
	N        []int64
	Sum      []float64
	CLo, CHi float64
}

func (u *ucb1) saveState(enc *gob.Encoder) error {
	return enc.Encode(ucb1State{u.t, u.n, u.sum, u.cLo, u.cHi})
}

func (u *ucb1) loadState(dec *gob.Decoder) error {
	var s ucb1State
	if err := dec.Decode(&s); err != nil {
		return err
	}
	if len(s.N) != u.k || len(s.Sum) != u.k {
		return fmt.Errorf("ucb1 state has %d arms, want %d", len(s.N), u.k)
	}
	if err := s.check(); err != nil {
		return err
	}
	u.t, u.n, u.sum, u.cLo, u.cHi = s.T, s.N, s.Sum, s.CLo, s.CHi
	return nil
}
