package kernels

import (
	"sync/atomic"
	"unsafe"
)

// Blocking parameters of the packed GEMM (BLIS/GotoBLAS style). A
// micro-kernel computes a tile of C (the kernel set's mr×nr) from mr/4
// panels of packed A, 4 rows each, and an nr-column panel of B (packed, or
// read in place when B's rows are already contiguous). The depth K is cut
// into blocks of kc ≤ kcMax so that a B panel (kc·nr values) stays in L1
// while the whole A block (m·kc values, at most aBlockMax; Gemm, whose kc
// does not depend on m, takes the rows in blocks) is swept past it from
// L2. The blocking does not depend on the kernel set, so that every
// set adds the products of every element of C in the same order.
const (
	mr        = 4  // rows of a packed A panel
	nr        = 24 // columns of kernelGo's tile
	kcMax     = 256
	kcMin     = 64
	aBlockMax = 96 << 10 // values of packed A per depth block (384 KiB)
)

// depthBlock returns the depth block size for an A with m rows.
func depthBlock(m int) int {
	return max(kcMin, min(kcMax, aBlockMax/roundUp(m, mr)/8*8))
}

// Epilogue flags read by the micro-kernels.
const (
	epAccumulate = 1 << iota // C += A·B instead of C = A·B
	epBias                   // add bias[row]
	epMaxLo                  // x = max(x, lo)
	epMinHi                  // x = min(x, hi)
	epLeaky                  // x = max(x, 0) + alpha·min(x, 0)
)

// epilogue tells a micro-kernel what to do with its tile after the
// multiply-accumulate loop. Its layout is read by the assembly kernels:
// flags at offset 0, bias at 8, lo at 16, hi at 20, alpha at 24.
type epilogue struct {
	flags         uint64
	bias          *float32 // mr values, one per row of the tile
	lo, hi, alpha float32
}

// epilogue returns the epilogue flags and parameters of an activation.
func (a Activation) epilogue() (flags uint64, lo, hi, alpha float32) {
	switch a.Kind {
	case ActRelu:
		return epMaxLo, 0, 0, 0
	case ActLeakyRelu:
		return epLeaky, 0, 0, a.Alpha
	case ActClip:
		return epMaxLo | epMinHi, a.Min, a.Max, 0
	}
	return 0, 0, 0, 0
}

// roundUp rounds x up to a multiple of m.
func roundUp(x, m int) int { return (x + m - 1) / m * m }

// packA packs alpha·op(A) (m×k) into dst in the layout the driver reads:
// for each depth block starting at p0 (kcb deep, the last one shorter),
// the mr-row panels of that block, panel i (0-based row i, a multiple of
// mr) at p0·mPad + i·kc, element (r, p) at p·mr + r. Rows past m are zero.
// dst must hold packedASize(m, k) values.
func packA(dst []float32, a []float32, lda int, trans bool, m, k, kcb int, alpha float32) {
	packARows(dst, a, lda, trans, m, k, kcb, alpha, 0, roundUp(m, mr))
}

// packARows is packA for the panels of rows [i0, i1) (multiples of mr; i1
// at most m rounded up to mr): the panels of different row ranges are
// disjoint, so that goroutines can pack their own rows.
func packARows(dst []float32, a []float32, lda int, trans bool, m, k, kcb int, alpha float32, i0, i1 int) {
	mPad := roundUp(m, mr)
	for p0 := 0; p0 < k; p0 += kcb {
		kc := min(kcb, k-p0)
		for i := i0; i < i1; i += mr {
			d := dst[p0*mPad+i*kc : p0*mPad+(i+mr)*kc]
			if !trans && alpha == 1 && i+mr <= m {
				// A whole panel of an unscaled row-major A (the common
				// case, per call for activations): four rows at a time,
				// writing d in order.
				interleave4(d, a[i*lda+p0:i*lda+p0+kc], a[(i+1)*lda+p0:(i+1)*lda+p0+kc],
					a[(i+2)*lda+p0:(i+2)*lda+p0+kc], a[(i+3)*lda+p0:(i+3)*lda+p0+kc])
				continue
			}
			for r := 0; r < mr; r++ {
				if i+r >= m {
					for p := 0; p < kc; p++ {
						d[p*mr+r] = 0
					}
					continue
				}
				if trans {
					for p := 0; p < kc; p++ {
						d[p*mr+r] = alpha * a[(p0+p)*lda+i+r]
					}
				} else {
					row := a[(i+r)*lda+p0 : (i+r)*lda+p0+kc]
					for p, v := range row {
						d[p*mr+r] = alpha * v
					}
				}
			}
		}
	}
}

