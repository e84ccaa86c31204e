package kernels

// winoEpilogue tells the output transform what to do after Aᵀ M A: add b0
// (always, 0 without bias, as the scalar code did), then the activation
// flags of the GEMM epilogue (epMaxLo, epMinHi, epLeaky). Layout read by
// the assembly: flags at 0, b0 at 8, lo at 12, hi at 16, alpha at 20.
type winoEpilogue struct {
	flags             uint64
	b0, lo, hi, alpha float32
}

// winoInput transforms tileRows rows of n tiles of one channel: src is
// the even half of the first padded row of the first tile row (the odd
// half at src[hw:], the next padded row at src[2hw:], the next tile row two
// padded rows further); V[ξ] of tile t (counted over the rows) goes to
// v[ξ·vStride + t].
//
// The vector transforms compute w tiles per step (16 for AVX-512, 8 for
// AVX2), one lane each, along a row of tiles. On rows of 4 tiles (images 8
// wide: ResNet-20's last stage), or 8 with AVX-512 (16 wide), a step over
// one row would leave lanes unused; winoInputRows* and winoOutputRows*
// cover w/n rows per step instead, each lane group loaded from (and
// stored to) its own row, with the same arithmetic: bit-identical
// results, with every lane busy.
func winoInput(ks *kernelSet, v []float32, vStride int, src []float32, hw, n, tileRows int) {
	if ks.isa == isaGeneric {
		winoInputGo(v, vStride, src, hw, n, tileRows)
		return
	}
	// The vector loops process whole vectors: they read and write up to a
	// vector past the last tile (slack in the buffers, values unused).
	w := 16
	if ks.isa == isaAVX2 {
		w = 8
	}
	last := (tileRows - 1) * n
	_ = v[15*vStride+last+roundUp(n, w)-1]
	_ = src[2*(tileRows-1)*2*hw+7*hw+roundUp(n, w)]
	if n == 4 || n == 8 && w == 16 {
		// Rows of 4 (or, AVX-512, 8) tiles: w/n rows per step, every
		// lane used (see above).
		per := w / n
		steps := tileRows / per
		switch {
		case w == 8:
			winoInputRows4AVX2(&v[0], vStride, &src[0], hw, steps)
		case n == 4:
			winoInputRows4AVX512(&v[0], vStride, &src[0], hw, steps)
		default:
			winoInputRows8AVX512(&v[0], vStride, &src[0], hw, steps)
		}
		if tileRows%per == 0 {
			return
		}
		v, src, tileRows = v[w*steps:], src[steps*per*4*hw:], tileRows%per
	}
	if ks.isa == isaAVX512 {
		winoInputAVX512(&v[0], vStride, &src[0], hw, n, tileRows)
	} else {
		winoInputAVX2(&v[0], vStride, &src[0], hw, n, tileRows)
	}
}

// winoInputGo is the specification of the input transform (see
// winoInput): V = Bᵀ d B of each 4×4 tile d, rows first.
func winoInputGo(v []float32, vStride int, src []float32, hw, n, tileRows int) {
	for ty := 0; ty < tileRows; ty++ {
		for tx := 0; tx < n; tx++ {
			var d [4][4]float32
			for i := 0; i < 4; i++ {
				row := src[(2*ty+i)*2*hw:]
				d[i] = [4]float32{row[tx], row[hw+tx], row[tx+1], row[hw+tx+1]}
			}
			// Columns: t = Bᵀ d.
			var t [4][4]float32
			for j := 0; j < 4; j++ {
				d0, d1, d2, d3 := d[0][j], d[1][j], d[2][j], d[3][j]
				t[0][j], t[1][j], t[2][j], t[3][j] = d0-d2, d1+d2, d2-d1, d1-d3
			}
			k := ty*n + tx
			for i := 0; i < 4; i++ {
				d0, d1, d2, d3 := t[i][0], t[i][1], t[i][2], t[i][3]
				v[(4*i)*vStride+k] = d0 - d2
				v[(4*i+1)*vStride+k] = d1 + d2
				v[(4*i+2)*vStride+k] = d2 - d1
				v[(4*i+3)*vStride+k] = d1 - d3
			}
		}
	}
}

