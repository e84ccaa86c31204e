//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/amt-dev/amt/nn/internal/shapes"
)

// specials are the values every element-wise test includes.
var specials = []float32{
	float32(math.Inf(-1)), -1e30, -200, -100, -88.7, -20, -9.5, -1.5, -1, -0.625, -0.5, -1e-3, -1e-30,
	float32(math.Copysign(0, -1)), 0, 1e-40, 1e-30, 1e-3, 0.3, 0.5, 0.625, 0.7071, 1, 1.5, 2, 3, 9.5, 20,
	88, 88.7, 100, 1e30, float32(math.Inf(1)), float32(math.NaN()),
}

// unaryRefs are nn's element-wise functions (nn/build.go), in float64
// where nn computes in float64.
var unaryRefs = []struct {
	op       UnaryOp
	alpha    float32
	beta     float32
	f        func(x, alpha, beta float32) float32
	tol      float64 // relative, with an absolute floor of tol·1e-30
	posOnly  bool    // only x > 0 (Log and Sqrt are NaN elsewhere on both sides)
	exactNaN bool
}{
	{op: UnaryCopy, f: func(x, _, _ float32) float32 { return x }},
	{op: UnaryRelu, f: func(x, _, _ float32) float32 { return max(x, 0) }},
	{op: UnaryLeakyRelu, alpha: 0.01, f: func(x, a, _ float32) float32 {
		if x < 0 {
			return a * x
		}
		return x
	}},
	{op: UnaryClip, alpha: -0.5, beta: 6, f: func(x, lo, hi float32) float32 {
		if x < lo {
			x = lo
		}
		if x > hi {
			x = hi
		}
		return x
	}},
	{op: UnarySigmoid, tol: 1e-6, f: func(x, _, _ float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }},
	{op: UnaryTanh, tol: 1e-6, f: func(x, _, _ float32) float32 { return float32(math.Tanh(float64(x))) }},
	{op: UnaryExp, tol: 1e-6, f: func(x, _, _ float32) float32 { return float32(math.Exp(float64(x))) }},
	{op: UnaryLog, tol: 1e-6, f: func(x, _, _ float32) float32 { return float32(math.Log(float64(x))) }},
	{op: UnarySqrt, f: func(x, _, _ float32) float32 { return float32(math.Sqrt(float64(x))) }},
	{op: UnaryNeg, f: func(x, _, _ float32) float32 { return -x }},
	{op: UnaryAbs, f: func(x, _, _ float32) float32 { return float32(math.Abs(float64(x))) }},
	{op: UnaryFloor, f: func(x, _, _ float32) float32 { return float32(math.Floor(float64(x))) }},
	{op: UnaryCeil, f: func(x, _, _ float32) float32 { return float32(math.Ceil(float64(x))) }},
	{op: UnaryReciprocal, f: func(x, _, _ float32) float32 { return 1 / x }},
	{op: UnaryElu, alpha: 1.5, tol: 1e-6, f: func(x, a, _ float32) float32 {
		if x < 0 {
			return a * float32(math.Expm1(float64(x)))
		}
		return x
	}},
	{op: UnaryHardSigmoid, alpha: 0.2, beta: 0.5, tol: 1e-7, f: func(x, a, b float32) float32 { return max(0, min(1, a*x+b)) }},
	{op: UnaryAffine, alpha: 0.5, beta: -3, tol: 1e-7, f: func(x, a, b float32) float32 { return a*x + b }},
}

func TestUnary(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(4, 1))
		x := append(slices.Clone(specials), randFloats(r, 1000)...)
		for i := 0; i < 300; i++ { // a wider range for the transcendental functions
			x = append(x, float32(r.NormFloat64()*20))
		}
		xb := upload(t, d, x)
		out := alloc(t, d, len(x))
		for _, c := range unaryRefs {
			want := make([]float32, len(x))
			for i, v := range x {
				want[i] = c.f(v, c.alpha, c.beta)
			}
			must(t, d.Unary(c.op, out, xb, c.alpha, c.beta))
			got := download(t, d, out, len(x))
			for i := range got {
				g, w := float64(got[i]), float64(want[i])
				if math.IsNaN(g) && math.IsNaN(w) || g == w || math.Abs(g-w) <= c.tol*math.Abs(w)+1e-37 {
					continue
				}
				t.Errorf("op %d: f(%g) = %g, want %g", c.op, x[i], g, w)
			}
		}
		must(t, d.Unary(UnaryNeg, xb, xb, 0, 0)) // in place
		got := download(t, d, xb, len(x))
		for i := range x {
			if got[i] != -x[i] && !math.IsNaN(float64(x[i])) {
				t.Fatalf("in-place Neg: [%d] = %g, want %g", i, got[i], -x[i])
			}
		}
	})
}

func TestChannelAffine(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(4, 2))
		n, c, inner := 3, 5, 7
		x, scale, shift := randFloats(r, n*c*inner), randFloats(r, c), randFloats(r, c)
		want := make([]float32, len(x))
		for i, v := range x {
			ch := i / inner % c
			want[i] = v*scale[ch] + shift[ch]
		}
		out := alloc(t, d, len(x))
		must(t, d.ChannelAffine(out, upload(t, d, x), upload(t, d, scale), upload(t, d, shift), c, inner))
		closeTo(t, "ChannelAffine", download(t, d, out, len(x)), want, 1e-7)
		if err := d.ChannelAffine(out, upload(t, d, x[1:]), upload(t, d, scale), upload(t, d, shift), c, inner); err == nil {
			t.Error("ChannelAffine of a partial channel: no error")
		}
	})
}

