package kernels

// forwardWinograd computes one image, adding res (nil, or dst's shape; may
// be dst) before the activation. Its blocks of tile rows (and groups of
// output channels) are independent: each pads the input rows it reads
// itself, into the call's buffer of the worker's part (an allocation of
// its own, see apartFloats), so that a worker reads mostly rows that it
// wrote in the previous layer (with the same split) and writes nothing
// that another core reads but its outputs.
// With pool (ConvMaxPool), dst is unused: each block's output rows are
// max-pooled into pool.dst as soon as they are transformed.
func (c *Conv) forwardWinograd(call *convCall, dst, src, res []float32, pool *winoPool) {
	wg := c.wino
	w := workers(int(c.Flops()))
	p := wg.plans[min(w, maxPlanWorkers)]
	blocks := p.blocks
	// The workers share the groups of output channels, each computing all
	// blocks of its groups, or the blocks.
	units, unitLen := blocks, c.winoPadLen(p.rows)
	if p.groups > 1 {
		units, unitLen = p.groups, blocks*unitLen
	}
	parts, size := chunks(units, w)
	if call.padPlan != p || len(call.pads) != parts {
		// A new layout: its padding is written once, as zeros.
		call.pads = regrowParts(call.pads, parts, func(t int) int { return min(size, units-t*size)*unitLen + 32 })
		call.padPlan = p
	}
	if parts == 1 {
		// Without parallel's closure, which would be allocated.
		sc := workspaces.get()
		c.winoPart(call, sc, p, 0, size, units, unitLen, dst, res, src, pool)
		workspaces.put(sc)
		return
	}
	parallel(parts, func(t int, sc *workspace) {
		c.winoPart(call, sc, p, t, size, units, unitLen, dst, res, src, pool)
	})
}

// winoPart computes part t of forwardWinograd's split: units [t·size,
// min((t+1)·size, units)), groups of output channels (each all blocks)
// when p has several, else blocks; its padded rows are call.pads[t],
// unitLen values a unit.
func (c *Conv) winoPart(call *convCall, sc *workspace, p winoPlan, t, size, units, unitLen int, dst, res, src []float32, pool *winoPool) {
	u0, u1 := t*size, min((t+1)*size, units)
	if p.groups == 1 {
		c.winoBlocks(sc, call.pads[t], dst, res, src, p, u0, u1, 0, c.s.OutC, pool)
		return
	}
	for g := u0; g < u1; g++ {
		o0, o1 := c.groupChannels(p, g)
		c.winoBlocks(sc, call.pads[t][(g-u0)*unitLen:], dst, res, src, p, 0, p.blocks, o0, o1, pool)
	}
}

// winoBlocks computes output channels [o0, o1) (o0 a multiple of the
// kernel set's mr) of blocks [b0, b1) of plan p, one block after the
// other, in the workspace sc. Block b's padded input rows are at
// pad[(b−b0)·winoPadLen(p.rows):], padding zero (see winoPadRows). pool:
// see forwardWinograd.
func (c *Conv) winoBlocks(sc *workspace, pad, dst, res, src []float32, p winoPlan, b0, b1, o0, o1 int, pool *winoPool) {
	s, wg := c.s, c.wino
	sc.vm = growFloats(sc.vm, c.winoBlockLen())
	for b := b0; b < b1; b++ {
		ty0, ty1 := p.span(b, wg.tilesH)
		bp := pad[(b-b0)*c.winoPadLen(p.rows):]
		c.winoPadRows(bp, src, ty0, ty1)
		bph := padRows(ty1 - ty0)
		for ch := 0; ch < s.InC; ch++ {
			winoInput(c.ks, sc.vm[ch*wg.pitch:], wg.stride, bp[ch*bph*2*wg.hw:], wg.hw, wg.tilesW, ty1-ty0)
		}
		c.winoGemms(sc, ty0, ty1, o0, o1)
		c.winoOut(dst, res, sc.vm, ty0, ty1, o0, o1, pool)
	}
}

// winoPadRows copies into pad the input rows that tile rows [ty0, ty1)
// read, as padded rows (padRows(ty1−ty0) of them per channel) split into
// their even and odd columns: channel ch, padded row 2·ty0 + r, padded
// column x at pad[(ch·padRows + r)·2hw + (x mod 2)·hw + x/2]. The padding
// is never written: it stays zero from the buffer's clearing.
func (c *Conv) winoPadRows(pad, src []float32, ty0, ty1 int) {
	s, wg := c.s, c.wino
	bph, rw := padRows(ty1-ty0), 2*wg.hw
	// Input rows [y0, y1) land at block rows [y0−r0, y1−r0).
	r0 := 2*ty0 - s.PadTop
	y0, y1 := max(0, r0), min(s.InH, r0+bph)
	if y1 <= y0 {
		return
	}
	// Input column 0 lands in the even half when PadLeft is even.
	ea, oa := s.PadLeft/2, wg.hw+s.PadLeft/2
	if s.PadLeft%2 == 1 {
		ea, oa = wg.hw+s.PadLeft/2, s.PadLeft/2+1
	}
	for ch := 0; ch < s.InC; ch++ {
		at := (ch*bph + y0 - r0) * rw
		deinterleave(c.ks, pad[at+ea:], pad[at+oa:], src[(ch*s.InH+y0)*s.InW:(ch*s.InH+y1)*s.InW], s.InW, y1-y0, s.InW, rw)
	}
}