// winoOutput transforms tileRows rows of n tiles of one output channel:
// M[ξ] of tile t (counted over the rows) is m[ξ·mStride + t]; the 2×2
// outputs Aᵀ M A + b0, plus the residual res (nil, or laid out as dst),
// then the activation, go to dst (row stride dstStride): tile row k to
// rows 2k and 2k+1 of those below outRows, columns below cols.
func winoOutput(ks *kernelSet, dst []float32, dstStride, outRows int, m []float32, mStride, n, cols int, ep *winoEpilogue, res []float32, tileRows int) {
	if ks.isa == isaGeneric {
		winoOutputGo(dst, dstStride, outRows, m, mStride, n, cols, ep, res, tileRows)
		return
	}
	w := 16
	if ks.isa == isaAVX2 {
		w = 8
	}
	_ = m[15*mStride+(tileRows-1)*n+roundUp(n, w)-1]
	_ = dst[(outRows-1)*dstStride+cols-1]
	var rp *float32
	if res != nil {
		_ = res[(outRows-1)*dstStride+cols-1]
		rp = &res[0]
	}
	if (n == 4 || n == 8 && w == 16) && cols == 2*n {
		// Rows of 4 (or, AVX-512, 8) tiles, all their columns: w/n tile
		// rows with both their output rows per step (see winoInput).
		per := w / n
		steps := min(tileRows, outRows/2) / per
		switch {
		case w == 8:
			winoOutputRows4AVX2(&dst[0], dstStride, &m[0], mStride, ep, rp, steps)
		case n == 4:
			winoOutputRows4AVX512(&dst[0], dstStride, &m[0], mStride, ep, rp, steps)
		default:
			winoOutputRows8AVX512(&dst[0], dstStride, &m[0], mStride, ep, rp, steps)
		}
		done := steps * per // tile rows
		if done == tileRows {
			return
		}
		dst, m, tileRows, outRows = dst[2*done*dstStride:], m[done*n:], tileRows-done, outRows-2*done
		if res != nil {
			rp = &res[2*done*dstStride]
		}
	}
	if ks.isa == isaAVX512 {
		winoOutputAVX512(&dst[0], dstStride, outRows, &m[0], mStride, n, cols, ep, rp, tileRows)
	} else {
		winoOutputAVX2(&dst[0], dstStride, outRows, &m[0], mStride, n, cols, ep, rp, tileRows)
	}
}

// winoOutputGo is the specification of the output transform (see
// winoOutput). The activation is applied as the GEMM micro-kernels'
// epilogue does.
func winoOutputGo(dst []float32, dstStride, outRows int, m []float32, mStride, n, cols int, ep *winoEpilogue, res []float32, tileRows int) {
	for ty := 0; ty < tileRows; ty++ {
		for tx := 0; tx < n; tx++ {
			k := ty*n + tx
			var t [2][4]float32
			for j := 0; j < 4; j++ {
				m0, m1, m2, m3 := m[j*mStride+k], m[(4+j)*mStride+k], m[(8+j)*mStride+k], m[(12+j)*mStride+k]
				t[0][j], t[1][j] = m0+m1+m2, m1-m2-m3
			}
			for i := 0; i < 2 && 2*ty+i < outRows; i++ {
				m0, m1, m2, m3 := t[i][0], t[i][1], t[i][2], t[i][3]
				y := [2]float32{m0 + m1 + m2 + ep.b0, m1 - m2 - m3 + ep.b0}
				row := (2*ty + i) * dstStride
				for k, x := range y {
					col := 2*tx + k
					if col >= cols {
						break
					}
					if res != nil {
						x += res[row+col]
					}
					dst[row+col] = ep.apply(x)
				}
			}
		}
	}
}

// apply applies the activation flags as the micro-kernels' epilogue does
// (x86 max/min semantics: the second operand when the comparison fails,
// so NaN passes through).
func (ep *winoEpilogue) apply(x float32) float32 {
	if ep.flags&epMaxLo != 0 && ep.lo > x {
		x = ep.lo
	}
	if ep.flags&epMinHi != 0 && ep.hi < x {
		x = ep.hi
	}
	if ep.flags&epLeaky != 0 {
		var mn, mx float32 = 0, x
		if x < 0 {
			mn = x
		}
		if 0 > x {
			mx = 0
		}
		x = mx + ep.alpha*mn
	}
	return x
}

// apply1 applies the activation to one value.
func (a Activation) apply1(x float32) float32 {
	switch a.Kind {
	case ActRelu:
		if x < 0 {
			return 0
		}
	case ActLeakyRelu:
		if x < 0 {
			return a.Alpha * x
		}
	case ActClip:
		if x < a.Min {
			x = a.Min
		}
		if x > a.Max {
			return a.Max
		}
	}
	return x
}
