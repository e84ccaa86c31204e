package kernels

import (
	"math"
	"runtime"
	"sync"
)

// This file keeps the package's first, straightforward implementation
// (row-by-row GEMM, explicit im2col) as the "naive" baseline of the
// benchmarks, and float64 references with error bounds for the tests.

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
	workers := min(runtime.GOMAXPROCS(0), m)
	if workers <= 1 || m*cost < 1<<15 {
		f(0, m)
		return
	}
	var wg sync.WaitGroup
	chunk := (m + workers - 1) / workers
	for i0 := 0; i0 < m; i0 += chunk {
		i1 := min(i0+chunk, m)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i0, i1)
		}()
	}
	wg.Wait()
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

// refGemm returns alpha·op(A)·op(B) + beta·C in float64 (C read only when
// beta ≠ 0) and, per element, the sum of the magnitudes of its terms, which
// bounds float32 rounding error.
func refGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) (val, mag []float64) {
	val, mag = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, sm float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				t := float64(alpha) * float64(av) * float64(bv)
				s += t
				sm += math.Abs(t)
			}
			if beta != 0 {
				t := float64(beta) * float64(c[i*ldc+j])
				s += t
				sm += math.Abs(t)
			}
			val[i*n+j], mag[i*n+j] = s, sm
		}
	}
	return val, mag
}

// refConv returns the convolution with bias and activation in float64 and
// the per-element magnitude bound, for a batch of n images.
func refConv(s ConvShape, weight, bias []float32, act Activation, src []float32, n int) (val, mag []float64) {
	oh, ow := s.OutH(), s.OutW()
	icg, ocg := s.InC/s.Groups, s.OutC/s.Groups
	val, mag = make([]float64, n*s.OutC*oh*ow), make([]float64, n*s.OutC*oh*ow)
	for b := 0; b < n; b++ {
		for o := 0; o < s.OutC; o++ {
			g := o / ocg
			for y := 0; y < oh; y++ {
				for x := 0; x < ow; x++ {
					var sum, sm float64
					if bias != nil {
						sum, sm = float64(bias[o]), math.Abs(float64(bias[o]))
					}
					for ci := 0; ci < icg; ci++ {
						c := g*icg + ci
						for ky := 0; ky < s.KH; ky++ {
							iy := y*s.StrideH - s.PadTop + ky*s.DilH
							if iy < 0 || iy >= s.InH {
								continue
							}
							for kx := 0; kx < s.KW; kx++ {
								ix := x*s.StrideW - s.PadLeft + kx*s.DilW
								if ix < 0 || ix >= s.InW {
									continue
								}
								t := float64(weight[((o*icg+ci)*s.KH+ky)*s.KW+kx]) * float64(src[((b*s.InC+c)*s.InH+iy)*s.InW+ix])
								sum += t
								sm += math.Abs(t)
							}
						}
					}
					idx := ((b*s.OutC+o)*oh+y)*ow + x
					val[idx], mag[idx] = refAct(act, sum), sm
				}
			}
		}
	}
	return val, mag
}

// refAct applies an activation in float64.
func refAct(a Activation, x float64) float64 {
	switch a.Kind {
	case ActRelu:
		return max(x, 0)
	case ActLeakyRelu:
		if x < 0 {
			return float64(a.Alpha) * x
		}
	case ActClip:
		return min(max(x, float64(a.Min)), float64(a.Max))
	}
	return x
}
