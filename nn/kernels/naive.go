package kernels

import "math"

// This file keeps the package's first, straightforward implementation
// (row-by-row GEMM, explicit im2col, a window-by-window max pool): the
// "naive" baseline of the tests and benchmarks and, with the build tag
// refkernels, the implementation behind the package's API (see
// refKernels), so that the speed of the whole engine before and after the
// optimised kernels can be compared on real workloads:
//
//	go build -tags refkernels -o /tmp/amt-ref ./cmd/amt

// naiveGemm is the original Gemm.
func naiveGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	naiveParallelRows(m, n*k, func(i0, i1 int) {
		row := make([]float32, n)
		for i := i0; i < i1; i++ {
			for j := range row {
				row[j] = 0
			}
			for p := 0; p < k; p++ {
				var av float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if av == 0 {
					continue
				}
				if transB {
					for j := 0; j < n; j++ {
						row[j] += av * b[j*ldb+p]
					}
				} else {
					brow := b[p*ldb : p*ldb+n]
					for j, bv := range brow {
						row[j] += av * bv
					}
				}
			}
			crow := c[i*ldc : i*ldc+n]
			if beta == 0 {
				for j := range crow {
					crow[j] = alpha * row[j]
				}
			} else {
				for j := range crow {
					crow[j] = alpha*row[j] + beta*crow[j]
				}
			}
		}
	})
}

func naiveParallelRows(m, cost int, f func(i0, i1 int)) {
	if m*cost < 1<<15 {
		f(0, m)
		return
	}
	ParallelFor(m, Threads(), f)
}

// naiveConv is the original Conv.Forward: im2col then naiveGemm per group.
func naiveConv(s ConvShape, weight, bias []float32, act Activation, dst, src []float32, n int) {
	oh, ow := s.OutH(), s.OutW()
	icg, ocg := s.InC/s.Groups, s.OutC/s.Groups
	kk := icg * s.KH * s.KW
	cols := make([]float32, kk*oh*ow)
	for b := 0; b < n; b++ {
		in := src[b*s.InC*s.InH*s.InW:]
		out := dst[b*s.OutC*oh*ow : (b+1)*s.OutC*oh*ow]
		for g := 0; g < s.Groups; g++ {
			naiveIm2col(cols, in[g*icg*s.InH*s.InW:], icg, s, oh, ow)
			naiveGemm(false, false, ocg, oh*ow, kk, 1, weight[g*ocg*kk:], kk, cols, oh*ow, 0, out[g*ocg*oh*ow:], oh*ow)
		}
		for o := 0; o < s.OutC; o++ {
			plane := out[o*oh*ow : (o+1)*oh*ow]
			if bias != nil {
				for i := range plane {
					plane[i] += bias[o]
				}
			}
			act.Apply(plane)
		}
	}
}

func naiveIm2col(cols, in []float32, ic int, s ConvShape, oh, ow int) {
	r := 0
	for c := 0; c < ic; c++ {
		plane := in[c*s.InH*s.InW:]
		for ky := 0; ky < s.KH; ky++ {
			for kx := 0; kx < s.KW; kx++ {
				row := cols[r*oh*ow : (r+1)*oh*ow]
				r++
				for y := 0; y < oh; y++ {
					iy := y*s.StrideH - s.PadTop + ky*s.DilH
					dst := row[y*ow : (y+1)*ow]
					if iy < 0 || iy >= s.InH {
						clear(dst)
						continue
					}
					src := plane[iy*s.InW:]
					for x := 0; x < ow; x++ {
						ix := x*s.StrideW - s.PadLeft + kx*s.DilW
						if ix < 0 || ix >= s.InW {
							dst[x] = 0
						} else {
							dst[x] = src[ix]
						}
					}
				}
			}
		}
	}
}

// naiveMaxPool is the window-by-window loop with a branch per tap (as the
// importer's first MaxPool), the baseline of BenchmarkMaxPool.
func naiveMaxPool(dst, src []float32, planes int, s PoolShape) {
	for p := 0; p < planes; p++ {
		in := src[p*s.InH*s.InW:]
		out := dst[p*s.OutH*s.OutW:]
		for y := 0; y < s.OutH; y++ {
			for x := 0; x < s.OutW; x++ {
				m := float32(math.Inf(-1))
				for ky := 0; ky < s.KH; ky++ {
					iy := y*s.StrideH - s.PadTop + ky*s.DilH
					if iy < 0 || iy >= s.InH {
						continue
					}
					row := in[iy*s.InW:]
					for kx := 0; kx < s.KW; kx++ {
						ix := x*s.StrideW - s.PadLeft + kx*s.DilW
						if ix >= 0 && ix < s.InW && (row[ix] > m || row[ix] != row[ix]) {
							m = row[ix] // a NaN wins and stays, as in MaxPool
						}
					}
				}
				out[y*s.OutW+x] = m
			}
		}
	}
}