// interleave4Go sets d[4p+r] = ar[p] for the len(a0) values of four rows
// (mr is 4).
func interleave4Go(d, a0, a1, a2, a3 []float32) {
	a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
	for p := range a0 {
		q := (*[mr]float32)(d[p*mr : p*mr+mr])
		q[0], q[1], q[2], q[3] = a0[p], a1[p], a2[p], a3[p]
	}
}

// packedASize is the number of values packA writes for an m×k matrix.
func packedASize(m, k int) int { return roundUp(m, mr) * k }

// bSource provides nr-column panels of the k×n right-hand operand B.
type bSource interface {
	// panel returns rows [p0, p0+kc) of columns [j, j+w) (w ≤ nr) of B:
	// row p0+p is b[boff[p]:boff[p]+nr], zero past column w (unless the
	// caller ignores those columns), every offset at most maxOff. b is
	// either B itself or a copy packed into buf (kcMax·nr values).
	panel(buf []float32, p0, kc, j, w, nr int) (b []float32, boff []int, maxOff int)
}

// packedOffsets returns the row offsets of a packed panel nr wide: p·nr
// for p < kcMax.
func packedOffsets(nr int) []int {
	if nr == nrMax {
		return packedOffsets48[:]
	}
	if nr == 24 {
		return packedOffsets24[:]
	}
	o := make([]int, kcMax)
	for p := range o {
		o[p] = p * nr
	}
	return o
}

var packedOffsets24, packedOffsets48 = func() (a, b [kcMax]int) {
	for p := range a {
		a[p], b[p] = p*24, p*48
	}
	return a, b
}()

// matrixB is a row-major matrix operand op(B), k×n.
type matrixB struct {
	b     []float32
	ldb   int
	trans bool  // b is stored n×k
	offs  []int // nil, or p·ldb for every row p of B: full panels are read in place
	wide  bool  // with offs: every row is readable nrMax values past column n−1, so partial panels are read in place too
}

func (s *matrixB) panel(buf []float32, p0, kc, j, w, nr int) ([]float32, []int, int) {
	if s.offs != nil && (w == nr || s.wide) {
		return s.b[j:], s.offs[p0 : p0+kc], s.offs[p0+kc-1]
	}
	d := buf[:kc*nr]
	if s.trans {
		for c := 0; c < w; c++ {
			col := s.b[(j+c)*s.ldb+p0 : (j+c)*s.ldb+p0+kc]
			for p, v := range col {
				d[p*nr+c] = v
			}
		}
		if w < nr {
			for p := 0; p < kc; p++ {
				clear(d[p*nr+w : (p+1)*nr])
			}
		}
	} else {
		for p := 0; p < kc; p++ {
			o := (p0+p)*s.ldb + j
			copy(d[p*nr:p*nr+w], s.b[o:o+w])
			clear(d[p*nr+w : (p+1)*nr])
		}
	}
	return d, packedOffsets(nr)[:kc], (kc - 1) * nr
}