// deinterleave copies rows rows of w values, row y at src[y·srcStride:],
// splitting even and odd positions: a[y·dstStride + i] = src[…+2i], b[…+i]
// = src[…+2i+1].
func deinterleave(ks *kernelSet, a, b, src []float32, w, rows, srcStride, dstStride int) {
	if rows == 0 || w == 0 {
		return
	}
	n := w / 2
	_ = src[(rows-1)*srcStride+w-1]
	_ = a[(rows-1)*dstStride+(w+1)/2-1]
	if n > 0 {
		_ = b[(rows-1)*dstStride+n-1]
	}
	switch {
	case n == 0:
		for y := 0; y < rows; y++ {
			a[y*dstStride] = src[y*srcStride]
		}
	case ks.isa == isaAVX512:
		deinterleaveAVX512(&a[0], &b[0], &src[0], n, rows, srcStride, dstStride, w%2)
	case ks.isa == isaAVX2:
		deinterleaveAVX2(&a[0], &b[0], &src[0], n, rows, srcStride, dstStride, w%2)
	default:
		for y := 0; y < rows; y++ {
			row := src[y*srcStride : y*srcStride+w]
			ra, rb := a[y*dstStride:], b[y*dstStride:]
			for i := 0; i < n; i++ {
				ra[i], rb[i] = row[2*i], row[2*i+1]
			}
			if w%2 == 1 {
				ra[n] = row[w-1]
			}
		}
	}
}

// winoGemms computes rows [o0, o1) of M_ξ = U_ξ · V_ξ for the 16 ξ over
// the block's tiles.
func (c *Conv) winoGemms(sc *workspace, ty0, ty1, o0, o1 int) {
	s, wg := c.s, c.wino
	n := (ty1 - ty0) * wg.tilesW
	per := packedASize(c.m, c.k)
	v := sc.vm[:s.InC*wg.pitch]
	mm := sc.vm[len(v):]
	for xi := range 16 {
		sc.mat = matrixB{b: v[xi*wg.stride:], ldb: wg.pitch, offs: wg.offs, wide: true}
		g := gemmOp{ks: c.ks, m: c.m, n: n, k: c.k, kc: c.kc, ap: c.ap[xi*per : (xi+1)*per],
			b: &sc.mat, c: mm[xi*wg.stride:], ldc: wg.pitch}
		g.block(o0, o1, 0, n, sc.buf.b[:])
	}
	sc.mat = matrixB{}
}

// winoOut transforms output channels [o0, o1) of tile rows [ty0, ty1)
// from the block's M into dst, adding the bias and res (nil, or dst's
// shape; may be dst) and applying the activation. With pool, each
// channel's rows go to a small buffer instead, pooled from there into
// pool.dst.
func (c *Conv) winoOut(dst, res, vm []float32, ty0, ty1, o0, o1 int, pool *winoPool) {
	s, wg := c.s, c.wino
	oh, ow := s.OutH(), s.OutW()
	mm := vm[s.InC*wg.pitch:]
	flags, lo, hi, alpha := c.act.epilogue()
	ep := winoEpilogue{flags: flags, lo: lo, hi: hi, alpha: alpha}
	y := 2 * ty0
	rows := min(oh-y, 2*(ty1-ty0))
	var band, tmp []float32
	var ps PoolShape
	if pool != nil {
		buf := scratch.get(3 * rows * ow)
		defer scratch.put(buf)
		band, tmp = (*buf)[:rows*ow], (*buf)[rows*ow:]
		// The pooled rows whose windows start in this block (stride 2,
		// windows of at most 2 rows: they read only this block's rows).
		ps = pool.p
		ps.InH, ps.OutH = rows, min(ps.OutH, ty0+(rows+1)/2)-ty0
		if ps.OutH <= 0 {
			return // rows that no window starts in (the last one, odd, in floor mode)
		}
	}
	for o := o0; o < o1; o++ {
		ep.b0 = 0
		if wg.bias != nil {
			ep.b0 = wg.bias[o]
		}
		if pool != nil {
			winoOutput(c.ks, band, ow, rows, mm[o*wg.pitch:], wg.stride, wg.tilesW, ow, &ep, nil, ty1-ty0)
			osz := pool.p.OutH * pool.p.OutW
			maxPoolPlane(pool.dst[o*osz+ty0*ps.OutW:o*osz+(ty0+ps.OutH)*ps.OutW], band, tmp, ps, c.ks)
			continue
		}
		d := dst[(o*oh+y)*ow : (o*oh+y+rows)*ow]
		var r []float32
		if res != nil {
			r = res[(o*oh+y)*ow : (o*oh+y+rows)*ow]
		}
		winoOutput(c.ks, d, ow, rows, mm[o*wg.pitch:], wg.stride, wg.tilesW, ow, &ep, r, ty1-ty0)
	}
}

// winoPool is a max pooling of a Winograd convolution's output computed
// block by block (ConvMaxPool): p's windows have stride 2 and at most 2
// rows, no padding above, so each block's pooled rows depend on its own
// rows only. The pooled image goes to dst.
type winoPool struct {
	dst []float32
	p   PoolShape
}
