//go:build amd64 && !noasm

package kernels

// mathfAVX2 reports whether the AVX2+FMA loops of mathf_amd64.s are to
// run: whenever the kernel set in use is an assembly set (avx2 or avx512,
// both of which need AVX2 and FMA), so that AMT_KERNELS=generic (or
// Use("generic")) runs the portable Go loops here too.
func mathfAVX2() bool { return activeSet().isa != isaGeneric }

//go:noescape
func expShiftedAVX2(dst, src *float32, n int, shift float32) (sum float32)

//go:noescape
func siluAVX2(dst, src *float32, n int)

//go:noescape
func geluAVX2(dst, src *float32, n int)

// ExpShifted sets dst[i] = e**(src[i] − shift) for src[i] ≤ shift (the
// shift being their maximum: softmax) and returns the sum of dst. Results
// below the smallest normal float32 are 0.
func ExpShifted(dst, src []float32, shift float32) float64 {
	n := len(dst)
	src = src[:n]
	v := n &^ 7
	if !mathfAVX2() || v == 0 {
		return expShiftedGo(dst, src, shift)
	}
	s := float64(expShiftedAVX2(&dst[0], &src[0], v, shift))
	return s + expShiftedGo(dst[v:], src[v:], shift)
}

// SiLU sets dst[i] = x·sigmoid(x) = x/(1 + e**−x), x = src[i] (dst may be
// src).
func SiLU(dst, src []float32) {
	n := len(dst)
	src = src[:n]
	v := n &^ 7
	if mathfAVX2() && v > 0 {
		siluAVX2(&dst[0], &src[0], v)
	} else {
		v = 0
	}
	siluGo(dst[v:], src[v:])
}

// GELU sets dst[i] = x/2·(1 + erf(x/√2)), x = src[i] (dst may be src).
func GELU(dst, src []float32) {
	n := len(dst)
	src = src[:n]
	v := n &^ 7
	if mathfAVX2() && v > 0 {
		geluAVX2(&dst[0], &src[0], v)
	} else {
		v = 0
	}
	geluGo(dst[v:], src[v:])
}

//go:noescape
func maxAVX2(src *float32, n int) float32

//go:noescape
func scaleAVX2(dst *float32, n int, s float32)

// Max returns the largest value of x (NaN if one is NaN; −Inf for none).
func Max(x []float32) float32 {
	v := len(x) &^ 7
	if !mathfAVX2() || v == 0 {
		return maxGo(x)
	}
	m := maxAVX2(&x[0], v)
	if v < len(x) {
		m = max(m, maxGo(x[v:]))
	}
	return m
}

// Scale multiplies every value of x by s.
func Scale(x []float32, s float32) {
	v := len(x) &^ 7
	if mathfAVX2() && v > 0 {
		scaleAVX2(&x[0], v, s)
	} else {
		v = 0
	}
	for i := range x[v:] {
		x[v+i] *= s
	}
}
