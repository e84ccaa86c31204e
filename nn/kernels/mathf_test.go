package kernels

import (
	"math"
	"slices"
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

func TestActivationSlices(t *testing.T) { forEachSet(t, testActivationSlices) }

func testActivationSlices(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(dst, src []float32)
		ref  func(float64) float64
	}{
		{"GELU", GELU, func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }},
		{"GELUTanh", GELUTanh, func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))) }},
		{"SiLU", SiLU, func(x float64) float64 { return x / (1 + math.Exp(-x)) }},
	} {
		var src []float32
		for x := float32(-30); x <= 30; x += 0.0137 {
			src = append(src, x)
		}
		dst := make([]float32, len(src))
		c.f(dst, src)
		for i, x := range src {
			want := c.ref(float64(x))
			if d := math.Abs(float64(dst[i]) - want); d > 1e-6*(1+math.Abs(want)) {
				t.Fatalf("%s(%g) = %g, want %g", c.name, x, dst[i], want)
			}
		}
		c.f(src, src) // in place
		for i := range src {
			if src[i] != dst[i] {
				t.Fatalf("%s in place: element %d is %g, want %g", c.name, i, src[i], dst[i])
			}
		}
	}
}

func TestExpShifted(t *testing.T) { forEachSet(t, testExpShifted) }

func testExpShifted(t *testing.T) {
	src := []float32{0, -1, -0.5, -20, -87, -87.4, -100, float32(math.Inf(-1)), 3, 2.5}
	dst := make([]float32, len(src))
	sum := ExpShifted(dst, src, 3)
	var want float64
	for i, v := range src {
		e := math.Exp(float64(v) - 3)
		if float64(v)-3 < -87.33654 {
			e = 0
		}
		want += e
		if d := math.Abs(float64(dst[i]) - e); d > 2e-7*e {
			t.Errorf("element %d: e**(%g-3) = %g, want %g", i, v, dst[i], e)
		}
	}
	if math.Abs(sum-want) > 1e-6*want {
		t.Errorf("sum %g, want %g", sum, want)
	}
}

// TestActivationLengths checks every length up to 40 (the assembly's
// multiples of 8 and the Go loop's rest) against the Go loops, with every
// kernel set: the generic set runs exactly the Go loops.
func TestActivationLengths(t *testing.T) { forEachSet(t, testActivationLengths) }

func testActivationLengths(t *testing.T) {
	src := make([]float32, 40)
	for i := range src {
		src[i] = float32(i%13)*0.9 - 6
	}
	tol := 1e-6
	if activeSet().isa == isaGeneric {
		tol = 0
	}
	for n := 0; n <= len(src); n++ {
		for _, c := range []struct {
			name   string
			f, ref func(dst, src []float32)
		}{{"GELU", GELU, geluGo}, {"SiLU", SiLU, siluGo}, {"ExpShifted", func(d, s []float32) { ExpShifted(d, s, 6) }, func(d, s []float32) { expShiftedGo(d, s, 6) }}} {
			got, want := make([]float32, n+1), make([]float32, n+1)
			got[n], want[n] = 7, 7 // past the end: untouched
			c.f(got[:n], src[:n])
			c.ref(want[:n], src[:n])
			for i := range got {
				if math.Abs(float64(got[i]-want[i])) > tol*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%s, n=%d: element %d is %g, want %g", c.name, n, i, got[i], want[i])
				}
			}
		}
		if s, w := ExpShifted(make([]float32, n), src[:n], 6), expShiftedGo(make([]float32, n), src[:n], 6); math.Abs(s-w) > 1e-5*(1+w) {
			t.Fatalf("ExpShifted, n=%d: sum %g, want %g", n, s, w)
		}
	}
}

func TestMaxScale(t *testing.T) { forEachSet(t, testMaxScale) }

func testMaxScale(t *testing.T) {
	for n := 0; n <= 40; n++ {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32((i*7)%11) - 5
		}
		want := maxGo(x)
		if got := Max(x); got != want {
			t.Fatalf("n=%d: Max = %g, want %g", n, got, want)
		}
		for at := 0; at < n; at++ {
			y := slices.Clone(x)
			y[at] = float32(math.NaN())
			if got := Max(y); got == got {
				t.Fatalf("n=%d, NaN at %d: Max = %g, want NaN", n, at, got)
			}
		}
		y := slices.Clone(x)
		Scale(y, -0.5)
		for i := range y {
			if y[i] != x[i]*-0.5 {
				t.Fatalf("n=%d: Scale element %d is %g, want %g", n, i, y[i], x[i]*-0.5)
			}
		}
	}
	if m := Max(nil); !math.IsInf(float64(m), -1) {
		t.Errorf("Max(nil) = %g", m)
	}
}

// TestActivationPositions checks that each value of GELU, SiLU and
// ExpShifted is computed the same way, bit for bit, wherever it sits in
// the slice (in a whole vector or in the remainder): an image's results
// must not depend on its position in a batch.
func TestActivationPositions(t *testing.T) { forEachSet(t, testActivationPositions) }

func testActivationPositions(t *testing.T) {
	src := make([]float32, 45)
	for i := range src {
		src[i] = float32(i%17)*0.7 - 6
	}
	for _, c := range []struct {
		name string
		f    func(dst, src []float32)
	}{{"GELU", GELU}, {"SiLU", SiLU}, {"ExpShifted", func(d, s []float32) { ExpShifted(d, s, 6) }}} {
		all := make([]float32, len(src))
		c.f(all, src)
		for i := range src {
			for _, off := range []int{0, 3} { // alone, and as the 4th of a slice
				lo := max(0, i-off)
				part := make([]float32, i-lo+1)
				c.f(part, src[lo:i+1])
				if math.Float32bits(part[i-lo]) != math.Float32bits(all[i]) {
					t.Fatalf("%s: value %d is %v in a slice of %d, %v at position %d of %d", c.name, i, all[i], len(src), part[i-lo], i-lo, len(part))
				}
			}
		}
	}
}