// gemmOp is one packed GEMM: C = A·B (+ C when acc), then per-row bias and
// an activation, with A already packed by packA.
type gemmOp struct {
	ks      *kernelSet
	m, n, k int
	kc      int       // depth block of ap
	ap      []float32 // packed A
	// a, when a.a is set, is the A that ap is to hold: run packs it, each
	// worker its own rows when the rows are split (Gemm, whose A changes
	// every call), before computing. Without it ap is packed already
	// (weights).
	a    sourceA
	b    bSource
	c    []float32
	ldc  int
	acc  bool      // accumulate into C
	bias []float32 // nil, or roundUp(m, mr) values
	act  Activation
	// rowW > 0: C's columns are an image's output rows, rowW values each,
	// which B holds bRowW ≥ rowW columns apart (the shifted convolution).
	// Without out (row mode), C holds only those: column j of C is column
	// (j/rowW)·bRowW + j mod rowW of B, and no panel crosses a row. With
	// out, C has B's columns, and each worker copies the rows it computed
	// to out, rowW values of each (the others dropped), when done.
	rowW, bRowW int
	out         []float32
	outLd       int // with out: out's row stride (OutH·OutW)
}

// active counts the kernel calls in progress in this process. It is a
// scheduling hint only (results never depend on it): a call splits its
// work over the cores that no other kernel call is using, so that callers
// already running images in parallel do not oversubscribe the CPU.
var active atomic.Int32

// enter marks the start of a kernel call and leave its end.
func enter() { active.Add(1) }
func leave() { active.Add(-1) }

// Occupy tells the package that the calling goroutine keeps a core busy
// with work of its own until it calls the returned release function, for
// example a caller running the images of a batch in parallel, one per core:
// meanwhile kernel calls split their work over the remaining cores only,
// as they do while another kernel call is in progress. Like all of the
// package's scheduling, it never changes results.
func Occupy() (release func()) {
	enter()
	return leave
}

// parMinFlops is the work below which one call stays on one goroutine.
const parMinFlops = 1 << 20

// workers returns how many goroutines a call doing flops of work may use.
func workers(flops int) int {
	if flops < parMinFlops {
		return 1
	}
	return freeThreads()
}

// freeThreads returns Threads less the other kernel calls in progress
// (active counts the caller's own once it has entered), at least 1.
func freeThreads() int { return max(1, Threads()-int(active.Load())+1) }

// FreeThreads returns how many goroutines a caller outside any kernel call
// may split work over: Threads less the kernel calls in progress and the
// cores held with Occupy (the caller's own included), at least 1.
func FreeThreads() int { return max(1, Threads()-int(active.Load())) }

// packBuf is a buffer for a packed B panel.
type packBuf struct{ b [kcMax * nrMax]float32 }

// run executes the GEMM, on several goroutines when it is large enough.
func (g *gemmOp) run() {
	w := workers(2 * g.m * g.n * g.k)
	mr := g.ks.mr
	// The columns are split in units of whole panels, or of output rows.
	unit := g.ks.nr
	switch {
	case g.rowW > 0 && g.out == nil:
		unit = g.rowW
	case g.rowW > 0:
		unit = g.bRowW
	}
	units := (g.n + unit - 1) / unit
	per := (units + w - 1) / w * unit // columns per worker
	cols := w > 1 && units >= 2*w
	if cols && g.m >= 2*w*mr && (g.rowW == 0 || g.out != nil) {
		// Both splits are possible: the rows when they share the work
		// clearly more evenly. The columns go by whole panels (or rows
		// computed in whole panels), which on small images leaves one
		// worker far more (13×13 = 169 columns in panels of 48: 96 and
		// 73).
		perRow := roundUp((g.m+w-1)/w, mr)
		colShare := float64(g.n) / float64(w*roundUp(per, g.ks.nr))
		rowShare := float64(g.m) / float64(w*perRow)
		cols = rowShare < colShare+0.05
	}
	switch {
	case cols:
		// Split the columns at unit boundaries.
		g.packRows(0, g.m)
		parallel((g.n+per-1)/per, func(t int, sc *workspace) {
			g.part(0, g.m, t*per, min((t+1)*per, g.n), sc.buf.b[:])
		})
	case w > 1 && g.m >= 2*w*mr:
		// Split the rows at panel boundaries.
		per := roundUp((g.m+w-1)/w, mr)
		parallel((g.m+per-1)/per, func(t int, sc *workspace) {
			g.packRows(t*per, (t+1)*per)
			g.part(t*per, min((t+1)*per, g.m), 0, g.n, sc.buf.b[:])
		})
	default:
		g.packRows(0, g.m)
		sc := workspaces.get()
		g.part(0, g.m, 0, g.n, sc.buf.b[:])
		workspaces.put(sc)
	}
}

