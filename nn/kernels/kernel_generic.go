//go:build !amd64 || noasm

package kernels

// Only the portable kernel set (set.go) runs in this build.

// asmNeeds completes the requirements of the assembly sets: this build has
// no assembly.
const asmNeeds = " on amd64, in a build without the noasm tag"

// detectSets has nothing to detect: only the portable set runs.
func detectSets() {}

// hasAsmSets reports whether this build has the assembly kernel sets.
const hasAsmSets = false

// The assembly sets' loops do not exist in this build; no set selects them.

func gemmAVX2(k int, a, b []float32, boff []int, maxOff int, c []float32, ldc int, ep *epilogue, rows, cols, pf int) {
	panic("kernels: no AVX2 kernels in this build")
}

func gemmAVX512(k int, a []float32, aStride int, b []float32, boff []int, maxOff int, c []float32, ldc int, ep *epilogue, rows, cols, pf int) {
	panic("kernels: no AVX-512 kernels in this build")
}

func maxIntoAVX2Go(dst, a, b []float32) { panic("kernels: no AVX2 kernels in this build") }

func fmaLoop(i isa, n int) { panic("kernels: no FMA loops in this build") }

func winoInputAVX512(v *float32, vStride int, src *float32, hw int, n int, tileRows int) {
	panic("kernels: no assembly")
}
func winoInputAVX2(v *float32, vStride int, src *float32, hw int, n int, tileRows int) {
	panic("kernels: no assembly")
}
func winoInputRows4AVX512(v *float32, vStride int, src *float32, hw int, steps int) {
	panic("kernels: no assembly")
}
func winoInputRows8AVX512(v *float32, vStride int, src *float32, hw int, steps int) {
	panic("kernels: no assembly")
}
func winoOutputAVX512(dst *float32, dstStride int, outRows int, m *float32, mStride int, n int, cols int, ep *winoEpilogue, res *float32, tileRows int) {
	panic("kernels: no assembly")
}
func winoOutputAVX2(dst *float32, dstStride int, outRows int, m *float32, mStride int, n int, cols int, ep *winoEpilogue, res *float32, tileRows int) {
	panic("kernels: no assembly")
}
func winoOutputRows4AVX512(dst *float32, dstStride int, m *float32, mStride int, ep *winoEpilogue, res *float32, steps int) {
	panic("kernels: no assembly")
}
func winoOutputRows8AVX512(dst *float32, dstStride int, m *float32, mStride int, ep *winoEpilogue, res *float32, steps int) {
	panic("kernels: no assembly")
}
func winoInputRows4AVX2(v *float32, vStride int, src *float32, hw int, steps int) {
	panic("kernels: no assembly")
}
func winoOutputRows4AVX2(dst *float32, dstStride int, m *float32, mStride int, ep *winoEpilogue, res *float32, steps int) {
	panic("kernels: no assembly")
}
func deinterleaveAVX512(a, b, src *float32, n, rows, srcStride, dstStride, odd int) {
	panic("kernels: no assembly")
}
func deinterleaveAVX2(a, b, src *float32, n, rows, srcStride, dstStride, odd int) {
	panic("kernels: no assembly")
}

func maxPool2s2AVX512(dst, src *float32, inW, outW, rows, n int) { panic("kernels: no assembly") }
func maxPool3s2AVX512(dst, src *float32, inW, outW, rows, n int) { panic("kernels: no assembly") }
func maxPool2s2AVX2(dst, src *float32, inW, outW, rows, n int)   { panic("kernels: no assembly") }
func maxPool3s2AVX2(dst, src *float32, inW, outW, rows, n int)   { panic("kernels: no assembly") }

func gemvFMA(k int, a []float32, panelStride, panels int, b []float32, boff []int, maxOff int, t []float32, ep *epilogue) {
	panic("kernels: no assembly")
}

func gemmTilesAVX2(k int, a, b []float32, boff []int, maxOff int, c []float32, ldc int, ep *epilogue, cols, tiles, pf int) {
	panic("kernels: no assembly")
}

func gemmTilesAVX512(k int, a []float32, aStride int, b []float32, boff []int, maxOff int, c []float32, ldc int, ep *epilogue, cols, tiles, pf int) {
	panic("kernels: no assembly")
}

// interleave4 sets d[4p+r] = ar[p] for the len(a0) values of four rows.
func interleave4(d, a0, a1, a2, a3 []float32) { interleave4Go(d, a0, a1, a2, a3) }

// transposeStrip8 is never called without an assembly kernel set.
func transposeStrip8(dst, src *float32, lds, ldd, nb int) {
	panic("kernels: transposeStrip8 without assembly")
}
