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

// The vector loops use FMA where the Go loops round the product first,
// so they never leave a remainder to the Go loops: it goes through the
// vector loop too, padded to a whole vector (tail8). Each value is thus
// computed the same way wherever it sits in the slice, and an image's
// results do not depend on its position in a batch.

// tail8 runs the 8-wide vector loop f on the fewer than 8 values of src
// into dst (dst may be src), padded with pad.
func tail8(dst, src []float32, pad float32, f func(dst, src *float32, n int)) {
	var in, out [8]float32
	for i := copy(in[:], src); i < 8; i++ {
		in[i] = pad
	}
	f(&out[0], &in[0], 8)
	copy(dst, out[:len(dst)])
}

// ExpShifted sets dst[i] = e**(src[i] − shift) for src[i] ≤ shift (the
// shift being their maximum: softmax) and returns the sum of dst. Results
// below the smallest normal float32 are 0.
func ExpShifted(dst, src []float32, shift float32) float64 {
	n := len(dst)
	src = src[:n]
	if !mathfAVX2() {
		return expShiftedGo(dst, src, shift)
	}
	v, s := n&^7, 0.0
	if v > 0 {
		s = float64(expShiftedAVX2(&dst[0], &src[0], v, shift))
	}
	if v < n {
		// Padded with values whose exponential is 0.
		tail8(dst[v:], src[v:], shift-200, func(d, x *float32, n int) { s += float64(expShiftedAVX2(d, x, n, shift)) })
	}
	return s
}

// SiLU sets dst[i] = x·sigmoid(x) = x/(1 + e**−x), x = src[i] (dst may be
// src).
func SiLU(dst, src []float32) { vector8(dst, src, siluAVX2, siluGo) }

// GELU sets dst[i] = x/2·(1 + erf(x/√2)), x = src[i] (dst may be src).
func GELU(dst, src []float32) { vector8(dst, src, geluAVX2, geluGo) }

// vector8 runs the 8-wide vector loop f over src into dst, the remainder
// through tail8; or the Go loop g when the assembly sets are not in use.
func vector8(dst, src []float32, f func(dst, src *float32, n int), g func(dst, src []float32)) {
	n := len(dst)
	src = src[:n]
	if !mathfAVX2() {
		g(dst, src)
		return
	}
	v := n &^ 7
	if v > 0 {
		f(&dst[0], &src[0], v)
	}
	if v < n {
		tail8(dst[v:], src[v:], 0, f)
	}
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
