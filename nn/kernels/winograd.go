package kernels

// Winograd F(2×2, 3×3) convolution (Lavin & Gray, 2016) for 3×3 stride-1
// undilated layers with many channels: each 2×2 output tile comes from a
// 4×4 input tile through 16 GEMMs (one per point of the transformed tile)
// of depth InC instead of one of depth 9·InC, 2.25× fewer multiplications.
// Its transforms use only additions and halvings, so its rounding error is
// of the order of the direct method's.
//
//	V = Bᵀ d B,  U = G g Gᵀ,  Y = Aᵀ (U ⊙ V) A
//	Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]
//	G  = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1]
//	Aᵀ = [1 1 1 0; 0 1 −1 −1]

// winogradPays reports whether NewConv prefers Winograd to the shifted
// GEMM for a shape it applies to. Measured with BenchmarkConv on the
// shipped models' 3×3 stride-1 layers (one core, GFLOP of the direct
// method per CPU-second, interleaved runs, AVX-512 and AVX2), Winograd is
// 1.2–1.85 times faster on all of them, including the small-image,
// large-weight ones (13×13, 256×512 channels and more: 1.2–1.4×, though its
// GEMMs compute the 49 tiles as 64 columns), except with few input
// channels, where its GEMMs are too shallow. The choice depends on the
// shape only, never on the kernel set or the machine, so that results are
// the same everywhere.
func winogradPays(s ConvShape) bool { return s.InC >= 8 }

// winograd is the prepared state of a Winograd convolution.
//
// Forward processes the tiles in blocks of rows of tiles, sized so that a
// block's transformed input V (16 × InC × tiles) and GEMM output M (16 ×
// OutC × tiles) stay in the L2 cache: padding of the input rows the block
// reads, input transform, 16 GEMMs M_ξ = U_ξ · V_ξ, output transform,
// before the next block. The workers share the blocks, or on small images
// the output channels (see winoPlan). The padded rows are split into their
// even and odd columns (hw values each), so that the transform of a row of
// tiles reads every column of its 4×4 tiles with contiguous vector loads.
// V and M keep the 16 values of a channel's tile close together
// (V[ch][ξ][t], M[o][ξ][t]): the transforms read or write all 16 at once,
// the GEMMs use row strides.
type winograd struct {
	tilesH, tilesW, tiles int                          // 2×2 output tiles
	hw                    int                          // padded input rows: hw even then hw odd columns
	plans                 [maxPlanWorkers + 1]winoPlan // for 1..maxPlanWorkers workers
	stride                int                          // row stride of V and M in a block (tiles, with slack)
	pitch                 int                          // channel stride of V and M: 16 rows, then a cache line
	offs                  []int
	bias                  []float32 // OutC values or nil
}

// winoPlan is how a Winograd convolution splits its work: blocks of tile
// rows (as even as can be: block b is rows [b·tilesH/blocks,
// (b+1)·tilesH/blocks), at most rows each), and groups of output channels
// (each computing every block for its channels, the padding and input
// transform repeated per group).
type winoPlan struct{ blocks, rows, groups int }

// newWinoPlan returns the plan of blocks blocks of tilesH tile rows for
// groups groups of output channels.
func newWinoPlan(tilesH, blocks, groups int) winoPlan {
	return winoPlan{blocks: blocks, rows: (tilesH + blocks - 1) / blocks, groups: groups}
}

// span returns the tile rows [ty0, ty1) of block b of a plan for tilesH
// tile rows.
func (p winoPlan) span(b, tilesH int) (ty0, ty1 int) {
	return b * tilesH / p.blocks, (b + 1) * tilesH / p.blocks
}

// winoBlockBudget is the number of float32 values of V and M that one
// block aims to fit in (512 KiB: half of a typical per-core L2).
const winoBlockBudget = 128 << 10

// winoEpilogue tells the output transform what to do after Aᵀ M A: add b0
// (always, 0 without bias, as the scalar code did), then the activation
// flags of the GEMM epilogue (epMaxLo, epMinHi, epLeaky). Layout read by
// the assembly: flags at 0, b0 at 8, lo at 12, hi at 16, alpha at 20.
type winoEpilogue struct {
	flags             uint64
	b0, lo, hi, alpha float32
}

