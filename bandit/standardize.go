package bandit

import (
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"
)

// Standardizer is an online context transform that lets every agent run
// with its defaults on raw, unnormalised features (a 512-d CNN trunk has
// row norms around 50, and some of its units are constant): each input
// value is standardised with the running mean and variance of the contexts
// observed so far (Welford's algorithm), and optionally the standardised
// values are mapped to Proj dimensions by a fixed Gaussian random
// projection (Johnson–Lindenstrauss; the matrix is drawn from the seed, so
// it is not part of the saved state) whose outputs are standardised again.
// The last Keep input values (e.g. a grey-box block: the system under
// test's own answer) are standardised but not projected, so a few very
// informative values are not diluted among hundreds of others.
//
// Outputs are clipped to ±Clip standard deviations. An input value whose
// variance is still zero (a dead unit, or fewer than two observations)
// maps to 0.
//
// Usage: Observe every context once when it is first seen (before the
// decision), then Transform it for the decision and again, unchanged, for
// the update: Transform does not change the statistics, so both calls give
// the same vector.
type Standardizer struct {
	in, proj, keep int
	clip           float64
	seed           uint64

	n        float64 // observations
	mean, m2 []float64
	r        []float64 // proj × (in − keep), row-major
	pmean    []float64 // second stage: running stats of the projections
	pm2      []float64

	z  []float64 // standardised input
	pz []float64 // projections
}

// StandardizerConfig configures NewStandardizer.
type StandardizerConfig struct {
	// Proj is the number of random projections of the first In − Keep
	// standardised values; 0 keeps them all (no projection).
	Proj int
	// Keep is the number of trailing input values that are standardised
	// but never projected.
	Keep int
	// Clip bounds the magnitude of the outputs (standard deviations); 0
	// means 5.
	Clip float64
}

// NewStandardizer returns a standardizer for contexts of dimension in, with
// the projection matrix (if any) drawn from seed.
func NewStandardizer(in int, cfg StandardizerConfig, seed uint64) (*Standardizer, error) {
	if in < 1 || cfg.Keep < 0 || cfg.Keep > in || cfg.Proj < 0 || cfg.Proj > 1<<16 || math.IsNaN(cfg.Clip) || cfg.Clip < 0 {
		return nil, fmt.Errorf("bandit: standardizer needs dim >= 1, 0 <= keep <= dim, 0 <= proj <= 65536, clip >= 0; got dim=%d keep=%d proj=%d clip=%v",
			in, cfg.Keep, cfg.Proj, cfg.Clip)
	}
	if cfg.Proj > 0 && cfg.Keep == in {
		return nil, fmt.Errorf("bandit: standardizer: proj=%d but every one of the %d values is kept unprojected", cfg.Proj, in)
	}
	s := &Standardizer{in: in, proj: cfg.Proj, keep: cfg.Keep, clip: cfg.Clip, seed: seed}
	if s.clip == 0 {
		s.clip = 5
	}
	s.mean = make([]float64, in)
	s.m2 = make([]float64, in)
	s.z = make([]float64, in)
	if s.proj > 0 {
		m := in - s.keep
		if int64(s.proj)*int64(m) > 1<<26 {
			return nil, fmt.Errorf("bandit: standardizer projection %d×%d is too large", s.proj, m)
		}
		rng := rand.New(rand.NewPCG(seed, 0x70726f6a)) // "proj"
		s.r = make([]float64, s.proj*m)
		sc := 1 / math.Sqrt(float64(m))
		for i := range s.r {
			s.r[i] = rng.NormFloat64() * sc
		}
		s.pmean = make([]float64, s.proj)
		s.pm2 = make([]float64, s.proj)
		s.pz = make([]float64, s.proj)
	}
	return s, nil
}

// InDim returns the input dimension.
func (s *Standardizer) InDim() int { return s.in }

// Dim returns the output dimension: Proj + Keep with a projection, else
// the input dimension.
func (s *Standardizer) Dim() int {
	if s.proj > 0 {
		return s.proj + s.keep
	}
	return s.in
}

// Count returns the number of contexts observed.
func (s *Standardizer) Count() int { return int(s.n) }

// standardize fills s.z from x with the current statistics.
func (s *Standardizer) standardize(x []float32) {
	for i, v := range x {
		s.z[i] = scaled(float64(v), s.mean[i], s.m2[i], s.n, s.clip)
	}
}

// scaled returns (v − mean)/sd clipped to ±clip, 0 while the variance is 0.
func scaled(v, mean, m2, n, clip float64) float64 {
	if n < 2 || !(m2 > 0) {
		return 0
	}
	sd := math.Sqrt(m2 / (n - 1))
	if sd < 1e-12*(1+math.Abs(mean)) {
		return 0
	}
	return min(max((v-mean)/sd, -clip), clip)
}

