//go:build amd64 && !noasm

package kernels

//go:noescape
func dwRowAVX2(out, in *float32, stride int, w *float32, kh, kw, chunks int, bias float32, acc bool)

// dwRow is the depthwise row kernel (see dwRowGo), in assembly with the
// assembly kernel sets (avx2, avx512: both have AVX2 and FMA), in Go with
// the generic set.
func dwRow(ks *kernelSet, out, in []float32, stride int, w []float32, kh, kw, chunks int, bias float32, acc bool) {
	if ks.isa == isaGeneric {
		dwRowGo(out, in, stride, w, kh, kw, chunks, bias, acc)
		return
	}
	_ = out[chunks*dwChunk-1]
	_ = in[(kh-1)*stride+chunks*dwChunk+kw-2]
	_ = w[kh*kw-1]
	dwRowAVX2(&out[0], &in[0], stride, &w[0], kh, kw, chunks, bias, acc)
}
