package kernels

import "math"

// This file keeps float64 references with error bounds for the tests; the
// package's first implementation (the "naive" baseline) is in naive.go.

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