// winogradApplies reports whether the Winograd strategy can run s.
func winogradApplies(s ConvShape) bool {
	return s.KH == 3 && s.KW == 3 && s.StrideH == 1 && s.StrideW == 1 &&
		s.DilH == 1 && s.DilW == 1 && s.Groups == 1
}

// prepareWinograd transforms and packs the weights: c.ap holds 16 packed
// A operands U_ξ (OutC × InC), ξ = 4i+j a point of the 4×4 tile.
func (c *Conv) prepareWinograd(weight, bias []float32) {
	s := c.s
	wg := &winograd{tilesH: (s.OutH() + 1) / 2, tilesW: (s.OutW() + 1) / 2}
	wg.tiles = wg.tilesH * wg.tilesW
	wg.hw = wg.tilesW + 1
	for w := 1; w <= maxPlanWorkers; w++ {
		wg.plans[w] = wg.plan(s.InC, s.OutC, c.ks.mr, c.ks.nr, w)
		// Slack: the transforms write and read up to a vector past a row
		// of tiles, and the GEMM reads partial panels in place up to nr
		// columns.
		wg.stride = max(wg.stride, roundUp(wg.plans[w].rows*wg.tilesW, 16)+32)
	}
	if bias != nil {
		wg.bias = append([]float32(nil), bias...)
	}
	m, ic := s.OutC, s.InC
	u := make([]float32, 16*m*ic) // [ξ][o][c]
	for o := 0; o < m; o++ {
		for ch := 0; ch < ic; ch++ {
			g := weight[(o*ic+ch)*9 : (o*ic+ch+1)*9]
			// t = G g (4×3), then U = t Gᵀ (4×4).
			var t [4][3]float32
			for j := 0; j < 3; j++ {
				g0, g1, g2 := g[j], g[3+j], g[6+j]
				t[0][j], t[1][j], t[2][j], t[3][j] = g0, (g0+g1+g2)*0.5, (g0-g1+g2)*0.5, g2
			}
			for i := 0; i < 4; i++ {
				r0, r1, r2 := t[i][0], t[i][1], t[i][2]
				row := [4]float32{r0, (r0 + r1 + r2) * 0.5, (r0 - r1 + r2) * 0.5, r2}
				for j, v := range row {
					u[((4*i+j)*m+o)*ic+ch] = v
				}
			}
		}
	}
	c.m, c.k, c.n = m, ic, wg.tiles
	c.kc = depthBlock(m)
	per := packedASize(m, ic)
	c.ap = make([]float32, 16*per)
	for xi := 0; xi < 16; xi++ {
		packA(c.ap[xi*per:], u[xi*m*ic:], ic, false, m, ic, c.kc, 1)
	}
	// A channel's 16 rows of V and M, then one cache line more: V and M
	// channels an odd number of lines apart. A GEMM reads a row of V per
	// channel in its depth loop (and writes a row of M per output
	// channel): 16·stride values apart, a multiple of 1 KiB (of 4 KiB on
	// 16×16 images), those rows fell in a few of the L1 cache's 64 sets
	// and evicted each other. One thread, AMD EPYC Zen 4, the 16 GEMMs of
	// one block, avx2: 13×13 image, 512 channels 6.3–6.8 → 3.7–4.4 ms;
	// 52×52, 128: 290 → 149 µs; 55×55, 16: 38–40 → 15–16 µs; 16×16, 32:
	// 25–28 → 20.5 µs; avx512: 55×55, 16: 29–30 → 25 µs, others within
	// noise.
	wg.pitch = 16*wg.stride + 16
	wg.offs = make([]int, ic)
	for p := range wg.offs {
		wg.offs[p] = p * wg.pitch
	}
	c.wino = wg
}

// maxPlanWorkers is the largest number of workers the block sizes are
// planned for; more use the plan for that many.
const maxPlanWorkers = 4

// plan returns the split of the work for w workers: blocks of tile rows
// (see blockPlan) unless they would leave each worker fewer than 32 tiles
// (two vectors of GEMM columns: the GEMMs of small images would mostly
// compute padding), then w groups of output channels (a multiple of the
// kernel set's mr rows each) when there are enough.
func (wg *winograd) plan(inC, outC, mr, nr, w int) winoPlan {
	if w > 1 && wg.tiles < 32*w && outC >= 2*w*mr {
		per := roundUp((outC+w-1)/w, mr)
		p := wg.blockPlan(inC, outC, nr, 1)
		p.groups = (outC + per - 1) / per
		return p
	}
	return wg.blockPlan(inC, outC, nr, w)
}

