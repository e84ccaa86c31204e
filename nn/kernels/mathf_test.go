package kernels

import (
	"math"
	"testing"
)

// ulps returns the distance in units of the last place between two
// float32 values of the same sign.
func ulps(a, b float32) int64 {
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if d < 0 {
		d = -d
	}
	return d
}

// sweep calls f on every 64th float32 in [lo, hi] (every 4096th in -short
// mode): every exponent, dense mantissas.
func sweep(lo, hi float32, f func(x float32)) {
	step := uint32(64)
	if testing.Short() {
		step = 4096
	}
	for _, sign := range []float32{1, -1} {
		for b := uint32(0); b < 0x7f800000; b += step {
			x := sign * math.Float32frombits(b)
			if x >= lo && x <= hi {
				f(x)
			}
		}
	}
}

func TestExpf(t *testing.T) {
	var worst int64
	var at float32
	sweep(-87.3, 88.72, func(x float32) {
		want := float32(math.Exp(float64(x)))
		if u := ulps(Expf(x), want); u > worst {
			worst, at = u, x
		}
	})
	t.Logf("Expf: max error %d ulp (at %g)", worst, at)
	if worst > 2 {
		t.Errorf("Expf: max error %d ulp at %g, want ≤ 2", worst, at)
	}
	for _, c := range []struct{ x, want float32 }{
		{0, 1}, {89, float32(math.Inf(1))}, {-104, 0}, {float32(math.Inf(1)), float32(math.Inf(1))}, {float32(math.Inf(-1)), 0},
	} {
		if got := Expf(c.x); got != c.want {
			t.Errorf("Expf(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	// Subnormal results: within 1e-45 relative to the smallest normal.
	for x := float32(-103.9); x < -87.3; x += 0.01 {
		want := math.Exp(float64(x))
		if d := math.Abs(float64(Expf(x)) - want); d > 2e-45 {
			t.Fatalf("Expf(%g) = %g, want %g", x, Expf(x), want)
		}
	}
	if y := Expf(float32(math.NaN())); y == y {
		t.Errorf("Expf(NaN) = %g", y)
	}
}

func TestErffTanhf(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(float32) float32
		ref  func(float64) float64
	}{
		{"Erff", Erff, math.Erf},
		{"Tanhf", Tanhf, math.Tanh},
		{"Sigmoidf", Sigmoidf, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
	} {
		worst, at := 0.0, float32(0)
		sweep(-1e30, 1e30, func(x float32) {
			if d := math.Abs(float64(c.f(x)) - c.ref(float64(x))); d > worst {
				worst, at = d, x
			}
		})
		t.Logf("%s: max absolute error %.3g (at %g)", c.name, worst, at)
		if worst > 5e-7 {
			t.Errorf("%s: max absolute error %.3g at %g, want ≤ 5e-7", c.name, worst, at)
		}
		for _, x := range []float32{0, 1e-30, -1e-30} {
			if got, want := c.f(x), float32(c.ref(float64(x))); got != want {
				t.Errorf("%s(%g) = %g, want %g", c.name, x, got, want)
			}
		}
	}
}
