package bandit

import (
	"encoding/gob"
	"fmt"
	"math"
)

// Value ranges. Every part's state type has a check method here, called by
// its loadState after decoding and before anything is copied into the
// agent; ReadAgent's and LoadOrNew's errors wrap them. They stand together
// rather than in each agent's file so that what a state file may hold is
// stated in one place. A state that passes the checksum was written by amt,
// but a checksum only proves the bytes are the ones some amt wrote, not
// that they are sane (a bug, a hand-made file with a recomputed checksum),
// and a NaN weight or an infinite learning rate silently turns every later
// decision into the same arm. The ranges are the ones the learning code
// keeps: weights within ±1e20 and squared-gradient sums within [0, 3e38]
// (bank.go's numeric guards), counts non-negative, cost and label ranges
// finite with lo <= hi, the learning rate the configured one.

// decodeState decodes a part's state from dec and checks it, before the
// caller copies anything into the agent.
func decodeState[S any](dec *gob.Decoder, check func(S) error) (S, error) {
	var s S
	if err := dec.Decode(&s); err != nil {
		return s, err
	}
	return s, check(s)
}

// stateCheck records the first rule a loaded state breaks.
type stateCheck struct{ err error }

func (c *stateCheck) failf(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// within checks lo <= v <= hi (so NaN fails).
func (c *stateCheck) within(name string, v, lo, hi float64) {
	if !(v >= lo && v <= hi) {
		c.failf("%s = %v, want a number in [%g, %g]", name, v, lo, hi)
	}
}

func (c *stateCheck) all(name string, vs []float64, lo, hi float64) {
	for i, v := range vs {
		if !(v >= lo && v <= hi) {
			c.failf("%s[%d] = %v, want a number in [%g, %g]", name, i, v, lo, hi)
			return
		}
	}
}

func (c *stateCheck) all32(name string, vs []float32, lo, hi float64) {
	for i, v := range vs {
		if f := float64(v); !(f >= lo && f <= hi) {
			c.failf("%s[%d] = %v, want a number in [%g, %g]", name, i, v, lo, hi)
			return
		}
	}
}

func (c *stateCheck) count(name string, n int64) {
	if n < 0 {
		c.failf("%s = %d, want a count >= 0", name, n)
	}
}

// costRange checks a range of logged costs or labels: finite, lo <= hi.
func (c *stateCheck) costRange(name string, lo, hi float64) {
	if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		c.failf("%s range [%v, %v], want finite bounds with lo <= hi", name, lo, hi)
	}
}

const (
	maxWeight = 1e20 // bank.go: weights clamped to ±1e20
	maxAccum  = 3e38 // bank.go: squared-gradient sums capped at 3e38
	maxFloat  = math.MaxFloat64
)

// check: the learning rate must be the configuration's (eta), the
// normalisation accumulators finite and >= 0, the label range finite.
func (s gdState) check(c *stateCheck, eta float64) {
	if s.Eta != eta {
		c.failf("learning rate %v, the configuration's is %v", s.Eta, eta)
	}
	c.within("normalisation T", s.T, 0, maxFloat)
	c.within("normalisation S", s.S, 0, maxFloat)
	c.costRange("label", s.Lo, s.Hi)
}

// check: weights within ±1e20, accumulators and norms in [0, 3e38].
func (s bankState) check(c *stateCheck) {
	c.all32("weight U", s.U, -maxWeight, maxWeight)
	c.all32("weight V", s.V, -maxWeight, maxWeight)
	c.all32("bias VB", s.VB, -maxWeight, maxWeight)
	c.all32("gradient sum GU", s.GU, 0, maxAccum)
	c.all32("gradient sum GV", s.GV, 0, maxAccum)
	c.all32("norm NU", s.NU, 0, math.MaxFloat32)
	c.all32("norm NV", s.NV, 0, math.MaxFloat32)
}

func (s coverState) check(eta float64) error {
	var c stateCheck
	c.count("counter", s.Counter)
	s.GD.check(&c, eta)
	s.Bank.check(&c)
	return c.err
}

func (s csState) check(eta float64) error {
	var c stateCheck
	c.count("learn count", s.T)
	c.costRange("cost", s.CLo, s.CHi)
	s.GD.check(&c, eta)
	s.Bank.check(&c)
	return c.err
}

func (s linState) check() error {
	var c stateCheck
	c.count("learn count", s.N)
	c.costRange("cost", s.CLo, s.CHi)
	for a := range s.Ainv {
		c.all(fmt.Sprintf("arm %d inverse Gram matrix", a), s.Ainv[a], -maxFloat, maxFloat)
	}
	for a := range s.B {
		c.all(fmt.Sprintf("arm %d b", a), s.B[a], -maxFloat, maxFloat)
	}
	for a := range s.Theta {
		c.all(fmt.Sprintf("arm %d theta", a), s.Theta[a], -maxFloat, maxFloat)
	}
	return c.err
}

// check: counts >= 0 and adding up to the learn count; sums finite.
func (s ucb1State) check() error {
	var c stateCheck
	c.count("learn count", s.T)
	var n int64
	for a, v := range s.N {
		c.count(fmt.Sprintf("arm %d count", a), v)
		n += v
	}
	if c.err == nil && n != s.T {
		c.failf("arm counts add up to %d, the learn count is %d", n, s.T)
	}
	c.all("cost sum", s.Sum, -maxFloat, maxFloat)
	c.costRange("cost", s.CLo, s.CHi)
	return c.err
}

// check: the count a whole number >= 0, means finite, the sums of squares
// finite (rounding may leave one slightly negative, which reads as zero
// variance).
func (s standardizerState) check() error {
	var c stateCheck
	c.within("count", s.N, 0, 1<<53)
	if c.err == nil && s.N != math.Trunc(s.N) {
		c.failf("count %v, want a whole number", s.N)
	}
	c.all("mean", s.Mean, -maxFloat, maxFloat)
	c.all("sum of squares", s.M2, -maxFloat, maxFloat)
	c.all("projected mean", s.PMean, -maxFloat, maxFloat)
	c.all("projected sum of squares", s.PM2, -maxFloat, maxFloat)
	return c.err
}

// check: means and covariances finite, variances (the diagonals) >= 0.
func (s htsState) check() error {
	var c stateCheck
	for i := range s.Mu {
		c.all(fmt.Sprintf("model %d mean", i), s.Mu[i], -maxFloat, maxFloat)
	}
	for i, sg := range s.Sigma {
		c.all(fmt.Sprintf("model %d covariance", i), sg, -maxFloat, maxFloat)
		d := int(math.Sqrt(float64(len(sg))))
		for j := 0; j < d && d*d == len(sg); j++ {
			if sg[j*d+j] < 0 {
				c.failf("model %d variance %d = %v, want >= 0", i, j, sg[j*d+j])
				break
			}
		}
	}
	return c.err
}