// groupChannels returns the output channels [o0, o1) of group g of p.
func (c *Conv) groupChannels(p winoPlan, g int) (o0, o1 int) {
	per := roundUp((c.s.OutC+p.groups-1)/p.groups, c.ks.mr)
	return g * per, min(c.s.OutC, (g+1)*per)
}

// blockPlan returns the blocks of tile rows when w workers share them (one
// group of channels): blocks whose V and M (16·ch values per tile, ch the
// input plus output channels) fit 1.5 times winoBlockBudget (or hold at
// least two GEMM panels of nr tiles); among those counts of blocks the one
// whose busiest worker computes the fewest GEMM columns (the micro-kernels
// compute whole vectors of 16 columns for avx512, whole 24-column tiles
// otherwise), with a fixed cost of 8 columns per block (its padding rows,
// partial panels), the fewest blocks on a tie. The tile rows are spread
// evenly over the blocks: 28 rows in 6 blocks for 2 workers are 5, 5, 4
// and 5, 5, 4, not 5, 5, 5 and 5, 5, 3. The blocks never change the
// results, only the time.
func (wg *winograd) blockPlan(inC, outC, nr, w int) winoPlan {
	ch := inC + outC
	fit := max(3*winoBlockBudget/2/(16*ch), 2*nr)
	g := nr
	if nr == nrMax {
		g = 16
	}
	maxRows := min(wg.tilesH, max(1, fit/wg.tilesW))
	best, bestCost := winoPlan{}, -1
	for blocks := wg.tilesH; blocks >= (wg.tilesH+maxRows-1)/maxRows; blocks-- {
		p := newWinoPlan(wg.tilesH, blocks, 1)
		// parallelFor's contiguous chunks of blocks.
		cost, chunk := 0, (blocks+w-1)/w
		for i := 0; i < blocks; i += chunk {
			sum := 0
			for b := i; b < min(i+chunk, blocks); b++ {
				ty0, ty1 := p.span(b, wg.tilesH)
				sum += roundUp((ty1-ty0)*wg.tilesW, g) + 8
			}
			cost = max(cost, sum)
		}
		if bestCost < 0 || cost <= bestCost {
			best, bestCost = p, cost
		}
	}
	return best
}

// blockLen is the number of scratch values of one block: V and M.
func (c *Conv) winoBlockLen() int { return (c.s.InC + c.s.OutC) * c.wino.pitch }

// padRows is the number of padded input rows a block of rows tile rows
// reads.
func padRows(rows int) int { return 2*rows + 2 }

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

// winoPadLen is the number of values of one block's padded input rows.
func (c *Conv) winoPadLen(rows int) int { return c.s.InC * padRows(rows) * 2 * c.wino.hw }

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

// winoInput transforms tileRows rows of n tiles of one channel: src is
// the even half of the first padded row of the first tile row (the odd
// half at src[hw:], the next padded row at src[2hw:], the next tile row two
// padded rows further); V[ξ] of tile t (counted over the rows) goes to
// v[ξ·vStride + t].
//
// The vector transforms compute w tiles per step (16 for AVX-512, 8 for
// AVX2), one lane each, along a row of tiles. On rows of 4 tiles (images 8
// wide: ResNet-20's last stage), or 8 with AVX-512 (16 wide), a step used
// to cover one row, leaving lanes unused; winoInputRows* and
// winoOutputRows* cover w/n rows per step instead, each lane group loaded
// from (and stored to) its own row, with the same arithmetic:
// bit-identical results. AVX-512, one thread,
// AMD EPYC Zen 4: the input transform of an 8×8 layer of 64 channels 4.6 →
// 1.6 µs, its output transform 3.5 → 1.3 µs; of a 16×16 layer of 32
// channels 3.9 → 1.9 and 3.2 → 1.75 µs; ResNet-20 at batch 1 on two
// threads 0.45 → 0.40 ms (with deinterleave's masked tail).
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