// project fills s.pz with the projections of s.z's first in − keep values.
func (s *Standardizer) project() {
	m := s.in - s.keep
	mulRows(s.pz[:s.proj], s.r, m, 0, s.z[:m])
}

// Observe adds x to the running statistics. It fails, changing nothing, on
// a context of the wrong dimension or with a non-finite value.
func (s *Standardizer) Observe(x []float32) error {
	if err := checkContext(x, s.in); err != nil {
		return err
	}
	s.n++
	for i, v := range x {
		d := float64(v) - s.mean[i]
		s.mean[i] += d / s.n
		s.m2[i] += d * (float64(v) - s.mean[i])
	}
	if s.proj > 0 {
		s.standardize(x)
		s.project()
		for j, v := range s.pz {
			d := v - s.pmean[j]
			s.pmean[j] += d / s.n
			s.pm2[j] += d * (v - s.pmean[j])
		}
	}
	return nil
}

// Transform writes the transformed context of x into dst (len Dim()) and
// returns dst. It fails on a context of the wrong dimension or with a
// non-finite value.
func (s *Standardizer) Transform(dst []float32, x []float32) ([]float32, error) {
	if err := checkContext(x, s.in); err != nil {
		return nil, err
	}
	if len(dst) != s.Dim() {
		return nil, fmt.Errorf("bandit: standardizer output has %d values, want %d", len(dst), s.Dim())
	}
	s.standardize(x)
	if s.proj == 0 {
		for i, v := range s.z {
			dst[i] = float32(v)
		}
		return dst, nil
	}
	s.project()
	for j, v := range s.pz {
		dst[j] = float32(scaled(v, s.pmean[j], s.pm2[j], s.n, s.clip))
	}
	for i := 0; i < s.keep; i++ {
		dst[s.proj+i] = float32(s.z[s.in-s.keep+i])
	}
	return dst, nil
}

type standardizerState struct {
	N                    float64
	Mean, M2, PMean, PM2 []float64
	In, Proj, Keep       int
	Clip                 float64
	Seed                 uint64
}

func (s *Standardizer) saveState(enc *gob.Encoder) error {
	return enc.Encode(standardizerState{s.n, s.mean, s.m2, s.pmean, s.pm2, s.in, s.proj, s.keep, s.clip, s.seed})
}

func (s *Standardizer) loadState(dec *gob.Decoder) error {
	var st standardizerState
	if err := dec.Decode(&st); err != nil {
		return err
	}
	if st.In != s.in || st.Proj != s.proj || st.Keep != s.keep || st.Clip != s.clip || st.Seed != s.seed {
		return fmt.Errorf("standardizer state is for dim=%d proj=%d keep=%d clip=%v seed=%d, want dim=%d proj=%d keep=%d clip=%v seed=%d",
			st.In, st.Proj, st.Keep, st.Clip, st.Seed, s.in, s.proj, s.keep, s.clip, s.seed)
	}
	if len(st.Mean) != s.in || len(st.M2) != s.in || len(st.PMean) != s.proj || len(st.PM2) != s.proj || !(st.N >= 0) {
		return fmt.Errorf("standardizer state has wrong sizes")
	}
	if err := st.check(); err != nil {
		return err
	}
	s.n = st.N
	copy(s.mean, st.Mean)
	copy(s.m2, st.M2)
	copy(s.pmean, st.PMean)
	copy(s.pm2, st.PM2)
	return nil
}

// standardized is a flat policy whose contexts a Standardizer transforms
// first (NewPolicy with the standardize option; an Agent shares one
// Standardizer among its levels instead). Distribution observes the
// context, Learn only transforms it.
type standardized struct {
	pre *Standardizer
	p   learner
}

// Arms implements Policy.
func (s *standardized) Arms() int { return s.p.Arms() }

// Distribution implements Policy.
func (s *standardized) Distribution(ctx []float32) ([]float64, error) {
	if err := s.pre.Observe(ctx); err != nil {
		return nil, err
	}
	z, err := s.pre.Transform(make([]float32, s.pre.Dim()), ctx)
	if err != nil {
		return nil, err
	}
	return s.p.Distribution(z)
}

// Learn implements Policy.
func (s *standardized) Learn(ctx []float32, arm int, prob, cost float64) error {
	z, err := s.pre.Transform(make([]float32, s.pre.Dim()), ctx)
	if err != nil {
		return err
	}
	return s.p.Learn(z, arm, prob, cost)
}

func (s *standardized) saveState(enc *gob.Encoder) error {
	if err := s.pre.saveState(enc); err != nil {
		return err
	}
	return s.p.saveState(enc)
}

func (s *standardized) loadState(dec *gob.Decoder) error {
	if err := s.pre.loadState(dec); err != nil {
		return err
	}
	return s.p.loadState(dec)
}