// refBinary is numpy broadcasting written out: every output index mapped
// back to each operand.
func refBinary(f func(a, b float32) float32, a []float32, as []int, b []float32, bs []int) ([]float32, []int) {
	os, err := shapes.Broadcast(as, bs)
	if err != nil {
		panic(err)
	}
	n := 1
	for _, v := range os {
		n *= v
	}
	out := make([]float32, n)
	index := func(s []int, idx []int) int {
		off, k := 0, 0
		for i := range s {
			c := idx[len(idx)-len(s)+i]
			if s[i] == 1 {
				c = 0
			}
			off = off*s[i] + c
			k++
		}
		return off
	}
	idx := make([]int, len(os))
	for i := range out {
		rem := i
		for k := len(os) - 1; k >= 0; k-- {
			idx[k] = rem % os[k]
			rem /= os[k]
		}
		out[i] = f(a[index(as, idx)], b[index(bs, idx)])
	}
	return out, os
}

func TestBinary(t *testing.T) {
	ops := []struct {
		op  BinaryOp
		f   func(a, b float32) float32
		tol float64
	}{
		{BinaryAdd, func(a, b float32) float32 { return a + b }, 0},
		{BinarySub, func(a, b float32) float32 { return a - b }, 0},
		{BinaryMul, func(a, b float32) float32 { return a * b }, 0},
		{BinaryDiv, func(a, b float32) float32 { return a / b }, 0},
		{BinaryPow, func(a, b float32) float32 { return float32(math.Pow(float64(a), float64(b))) }, 1e-5},
	}
	shapes := [][2][]int{
		{{2, 3, 4}, {2, 3, 4}},
		{{2, 3, 4}, {1}},
		{{}, {5}},
		{{4, 16, 5, 5}, {1, 16, 1, 1}}, // a per-channel constant
		{{3, 1}, {1, 6}},               // outer product
		{{2, 1, 3}, {4, 1}},
		{{2, 3, 1, 1, 4, 5, 6}, {1, 1, 1, 4, 5, 6}}, // rank 7, which collapses to 2
		{{1, 1, 7}, {3, 1, 1}},
	}
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(4, 3))
		for _, sh := range shapes {
			as, bs := sh[0], sh[1]
			na, nb := 1, 1
			for _, v := range as {
				na *= v
			}
			for _, v := range bs {
				nb *= v
			}
			a, b := randFloats(r, na), randFloats(r, nb)
			for i := range a {
				a[i] *= 3
			}
			ab, bb := upload(t, d, a), upload(t, d, b)
			for _, o := range ops {
				if o.op == BinaryPow { // positive bases and integer exponents for negative ones
					for i := range a {
						a[i] = float32(math.Abs(float64(a[i])))
					}
					if len(a) > 3 {
						a[0], a[1] = -2, 0
					}
					for i := range b {
						if i%3 == 0 {
							b[i] = float32(int(b[i] * 5))
						}
					}
					must(t, d.Write(ab, a))
					must(t, d.Write(bb, b))
				}
				want, os := refBinary(o.f, a, as, b, bs)
				out := alloc(t, d, len(want))
				must(t, d.Binary(o.op, out, ab, as, bb, bs))
				got := download(t, d, out, len(want))
				for i := range got {
					g, w := float64(got[i]), float64(want[i])
					if math.IsNaN(g) && math.IsNaN(w) || g == w || math.Abs(g-w) <= o.tol*math.Abs(w) {
						continue
					}
					t.Errorf("op %d %v %v → %v: [%d] = %g, want %g", o.op, as, bs, os, i, g, w)
				}
			}
		}
		x := alloc(t, d, 10)
		if err := d.Binary(BinaryAdd, x, x, []int{2, 5}, x, []int{3}); err == nil {
			t.Error("incompatible shapes: no error")
		}
		if err := d.Binary(BinaryAdd, x, x, []int{2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1}, x, []int{1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}); err == nil {
			t.Error("broadcast over 14 alternating axes: no error")
		}
	})
}

func TestCollapse(t *testing.T) {
	for _, c := range []struct {
		shape   []int
		strides [][]int
		want    []int
		wantSt  [][]int
	}{
		{[]int{2, 3, 4}, [][]int{{12, 4, 1}}, []int{24}, [][]int{{1}}},
		{[]int{4, 16, 5, 5}, [][]int{{400, 25, 5, 1}, {0, 1, 0, 0}}, []int{4, 16, 25}, [][]int{{400, 25, 1}, {0, 1, 0}}},
		{[]int{1, 1}, [][]int{{0, 0}}, []int{1}, [][]int{{0}}},
		{[]int{3, 1, 6}, [][]int{{1, 0, 0}, {0, 0, 1}}, []int{3, 6}, [][]int{{1, 0}, {0, 1}}},
	} {
		got, st := collapse(c.shape, c.strides...)
		if fmt.Sprint(got, st) != fmt.Sprint(c.want, c.wantSt) {
			t.Errorf("collapse(%v, %v) = %v %v, want %v %v", c.shape, c.strides, got, st, c.want, c.wantSt)
		}
	}
}
