package kernels

import "math"

// Single-precision elementary functions for the element-wise operators
// (Softmax, Sigmoid, Erf in GELU, Tanh): branch-light polynomial and
// rational approximations in float32, accurate to a few units in the last
// place, several times faster than converting to float64 for the math
// package. Each is checked against the math package over its whole range
// in mathf_test.go.

// expPoly returns e**r for |r| ≤ ln2/2 by Cephes' expf polynomial
// (single precision): 1 + r + r²·P(r), P of degree 5.
func expPoly(r float32) float32 {
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	return p*r*r + r + 1
}

// Expf returns e**x. It is accurate to 2 ulp over the range where the
// result is a normal float32 (Cephes' expf: a degree-5 polynomial on
// x − n·ln 2, |x − n·ln 2| ≤ ln2/2, then a scaling by 2**n). It returns +Inf
// above 88.72, 0 below −103.97 and NaN for NaN.
func Expf(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375 // ln 2 = ln2hi + ln2lo, ln2hi exact in 10 bits
		ln2lo = -2.12194440e-4
		round = 12582912 // 1.5·2**23: x + round − round rounds x to an integer
	)
	switch {
	case x != x:
		return x
	case x > 88.72284:
		return float32(math.Inf(1))
	case x < -103.97208:
		return 0
	}
	n := x*log2e + round - round
	r := x - n*ln2hi - n*ln2lo
	y := expPoly(r)
	// y·2**n in two steps, so that n up to 128 and down to −150 (results
	// near overflow and subnormal ones) need no special case.
	k := int32(n)
	k1 := k / 2
	k2 := k - k1
	return y * math.Float32frombits(uint32(k1+127)<<23) * math.Float32frombits(uint32(k2+127)<<23)
}

// Erff returns the error function of x: Eigen's and XLA's rational
// approximation x·P(x²)/Q(x²) on [−4, 4] (erf is ±1 in float32 beyond),
// absolute error below 5e-7.
func Erff(x float32) float32 {
	x = max(-4, min(4, x))
	x2 := x * x
	p := float32(-2.72614225801306e-10)
	p = p*x2 + 2.77068142495902e-08
	p = p*x2 - 2.10102402082508e-06
	p = p*x2 - 5.69250639462346e-05
	p = p*x2 - 7.34990630326855e-04
	p = p*x2 - 2.95459980854025e-03
	p = p*x2 - 1.60960333262415e-02
	q := float32(-1.45660718464996e-05)
	q = q*x2 - 2.13374055278905e-04
	q = q*x2 - 1.68282697438203e-03
	q = q*x2 - 7.37332916720468e-03
	q = q*x2 - 1.42647390514189e-02
	return x * p / q
}

// Tanhf returns the hyperbolic tangent of x: Eigen's rational
// approximation on [−7.9, 7.9] (tanh is ±1 in float32 beyond), absolute
// error below 5e-7; x itself for |x| < 4e-4.
func Tanhf(x float32) float32 {
	if x != x {
		return x
	}
	if x > -4e-4 && x < 4e-4 {
		return x
	}
	x = max(-7.90531110763549805, min(7.90531110763549805, x))
	x2 := x * x
	p := float32(-2.76076847742355e-16)
	p = p*x2 + 2.00018790482477e-13
	p = p*x2 - 8.60467152213735e-11
	p = p*x2 + 5.12229709037114e-08
	p = p*x2 + 1.48572235717979e-05
	p = p*x2 + 6.37261928875436e-04
	p = p*x2 + 4.89352455891786e-03
	q := float32(1.19825839466702e-06)
	q = q*x2 + 1.18534705686654e-04
	q = q*x2 + 2.26843463243900e-03
	q = q*x2 + 4.89352518554385e-03
	return x * p / q
}

// Sigmoidf returns 1/(1+e**−x).
func Sigmoidf(x float32) float32 { return 1 / (1 + Expf(-x)) }

// Activations over slices (dst and src of equal length; dst may be src),
// the loops of the fused element-wise chains nn recognises. They compute
// what the scalar functions above compose to; on amd64 with AVX2 and FMA,
// GELU, SiLU and ExpShifted run eight values at a time in assembly
// (mathf_amd64.s, same polynomials, fused multiply-adds), these Go loops
// doing the last n mod 8.

// geluGo is GELU in Go.
func geluGo(dst, src []float32) {
	src = src[:len(dst)]
	for i, x := range src {
		dst[i] = 0.5 * x * (1 + Erff(x*0.70710677))
	}
}

// GELUTanh sets dst[i] = x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
func GELUTanh(dst, src []float32) {
	src = src[:len(dst)]
	for i, x := range src {
		dst[i] = 0.5 * x * (1 + Tanhf(0.7978845608*(x+0.044715*x*x*x)))
	}
}

// siluGo is SiLU in Go.
func siluGo(dst, src []float32) {
	src = src[:len(dst)]
	for i, x := range src {
		dst[i] = x / (1 + Expf(-x))
	}
}

// expShiftedGo is ExpShifted in Go.
func expShiftedGo(dst, src []float32, shift float32) float64 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
		round = 12582912
	)
	src = src[:len(dst)]
	var s0, s1 float64
	for i, v := range src {
		x := v - shift
		n := x*log2e + round - round
		r := x - n*ln2hi - n*ln2lo
		y := expPoly(r) * math.Float32frombits(uint32(int32(n)+127)<<23)
		if !(x >= -87.33654) { // also NaN − NaN and −Inf inputs
			y = 0
		}
		dst[i] = y
		if i&1 == 0 {
			s0 += float64(y)
		} else {
			s1 += float64(y)
		}
	}
	return s0 + s1
}

// maxGo is Max in Go.
func maxGo(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	return m
}
