package bandit

import (
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"
)

// linPolicy is LinUCB (Li et al. 2010) or linear Thompson sampling
// (Agrawal & Goyal 2013) on costs: per arm a ridge regression
// A_a = λI + Σ x xᵀ, b_a = Σ c x, θ_a = A_a⁻¹ b_a over the context plus a
// constant feature, with A_a⁻¹ kept by Sherman–Morrison updates (allocated
// on an arm's first update).
//
// LinUCB plays argmin θ_aᵀx − α·R·√(xᵀA_a⁻¹x) (lower confidence bound on
// the cost; ties to the first arm), so its distribution is one-hot; R is
// the width of the range of the costs learned so far (1 until two differ),
// which makes α independent of the cost unit (the paper's parameter costs
// go up to 10⁴, its main costs are 0/1).
// Linear TS draws c̃_a ~ N(θ_aᵀx, v²R²·xᵀA_a⁻¹x) — for one context this is
// exactly the distribution of θ̃_aᵀx with θ̃_a ~ N(θ_a, v²R²A_a⁻¹), without a
// D×D Cholesky factorisation — and returns the frequencies of the argmin
// over Samples draws from its internal generator, so the probability the
// caller logs is the probability with which the arm is actually played.
// Both ignore the logged probability (they are on-policy learners).
type linPolicy struct {
	ts      bool
	k, dim  int
	lambda  float64
	alpha   float64
	v       float64
	samples int
	// range of the logged costs: the width α·sd (LinUCB) and the draw
	// scale v·sd (LinTS) are multiplied by it, so that α and v do not
	// depend on the cost unit (0/1 main costs, parameter costs up to 10⁴)
	nLearn   int64
	cLo, cHi float64
	ainv     [][]float64 // per arm, (D+1)², nil until the first update
	bvec     [][]float64
	theta    [][]float64
	pcg      *rand.PCG
	rng      *rand.Rand

	xa, tmp []float64
	mean    []float64
	sd      []float64
}

func newLinPolicy(ts bool, k, dim int, cfg Config, seed uint64) *linPolicy {
	l := &linPolicy{ts: ts, k: k, dim: dim, lambda: cfg.Lambda, alpha: cfg.Alpha, v: cfg.V, samples: cfg.Samples}
	l.ainv = make([][]float64, k)
	l.bvec = make([][]float64, k)
	l.theta = make([][]float64, k)
	l.pcg = rand.NewPCG(seed, 0x6c696e)
	l.rng = rand.New(l.pcg)
	l.xa = make([]float64, dim+1)
	l.tmp = make([]float64, dim+1)
	l.mean = make([]float64, k)
	l.sd = make([]float64, k)
	return l
}

// Arms implements Policy.
func (l *linPolicy) Arms() int { return l.k }

// scale returns the width of the range of logged costs, 1 until two
// different costs have been seen.
func (l *linPolicy) scale() float64 {
	if r := l.cHi - l.cLo; r > 0 {
		return r
	}
	return 1
}

func (l *linPolicy) load(ctx []float32) {
	for i, v := range ctx {
		l.xa[i] = float64(v)
	}
	l.xa[l.dim] = 1
}

// quad returns xᵀA_a⁻¹x and leaves A_a⁻¹x in l.tmp.
func (l *linPolicy) quad(a int) float64 {
	n := l.dim + 1
	ai := l.ainv[a]
	if ai == nil {
		s := 0.0
		for i, v := range l.xa {
			l.tmp[i] = v / l.lambda
			s += v * v / l.lambda
		}
		return s
	}
	s := 0.0
	for i := 0; i < n; i++ {
		row := ai[i*n : (i+1)*n]
		t := 0.0
		for j, v := range row {
			t += v * l.xa[j]
		}
		l.tmp[i] = t
		s += t * l.xa[i]
	}
	return s
}

