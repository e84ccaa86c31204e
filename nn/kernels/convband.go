package kernels

// Bands of output rows for the shifted strategy. Split over w workers, a
// shifted convolution's GEMM could share one padded copy of the input,
// made by the caller, and split its output channels or columns as the
// GEMM saw fit; but then at small batches the other cores read the whole
// padded input from the first core's cache, and the next layer reads
// most of its input from the other cores', so that moving memory between
// cores costs what the split gains.
// In bands, worker t computes output rows [t·rows, (t+1)·rows) of every
// channel from its own padded copy of just the input rows they read, as
// Winograd's blocks of tile rows do (see forwardWinograd): with the same
// split in consecutive layers, a core reads mostly what it wrote. Every
// output value is computed by the same GEMM, adding the same products in
// the same order: the results do not depend on the split.

// shiftBands is the split of a shifted convolution's output rows into
// bands for some number of workers, and the layout of a band's padded
// input: phase planes of ph rows (row 0 at the band's first output row)
// read through offs.
type shiftBands struct {
	bands, rows int   // bands of rows output rows (the last may have fewer)
	ph          int   // rows of a band's phase planes
	offs        []int // B row offsets in a band's padded input (see shiftB)
	maxOff      int   // largest of offs
	padLen      int   // values of a band's padded input
	cLen        int   // values of a band's GEMM output when compacted afterwards, else 0
}

// bandOp is the per-call state of one band (recycled with the call).
type bandOp struct {
	g  gemmOp
	sh shiftB
}

// planBands prepares the bands for 2…maxPlanWorkers workers (none for an
// output of one row).
func (c *Conv) planBands() {
	s := c.s
	oh := s.OutH()
	for w := 2; w <= maxPlanWorkers; w++ {
		rows := ceilDiv(oh, w)
		if rows == oh {
			break
		}
		p := &shiftBands{bands: ceilDiv(oh, rows), rows: rows}
		// Kernel row ky of output row y reads phase-plane row y +
		// ky·DilH/StrideH.
		p.ph = min(rows+(s.KH-1)*s.DilH/s.StrideH, c.hph)
		p.offs, p.maxOff, p.padLen = c.shiftLayout(p.ph, rows)
		if c.wph != s.OutW() && !c.rowMode {
			p.cLen = c.m * rows * c.wph
		}
		c.bands[w] = p
	}
}

// bandMinFlops is the work (2·m·n·k of one group's GEMM) from which a
// shifted convolution is split into bands, lower than parMinFlops: in
// bands, work this small still gains from staying where its input was
// written (a quarter of parMinFlops also splits the small first layers
// and 1×1 shortcuts of networks like ResNet-20).
const bandMinFlops = parMinFlops / 4

// bandPlan returns the bands for a GEMM doing flops of work on the free
// threads, or nil when the GEMM splits the work itself: one worker, or
// more than the bands are planned for.
func (c *Conv) bandPlan(flops int) *shiftBands {
	if flops < bandMinFlops {
		return nil
	}
	w := freeThreads()
	if w < 2 || w >= len(c.bands) {
		return nil
	}
	return c.bands[w]
}

// forwardBands computes one group of one image (in, its output out and
// residual r or nil; ap and bias the group's packed weights and bias) in
// the bands of p, one per worker.
func (c *Conv) forwardBands(call *convCall, p *shiftBands, out, in, r, ap, bias []float32) {
	if call.bandPlan != p {
		// A new layout: its padding is written once, as zeros. Each band
		// has a buffer of its own, apart from the others (see apartFloats).
		call.bandBufs = regrowParts(call.bandBufs, p.bands, func(int) int { return p.padLen + p.cLen })
		call.bandOps = make([]bandOp, p.bands)
		call.bandPlan = p
	}
	parallel(p.bands, func(t int, sc *workspace) {
		c.band(&call.bandOps[t], p, t, call.bandBufs[t], out, in, r, ap, bias, sc)
	})
}

// band computes band t of p with the scratch memory buf (its padded input,
// then its compacted output) and the workspace sc.
func (c *Conv) band(op *bandOp, p *shiftBands, t int, buf, out, in, r, ap, bias []float32, sc *workspace) {
	s := c.s
	oh, ow := s.OutH(), s.OutW()
	oy0, oy1 := t*p.rows, min((t+1)*p.rows, oh)
	pad, cb := buf[:p.padLen], buf[p.padLen:]
	c.padInput(pad, in, 0, s.InC/s.Groups, oy0, min(oy0+p.ph, c.hph), p.ph)
	op.sh = shiftB{pad: pad, offs: p.offs, maxOff: p.maxOff}
	g := &op.g
	*g = gemmOp{ks: c.ks, m: c.m, n: (oy1 - oy0) * ow, k: c.k, kc: c.kc, ap: ap, b: &op.sh, c: out[oy0*ow:], ldc: oh * ow, bias: bias, act: c.act}
	if c.wph != ow {
		g.rowW, g.bRowW = ow, c.wph
	}
	switch {
	case p.cLen > 0:
		// Into cb, phase-plane rows, then (part) the output rows to out.
		g.n, g.c, g.ldc = (oy1-oy0)*c.wph, cb, p.rows*c.wph
		g.out, g.outLd = out[oy0*ow:], oh*ow
		if r != nil {
			c.scatterRes(cb, g.ldc, r, oy0, oy1)
			g.acc = true
		}
	case r != nil:
		if &r[0] != &out[0] {
			for o := 0; o < c.m; o++ {
				copy(out[(o*oh+oy0)*ow:(o*oh+oy1)*ow], r[(o*oh+oy0)*ow:(o*oh+oy1)*ow])
			}
		}
		g.acc = true
	}
	g.part(0, c.m, 0, g.n, sc.buf.b[:])
	op.sh = shiftB{}
	*g = gemmOp{}
}
