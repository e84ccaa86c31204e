package bandit

import (
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// A Policy gives a distribution over K arms for a context and learns from
// logged feedback (costs, not rewards).
//
// Distribution may change the policy's state (VW 8.x cover counts predict
// calls; Thompson-sampling policies draw from their internal generator), so
// calling it is part of the policy's history. Learn trusts the logged
// probability prob of the chosen arm; it need not be the probability the
// policy itself would give.
type Policy interface {
	// Arms returns K, the number of arms.
	Arms() int
	// Distribution returns probabilities over the K arms that sum to 1.
	// It fails on a context of the wrong dimension or containing NaN/Inf.
	Distribution(ctx []float32) ([]float64, error)
	// Learn updates the policy with the cost of arm (0-based), chosen with
	// probability prob. It fails on NaN/Inf context or cost, prob outside
	// (0, 1] and arm out of range, leaving the policy unchanged.
	Learn(ctx []float32, arm int, prob float64, cost float64) error
}

// ErrInput marks an error caused by invalid input (context, arm,
// probability or cost); test for it with errors.Is.
var ErrInput = errors.New("invalid bandit input")

// Input ranges. Values outside them cannot be learned from in float32
// without overflow, so they are rejected as invalid input.
const (
	// MaxAbsContext bounds the magnitude of context values.
	MaxAbsContext = 1e6
	// MaxAbsCost bounds the magnitude of costs.
	MaxAbsCost = 1e9
	// minProb is the smallest probability used for importance weights and
	// corrections; smaller logged probabilities (valid input) are treated
	// as minProb, bounding importance weights at 10⁶.
	minProb = 1e-6
)

// checkContext validates a context vector.
func checkContext(ctx []float32, dim int) error {
	if len(ctx) != dim {
		return fmt.Errorf("%w: context has %d values, want %d", ErrInput, len(ctx), dim)
	}
	for i, v := range ctx {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || math.Abs(float64(v)) > MaxAbsContext {
			return fmt.Errorf("%w: context[%d] = %v, want a finite number with magnitude <= %g", ErrInput, i, v, MaxAbsContext)
		}
	}
	return nil
}

// checkDist is the last check of every Distribution: a non-finite or
// non-normalised result (which valid input cannot produce) is an error,
// never returned to the caller.
func checkDist(p []float64) ([]float64, error) {
	sum := 0.0
	for a, v := range p {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return nil, fmt.Errorf("bandit: internal error: probability of arm %d is %v", a, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 {
		return nil, fmt.Errorf("bandit: internal error: probabilities sum to %v", sum)
	}
	return p, nil
}

// checkFeedback validates the arm, probability and cost of a Learn call.
func checkFeedback(k, arm int, prob, cost float64) error {
	if arm < 0 || arm >= k {
		return fmt.Errorf("%w: arm %d out of range [0, %d)", ErrInput, arm, k)
	}
	if math.IsNaN(prob) || prob <= 0 || prob > 1 {
		return fmt.Errorf("%w: probability %v, want 0 < p <= 1", ErrInput, prob)
	}
	if math.IsNaN(cost) || math.IsInf(cost, 0) || math.Abs(cost) > MaxAbsCost {
		return fmt.Errorf("%w: cost %v, want a finite number with magnitude <= %g", ErrInput, cost, MaxAbsCost)
	}
	return nil
}

// checkLearn validates all inputs of a Learn call.
func checkLearn(ctx []float32, dim, k, arm int, prob, cost float64) error {
	if err := checkFeedback(k, arm, prob, cost); err != nil {
		return err
	}
	return checkContext(ctx, dim)
}

// Sample draws an arm from the distribution p with the caller's generator.
// Entries are renormalised by their sum (as the original tool did before
// numpy's choice), so rounding error in p is harmless. Sample panics if p
// is empty or has no positive mass; distributions returned by a Policy
// always have positive mass.
func Sample(p []float64, rng *rand.Rand) int {
	sum := 0.0
	for _, v := range p {
		if v > 0 {
			sum += v
		}
	}
	if !(sum > 0) {
		panic("bandit.Sample: distribution has no positive mass")
	}
	u := rng.Float64() * sum
	last := -1
	for i, v := range p {
		if v <= 0 {
			continue
		}
		last = i
		u -= v
		if u < 0 {
			return i
		}
	}
	return last
}

// argmin returns the index of the smallest value, the first on ties.
func argmin(v []float32) int {
	best := 0
	for i := 1; i < len(v); i++ {
		if v[i] < v[best] {
			best = i
		}
	}
	return best
}

// uniform returns the uniform distribution over k arms.
func uniform(k int) []float64 {
	p := make([]float64, k)
	for i := range p {
		p[i] = 1 / float64(k)
	}
	return p
}

// Uniform is the uniform random policy; it does not learn.
type Uniform struct {
	k, dim int
}

// NewUniform returns the uniform policy over k arms for contexts of
// dimension dim.
func NewUniform(k, dim int) (*Uniform, error) {
	if k < 1 || dim < 0 {
		return nil, fmt.Errorf("bandit: uniform policy needs k >= 1 and dim >= 0, got k=%d dim=%d", k, dim)
	}
	return &Uniform{k: k, dim: dim}, nil
}

// Arms implements Policy.
func (u *Uniform) Arms() int { return u.k }

// Distribution implements Policy.
func (u *Uniform) Distribution(ctx []float32) ([]float64, error) {
	if err := checkContext(ctx, u.dim); err != nil {
		return nil, err
	}
	return uniform(u.k), nil
}

// Learn implements Policy; it validates its input and otherwise does nothing.
func (u *Uniform) Learn(ctx []float32, arm int, prob, cost float64) error {
	return checkLearn(ctx, u.dim, u.k, arm, prob, cost)
}

func (u *Uniform) saveState(*gob.Encoder) error { return nil }
func (u *Uniform) loadState(*gob.Decoder) error { return nil }
