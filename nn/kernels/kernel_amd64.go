//go:build amd64 && !noasm

package kernels

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether the AVX2+FMA micro-kernel can run on this CPU.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kernelName names the micro-kernel in use (for benchmarks and reports).
func kernelName() string {
	if hasAVX2 {
		return "avx2-fma 4x24"
	}
	return "go 4x24"
}

// sgemmKernelAVX2 is kernelGo in AVX2+FMA assembly.
//
//go:noescape
func sgemmKernelAVX2(k int, a, b *float32, boff *int, c *float32, ldc int, ep *epilogue)

// kernel runs the best micro-kernel for this CPU (see kernelGo). Every
// offset in boff[:k] must be at most maxOff.
func kernel(k int, a, b []float32, boff []int, maxOff int, c []float32, ldc int, ep *epilogue) {
	if !hasAVX2 {
		kernelGo(k, a, b, boff, c, ldc, ep)
		return
	}
	_ = a[k*mr-1]
	_ = boff[k-1]
	_ = b[maxOff+nr-1]
	_ = c[(mr-1)*ldc+nr-1]
	sgemmKernelAVX2(k, &a[0], &b[0], &boff[0], &c[0], ldc, ep)
}

//go:noescape
func maxIntoAVX2(dst, a, b *float32, n int)

// maxInto sets dst[i] = max(a[i], b[i]) for i < len(dst) (NaN when either
// is NaN); a and b must be at least as long as dst, which may alias them.
func maxInto(dst, a, b []float32) {
	n := len(dst)
	a, b = a[:n], b[:n]
	if !hasAVX2 || n < 8 {
		for i := range dst {
			dst[i] = max(a[i], b[i])
		}
		return
	}
	v := n &^ 7
	maxIntoAVX2(&dst[0], &a[0], &b[0], v)
	if v < n {
		// The last 8 values again, overlapping: max is idempotent, so this
		// is right even where dst aliases a or b.
		maxIntoAVX2(&dst[n-8], &a[n-8], &b[n-8], 8)
	}
}