// sourceA is the unpacked A of a Gemm call: alpha·op(A), A with row stride
// lda, transposed when trans.
type sourceA struct {
	a     []float32
	lda   int
	trans bool
	alpha float32
}

// packRows packs the panels of rows [i0, i1) of g.a into g.ap (i0 a
// multiple of mr; the panels up to i1 rounded up, within A's), if g has an
// A to pack.
func (g *gemmOp) packRows(i0, i1 int) {
	if g.a.a != nil {
		packARows(g.ap, g.a.a, g.a.lda, g.a.trans, g.m, g.k, g.kc, g.a.alpha, i0, min(roundUp(i1, mr), roundUp(g.m, mr)))
	}
}

// part is block, then (with out) the copy of those rows and columns to
// out.
func (g *gemmOp) part(i0, i1, j0, j1 int, buf []float32) {
	g.block(i0, i1, j0, j1, buf)
	if g.out == nil {
		return
	}
	for i := i0; i < i1; i++ {
		for j := j0; j < j1; j += g.bRowW {
			o := i*g.outLd + j/g.bRowW*g.rowW
			copy(g.out[o:o+g.rowW], g.c[i*g.ldc+j:])
		}
	}
}

// block computes rows [i0, i1) and columns [j0, j1) of C; i0 is a multiple
// of the kernel set's mr and j0 of its nr (of a row's length when rowW >
// 0). It takes the rows in blocks whose packed A (rows × kc values) fits
// aBlockMax, to be swept from L2 past every B panel (one block when kc
// came from depthBlock). The blocks change only the order in which
// elements of C are computed, not how.
func (g *gemmOp) block(i0, i1, j0, j1 int, buf []float32) {
	mc := max(g.ks.mr, aBlockMax/g.kc/g.ks.mr*g.ks.mr)
	for ib := i0; ib < i1; ib += mc {
		g.rows(ib, min(i1, ib+mc), j0, j1, buf)
	}
}

// rows is block for one block of rows.
func (g *gemmOp) rows(i0, i1, j0, j1 int, buf []float32) {
	ks := g.ks
	mPad := roundUp(g.m, mr)
	actFlags, lo, hi, alpha := g.act.epilogue()
	ep := epilogue{lo: lo, hi: hi, alpha: alpha}
	for pc := 0; pc < g.k; pc += g.kc {
		kc := min(g.kc, g.k-pc)
		var flags uint64
		if pc > 0 || g.acc {
			flags |= epAccumulate
		}
		if pc+kc == g.k {
			flags |= actFlags
			if g.bias != nil {
				flags |= epBias
			}
		}
		ep.flags = flags
		aBlock := g.ap[pc*mPad : pc*mPad+mPad*kc]
		for j, nw := j0, 0; j < j1; j += nw {
			nw = min(ks.nr, j1-j)
			jb := j // B's column
			if g.rowW > 0 && g.out == nil {
				x := j % g.rowW
				nw = min(nw, g.rowW-x)
				jb = j/g.rowW*g.bRowW + x
			}
			bp, boff, maxOff := g.b.panel(buf, pc, kc, jb, nw, ks.nr)
			if nw <= gemvCols && ks.isa != isaGeneric {
				g.columns(i0, i1, j, nw, kc, aBlock, bp, boff, maxOff, &ep)
				continue
			}
			i := i0
			if t := (i1 - i0) / ks.mr; t >= 2 && ks.isa != isaGeneric {
				// Every full tile of the panel in one call, at the panel's
				// width.
				if g.bias != nil {
					ep.bias = &g.bias[i0]
				}
				if ks.isa == isaAVX2 {
					gemmTilesAVX2(kc, aBlock[i0*kc:], bp, boff, maxOff, g.c[i0*g.ldc+j:], g.ldc, &ep, nw, t, 4*nr)
				} else {
					gemmTilesAVX512(kc, aBlock[i0*kc:], mr*kc, bp, boff, maxOff, g.c[i0*g.ldc+j:], g.ldc, &ep, nw, t, 4*ks.nr)
				}
				i += t * ks.mr
			}
			for ; i < i1; i += ks.mr {
				if g.bias != nil {
					ep.bias = &g.bias[i]
				}
				ks.gemm(kc, aBlock[i*kc:], mr*kc, bp, boff, maxOff, g.c[i*g.ldc+j:], g.ldc, &ep, min(ks.mr, g.m-i), nw, 4*ks.nr)
			}
		}
	}
}

