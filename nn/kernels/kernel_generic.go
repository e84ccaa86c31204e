//go:build !amd64 || noasm

package kernels

// kernelName names the micro-kernel in use (for benchmarks and reports).
func kernelName() string { return "go 4x24" }

// kernel runs the portable micro-kernel (see kernelGo).
func kernel(k int, a, b []float32, boff []int, _ int, c []float32, ldc int, ep *epilogue) {
	kernelGo(k, a, b, boff, c, ldc, ep)
}

// maxInto sets dst[i] = max(a[i], b[i]) for i < len(dst) (NaN when either
// is NaN); a and b must be at least as long as dst, which may alias them.
func maxInto(dst, a, b []float32) {
	n := len(dst)
	a, b = a[:n], b[:n]
	for i := range dst {
		dst[i] = max(a[i], b[i])
	}
}
