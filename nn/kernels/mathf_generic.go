//go:build !amd64 || noasm

package kernels

// ExpShifted sets dst[i] = e**(src[i] − shift) for src[i] ≤ shift (the
// shift being their maximum: softmax) and returns the sum of dst. Results
// below the smallest normal float32 are 0.
func ExpShifted(dst, src []float32, shift float32) float64 { return expShiftedGo(dst, src, shift) }

// SiLU sets dst[i] = x·sigmoid(x) = x/(1 + e**−x), x = src[i] (dst may be
// src).
func SiLU(dst, src []float32) { siluGo(dst, src) }

// GELU sets dst[i] = x/2·(1 + erf(x/√2)), x = src[i] (dst may be src).
func GELU(dst, src []float32) { geluGo(dst, src) }

// Max returns the largest value of x (NaN if one is NaN; −Inf for none).
func Max(x []float32) float32 { return maxGo(x) }

// Scale multiplies every value of x by s.
func Scale(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}