// gemvCols is the widest column panel that block computes column by
// column (gemvFMA: 4-wide FMAs down 8 panels of A at a time) in the
// assembly sets: the micro-kernels compute whole vectors of 16 (avx512) or
// tiles of 24 (avx2) columns, so a panel of a few columns, as the 49th
// column of a Winograd GEMM over a 13×13 image's 49 tiles, would cost as
// much as 16 or 24.
const gemvCols = 4

// columns computes rows [i0, i1) of the nw columns j… of C for one depth
// block (kc deep, packed A block aBlock, B panel bp with row offsets boff),
// one column at a time, with the epilogue ep: each element as the
// micro-kernels compute it.
func (g *gemmOp) columns(i0, i1, j, nw, kc int, aBlock, bp []float32, boff []int, maxOff int, ep *epilogue) {
	const rowsMax = 512 // rows per gemvFMA call (a multiple of mr)
	var t [rowsMax]float32
	for c := 0; c < nw; c++ {
		for r0 := i0; r0 < i1; r0 += rowsMax {
			rows := min(rowsMax, i1-r0)
			if ep.flags&epAccumulate != 0 {
				for r := range rows {
					t[r] = g.c[(r0+r)*g.ldc+j+c]
				}
			}
			if g.bias != nil {
				ep.bias = &g.bias[r0]
			}
			gemvFMA(kc, aBlock[r0*kc:], mr*kc, (rows+mr-1)/mr, bp[c:], boff, maxOff, t[:], ep)
			for r := range rows {
				g.c[(r0+r)*g.ldc+j+c] = t[r]
			}
		}
	}
}

// kernelGo is the portable micro-kernel: c (an mr×nr tile with row stride
// ldc) = a·b (k deep; a packed mr-interleaved, row p of b at b[boff[p]:]),
// then the epilogue. It has the semantics of the assembly kernels.
func kernelGo(k int, a, b []float32, boff []int, c []float32, ldc int, ep *epilogue) {
	var acc [mr][nr]float32
	a = a[:k*mr]
	for p, o := range boff[:k] {
		bp := (*[nr]float32)(b[o : o+nr])
		ap := (*[mr]float32)(a[p*mr:])
		for r := 0; r < mr; r++ {
			av := ap[r]
			row := &acc[r]
			for j := 0; j < nr; j++ {
				row[j] += av * bp[j]
			}
		}
	}
	var bias []float32
	if ep.flags&epBias != 0 {
		bias = unsafe.Slice(ep.bias, mr)
	}
	for r := 0; r < mr; r++ {
		crow := c[r*ldc : r*ldc+nr]
		row := &acc[r]
		for j := range crow {
			x := row[j]
			if ep.flags&epAccumulate != 0 {
				x += crow[j]
			}
			if bias != nil {
				x += bias[r]
			}
			if ep.flags&epMaxLo != 0 && ep.lo > x {
				x = ep.lo
			}
			if ep.flags&epMinHi != 0 && ep.hi < x {
				x = ep.hi
			}
			if ep.flags&epLeaky != 0 && x < 0 {
				x *= ep.alpha
			}
			crow[j] = x
		}
	}
}
