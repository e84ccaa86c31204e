//go:build !amd64 || noasm

package kernels

// dwRow is the depthwise row kernel (dwRowGo).
func dwRow(_ *kernelSet, out, in []float32, stride int, w []float32, kh, kw, chunks int, bias float32, acc bool) {
	dwRowGo(out, in, stride, w, kh, kw, chunks, bias, acc)
}