// Distribution implements Policy.
func (l *linPolicy) Distribution(ctx []float32) ([]float64, error) {
	if err := checkContext(ctx, l.dim); err != nil {
		return nil, err
	}
	l.load(ctx)
	for a := 0; a < l.k; a++ {
		m := 0.0
		if th := l.theta[a]; th != nil {
			for i, v := range th {
				m += v * l.xa[i]
			}
		}
		l.mean[a] = m
		l.sd[a] = math.Sqrt(max(l.quad(a), 0)) * l.scale()
	}
	p := make([]float64, l.k)
	if !l.ts {
		best := 0
		for a := 1; a < l.k; a++ {
			if l.mean[a]-l.alpha*l.sd[a] < l.mean[best]-l.alpha*l.sd[best] {
				best = a
			}
		}
		p[best] = 1
		return checkDist(p)
	}
	for s := 0; s < l.samples; s++ {
		best, bv := 0, math.Inf(1)
		for a := 0; a < l.k; a++ {
			if c := l.mean[a] + l.v*l.sd[a]*l.rng.NormFloat64(); c < bv {
				best, bv = a, c
			}
		}
		p[best]++
	}
	for a := range p {
		p[a] /= float64(l.samples)
	}
	return checkDist(p)
}

// Learn implements Policy.
func (l *linPolicy) Learn(ctx []float32, arm int, prob, cost float64) error {
	if err := checkLearn(ctx, l.dim, l.k, arm, prob, cost); err != nil {
		return err
	}
	l.load(ctx)
	if l.nLearn == 0 {
		l.cLo, l.cHi = cost, cost
	}
	l.nLearn++
	l.cLo, l.cHi = min(l.cLo, cost), max(l.cHi, cost)
	n := l.dim + 1
	if l.ainv[arm] == nil {
		ai := make([]float64, n*n)
		for i := 0; i < n; i++ {
			ai[i*n+i] = 1 / l.lambda
		}
		l.ainv[arm] = ai
		l.bvec[arm] = make([]float64, n)
		l.theta[arm] = make([]float64, n)
	}
	q := l.quad(arm) // tmp = A⁻¹x (A⁻¹ symmetric)
	ai := l.ainv[arm]
	f := 1 / (1 + q)
	for i := 0; i < n; i++ {
		ti := l.tmp[i] * f
		row := ai[i*n : (i+1)*n]
		for j := range row {
			row[j] -= ti * l.tmp[j]
		}
	}
	b := l.bvec[arm]
	for i, v := range l.xa {
		b[i] += cost * v
	}
	th := l.theta[arm]
	for i := 0; i < n; i++ {
		row := ai[i*n : (i+1)*n]
		t := 0.0
		for j, v := range row {
			t += v * b[j]
		}
		th[i] = t
	}
	return nil
}

type linState struct {
	Ainv, B, Theta [][]float64
	RNG            []byte
	// Learn calls and the range of logged costs.
	N        int64
	CLo, CHi float64
}

func (l *linPolicy) saveState(enc *gob.Encoder) error {
	rng, err := l.pcg.MarshalBinary()
	if err != nil {
		return err
	}
	return enc.Encode(linState{l.ainv, l.bvec, l.theta, rng, l.nLearn, l.cLo, l.cHi})
}

func (l *linPolicy) loadState(dec *gob.Decoder) error {
	s, err := decodeState(dec, linState.check)
	if err != nil {
		return err
	}
	n := l.dim + 1
	if len(s.Ainv) != l.k || len(s.B) != l.k || len(s.Theta) != l.k {
		return fmt.Errorf("linear state has %d arms, want %d", len(s.Ainv), l.k)
	}
	for a := 0; a < l.k; a++ {
		if len(s.Ainv[a]) == 0 {
			l.ainv[a], l.bvec[a], l.theta[a] = nil, nil, nil
			continue
		}
		if len(s.Ainv[a]) != n*n || len(s.B[a]) != n || len(s.Theta[a]) != n {
			return fmt.Errorf("linear state arm %d has wrong sizes for dimension %d", a, l.dim)
		}
		l.ainv[a], l.bvec[a], l.theta[a] = s.Ainv[a], s.B[a], s.Theta[a]
	}
	l.nLearn, l.cLo, l.cHi = s.N, s.CLo, s.CHi
	return l.pcg.UnmarshalBinary(s.RNG)
}
