package bandit

import (
	"fmt"
	"math"
)

// probitModel is Bayesian probit regression with a full-covariance
// Gaussian posterior, learned online by assumed density filtering (exact
// moment matching of one probit likelihood term; the update of Graepel et
// al.'s AdPredictor, ICML 2010, with a full covariance): P(y = 1 | θ, x) =
// Φ(θᵀx), prior θ ~ N(0, diag(prior²)).
//
// For an observation y ∈ {−1, +1} with t = xᵀμ, s² = 1 + xᵀΣx, z = y·t/s,
// v = φ(z)/Φ(z), w = v·(v + z):
//
//	μ ← μ + (y·v/s)·Σx,   Σ ← Σ − (w/s²)·(Σx)(Σx)ᵀ,
//
// a rank-1 update in O(D²). The predictive probability of y = 1 is
// Φ(t/s), and θᵀx ~ N(t, xᵀΣx) under the posterior.
type probitModel struct {
	d     int
	mu    []float64
	sigma []float64 // d×d, row-major, symmetric
	sx    []float64 // scratch: Σx
}

func newProbitModel(prior []float64) *probitModel {
	d := len(prior)
	m := &probitModel{d: d, mu: make([]float64, d), sigma: make([]float64, d*d), sx: make([]float64, d)}
	for i, p := range prior {
		m.sigma[i*d+i] = p * p
	}
	return m
}

// mulSigma sets dst = Σx.
func (m *probitModel) mulSigma(dst, x []float64) {
	mulRows(dst, m.sigma, m.d, 0, x)
}

// normPDF and normCDF are φ and Φ.
func normPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// millsV returns φ(z)/Φ(z), stable for very negative z (where both
// underflow; the ratio tends to −z).
func millsV(z float64) float64 {
	if z < -30 {
		// Asymptotic expansion of the inverse Mills ratio.
		return -z / (1 - 1/(z*z) + 3/(z*z*z*z))
	}
	return normPDF(z) / normCDF(z)
}

// learn updates the posterior with the observation (x, y), y = ±1, with
// importance weight 1. It does nothing on a degenerate update (which
// finite input cannot produce).
func (m *probitModel) learn(x []float64, positive bool) error {
	y := -1.0
	if positive {
		y = 1
	}
	m.mulSigma(m.sx, x)
	q := dot64(x, m.sx)
	if !(q >= 0) || math.IsInf(q, 0) {
		return fmt.Errorf("bandit: probit model: xᵀΣx = %v", q)
	}
	s2 := 1 + q
	s := math.Sqrt(s2)
	t := dot64(x, m.mu)
	z := y * t / s
	v := millsV(z)
	w := v * (v + z)
	if math.IsNaN(v) || math.IsNaN(w) {
		return fmt.Errorf("bandit: probit model: update factors v=%v w=%v", v, w)
	}
	a := y * v / s
	for i, sxi := range m.sx {
		m.mu[i] += a * sxi
	}
	f := w / s2
	d := m.d
	for i := 0; i < d; i++ {
		fi := f * m.sx[i]
		row := m.sigma[i*d : (i+1)*d]
		for j := range row {
			row[j] -= fi * m.sx[j]
		}
	}
	return nil
}

// inflate adds q·prior_i² to the posterior variances (a Gaussian random
// walk on the weights between observations), which keeps the model able
// to follow a system under test that changes.
func (m *probitModel) inflate(q float64, prior []float64) {
	if q == 0 {
		return
	}
	for i, p := range prior {
		m.sigma[i*m.d+i] += q * p * p
	}
}

// cholesky factors the n×n symmetric matrix a (row-major) in place into its
// lower-triangular factor; it adds jitter to the diagonal when a is not
// numerically positive definite. It never fails on a finite matrix.
func cholesky(a []float64, n int) {
	jitter := 0.0
	orig := append([]float64(nil), a...)
	for attempt := 0; attempt < 20; attempt++ {
		ok := true
		copy(a, orig)
		for i := 0; i < n; i++ {
			a[i*n+i] += jitter
		}
		for j := 0; j < n && ok; j++ {
			s := a[j*n+j]
			for k := 0; k < j; k++ {
				s -= a[j*n+k] * a[j*n+k]
			}
			if !(s > 0) {
				ok = false
				break
			}
			l := math.Sqrt(s)
			a[j*n+j] = l
			for i := j + 1; i < n; i++ {
				t := a[i*n+j]
				for k := 0; k < j; k++ {
					t -= a[i*n+k] * a[j*n+k]
				}
				a[i*n+j] = t / l
			}
		}
		if ok {
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					a[i*n+j] = 0
				}
			}
			return
		}
		if jitter == 0 {
			jitter = 1e-10
			for i := 0; i < n; i++ {
				jitter = max(jitter, 1e-10*math.Abs(orig[i*n+i]))
			}
		} else {
			jitter *= 10
		}
	}
	// Give up on correlations: a diagonal factor of the variances.
	for i := range a {
		a[i] = 0
	}
	for i := 0; i < n; i++ {
		a[i*n+i] = math.Sqrt(max(orig[i*n+i], 0))
	}
}
