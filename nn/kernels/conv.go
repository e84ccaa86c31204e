package kernels

import (
	"fmt"
	"slices"
)

// Conv is a convolution with fixed weights, bias and activation, prepared
// once and run many times. NewConv chooses a strategy from the shape, in
// this order (Strategy names it):
//
//   - groups with fewer than 4 output channels each (depthwise and
//     similar): "direct" loops;
//   - 1×1 kernels with stride 1 and no padding: "pointwise-gemm", a GEMM
//     straight on the NCHW input (no im2col, no packing of B);
//   - 3×3 stride-1 undilated kernels (one group) where it is faster (see
//     winogradPays): "winograd-f2x2", Winograd F(2×2, 3×3);
//   - other kernels: "shifted-gemm", a GEMM straight on a zero-padded copy
//     of the input split into stride phases (for stride s, s² planes per
//     channel holding every s-th row and column), computed at every column
//     of the phase planes' width (the few extra columns are dropped by each
//     worker from the output rows it computed) or, on wide images where
//     that computes no more, row by row straight into the output (see
//     rowModePays). Each depth step (tap, channel) reads a shifted view of
//     one phase plane, so there is no im2col and no packing of B;
//   - unless those extra columns would exceed a quarter of the work (very
//     narrow images): "im2col-gemm", a GEMM whose right-hand operand is
//     packed straight from the image (im2col fused into the packing of B,
//     panel by panel, so the unrolled matrix is never materialised).
//
// Weights are packed for the GEMM micro-kernel at NewConv time, with the bias
// and activation applied in the micro-kernel's epilogue. A Conv is safe for
// concurrent use. Forward allocates no buffers after warm-up (its scratch is
// pooled per Conv); only when it splits work over goroutines does it
// allocate the few small objects of starting them.
type Conv struct {
	ks       *kernelSet // the kernel set in use when NewConv ran
	s        ConvShape
	act      Activation
	m, k, n  int       // per-group GEMM: out channels, icg·KH·KW, columns (OutH·OutW; OutH·wph when shifted)
	strategy strategy  // how Forward runs
	kc       int       // depth block of ap
	ap       []float32 // packed weights, group g at g·packedASize(m, k)
	bias     []float32 // nil, or roundUp(m, mr) values per group
	weight   []float32 // ONNX layout, for the direct strategy
	rawBias  []float32 // nil or OutC values, for the direct strategy
	segs     []convSeg // im2col packing plan, see imageB
	segStart []int32   // panel q's segments are segs[segStart[q]:segStart[q+1]]
	offs     []int     // B row offsets (pointwise: p·n; shifted: see shiftB)
	hp, wp   int       // shifted: padded input size
	hph, wph int       // shifted: size of one stride phase plane
	padLen   int       // shifted: values of the padded input buffer
	maxOff   int       // shifted: largest of offs
	rowMode  bool      // shifted: the GEMM writes the output rows in place (see rowModePays)
	rowPhase []bool    // shifted: which row phases (of StrideH) taps read
	colPhase []bool    // shifted: which column phases (of StrideW) taps read
	wino     *winograd // Winograd state
	// shifted: the bands of output rows for 2…maxPlanWorkers workers (see
	// convband.go), nil where there are none
	bands [maxPlanWorkers + 1]*shiftBands
	calls freeList[convCall]
}

type strategy int

const (
	stratAuto      strategy = iota // chosen by NewConv
	stratPointwise                 // 1×1, stride 1, no pad: GEMM on the input
	stratShifted                   // GEMM on the padded, phase-split input
	stratIm2col                    // GEMM with B packed from the image
	stratDirect                    // direct loops (tiny per-group GEMMs)
	stratWinograd                  // Winograd F(2×2, 3×3), see winograd.go
	stratReference                 // the naive implementation (refkernels builds)
)

func (s strategy) String() string {
	switch s {
	case stratPointwise:
		return "pointwise-gemm"
	case stratShifted:
		return "shifted-gemm"
	case stratWinograd:
		return "winograd-f2x2"
	case stratIm2col:
		return "im2col-gemm"
	case stratReference:
		return "reference"
	}
	return "direct"
}

// convSeg is a run of output positions of one B panel lying on one output
// row: columns [col, col+len) of the panel, the first at input row iy and
// column ix before adding the kernel tap's offset.
type convSeg struct {
	col, len, iy, ix int32
}

// convCall is the per-call state of Forward (recycled: no allocation per call).
type convCall struct {
	g   gemmOp
	mat matrixB
	img imageB
	sh  shiftB
	// scratch holds the shifted strategy's padded input and padded-width
	// output (allocated on first use; a Conv's calls all need the same).
	scratch []float32
	// pads holds the Winograd blocks' padded input rows, one buffer per
	// part of the work (see forwardWinograd), laid out for padPlan (zero:
	// not yet).
	pads    [][]float32
	padPlan winoPlan
	pool    winoPool // ConvMaxPool's pooling of a Winograd convolution
	// The shifted strategy in bands: each band's padded input and
	// compacted output in a buffer of its own, laid out for bandPlan (nil:
	// not yet), and the bands' state.
	bandBufs [][]float32
	bandPlan *shiftBands
	bandOps  []bandOp
}

// NewConv prepares a convolution. weight has ONNX layout
// [OutC, InC/Groups, KH, KW]; bias is nil or has OutC values. The slices are
// not retained: the kernel keeps its own copy.
func NewConv(s ConvShape, weight, bias []float32, act Activation) (*Conv, error) {
	return newConv(s, weight, bias, act, stratAuto)
}

// newConv is NewConv with a forced strategy (for tests and benchmarks);
// stratAuto chooses. A strategy that cannot run the shape is an error.
func newConv(s ConvShape, weight, bias []float32, act Activation, strat strategy) (*Conv, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if want := s.OutC * (s.InC / s.Groups) * s.KH * s.KW; len(weight) != want {
		return nil, fmt.Errorf("kernels: conv weight has %d values, shape %+v needs %d", len(weight), s, want)
	}
	if bias != nil && len(bias) != s.OutC {
		return nil, fmt.Errorf("kernels: conv bias has %d values, want %d", len(bias), s.OutC)
	}
	switch act.Kind {
	case ActNone, ActRelu, ActLeakyRelu, ActClip:
	default:
		return nil, fmt.Errorf("kernels: unknown activation kind %d", act.Kind)
	}
	c := &Conv{
		ks: activeSet(), s: s, act: act,
		m: s.OutC / s.Groups, k: s.InC / s.Groups * s.KH * s.KW, n: s.OutH() * s.OutW(),
	}
	pointwise := s.KH == 1 && s.KW == 1 && s.StrideH == 1 && s.StrideW == 1 &&
		s.PadTop == 0 && s.PadLeft == 0 && s.PadBottom == 0 && s.PadRight == 0
	c.hp, c.wp = s.InH+s.PadTop+s.PadBottom, s.InW+s.PadLeft+s.PadRight
	c.hph, c.wph = ceilDiv(c.hp, s.StrideH), ceilDiv(c.wp, s.StrideW)
	switch {
	case strat != stratAuto:
	case refKernels:
		strat = stratReference
	case c.m < mr && s.Groups > 1:
		strat = stratDirect
	case pointwise:
		strat = stratPointwise
	case winogradApplies(s) && winogradPays(s):
		strat = stratWinograd
	case 4*(c.wph-s.OutW()) <= c.wph:
		strat = stratShifted
	default:
		strat = stratIm2col
	}
	if (strat == stratPointwise && !pointwise) || (strat == stratWinograd && !winogradApplies(s)) {
		return nil, fmt.Errorf("kernels: conv shape %+v: strategy %s does not apply", s, strat)
	}
	c.strategy = strat
	if strat == stratWinograd {
		c.prepareWinograd(weight, bias)
		return c, nil
	}
	if c.strategy == stratDirect || c.strategy == stratReference {
		c.weight = append([]float32(nil), weight...)
		if bias != nil {
			c.rawBias = append([]float32(nil), bias...)
		}
		return c, nil
	}
	per := packedASize(c.m, c.k)
	c.ap = make([]float32, s.Groups*per)
	c.kc = depthBlock(c.m)
	mPad := roundUp(c.m, mr)
	kk, icg := s.KH*s.KW, s.InC/s.Groups
	if c.strategy == stratShifted {
		// Depth order (tap, channel): reorder the weights to match.
		w := make([]float32, len(weight))
		for o := 0; o < s.OutC; o++ {
			for ch := 0; ch < icg; ch++ {
				for t := 0; t < kk; t++ {
					w[o*c.k+t*icg+ch] = weight[o*c.k+ch*kk+t]
				}
			}
		}
		weight = w
		c.rowPhase, c.colPhase = make([]bool, s.StrideH), make([]bool, s.StrideW)
		for ky := 0; ky < s.KH; ky++ {
			c.rowPhase[ky*s.DilH%s.StrideH] = true
		}
		for kx := 0; kx < s.KW; kx++ {
			c.colPhase[kx*s.DilW%s.StrideW] = true
		}
		c.n = s.OutH() * c.wph // every column of the phase planes
		c.offs, c.maxOff, c.padLen = c.shiftLayout(c.hph, s.OutH())
		c.rowMode = c.wph != s.OutW() && c.ks.rowModePays(s.OutW(), c.wph)
		c.planBands()
	}
	if c.strategy == stratPointwise {
		c.offs = make([]int, c.k)
		for p := range c.offs {
			c.offs[p] = p * c.n
		}
	}
	if bias != nil {
		c.bias = make([]float32, s.Groups*mPad)
	}
	for g := 0; g < s.Groups; g++ {
		packA(c.ap[g*per:], weight[g*c.m*c.k:], c.k, false, c.m, c.k, c.kc, 1)
		if bias != nil {
			copy(c.bias[g*mPad:], bias[g*c.m:(g+1)*c.m])
		}
	}
	if c.strategy == stratIm2col {
		c.planSegments()
	}
	return c, nil
}

// planSegments splits every nr-column panel of the output positions into
// runs lying on one output row.
func (c *Conv) planSegments() {
	s, nr := c.s, c.ks.nr
	ow := s.OutW()
	panels := (c.n + nr - 1) / nr
	c.segStart = make([]int32, panels+1)
	for q := 0; q < panels; q++ {
		c.segStart[q] = int32(len(c.segs))
		for j := q * nr; j < min((q+1)*nr, c.n); {
			oy, ox := j/ow, j%ow
			l := min(ow-ox, (q+1)*nr-j, c.n-j)
			c.segs = append(c.segs, convSeg{
				col: int32(j - q*nr), len: int32(l),
				iy: int32(oy*s.StrideH - s.PadTop), ix: int32(ox*s.StrideW - s.PadLeft),
			})
			j += l
		}
	}
	c.segStart[panels] = int32(len(c.segs))
}

// Flops returns the floating-point operations of one image, counted as
// Flops (the package function) counts them: 2 per multiply-add of the
// direct method.
func (c *Conv) Flops() uint64 {
	s := c.s
	return 2 * uint64(s.OutC) * uint64(s.OutH()*s.OutW()) * uint64(s.InC/s.Groups*s.KH*s.KW)
}

// Shape returns the convolution's shape.
func (c *Conv) Shape() ConvShape { return c.s }

// Strategy names the algorithm NewConv chose ("pointwise-gemm",
// "shifted-gemm", "winograd-f2x2", "im2col-gemm", "direct", or "reference"
// in refkernels builds).
func (c *Conv) Strategy() string { return c.strategy.String() }

// Forward computes dst = act(conv(src) + bias) for a batch of n images.
// src is [n, InC, InH, InW] and dst is [n, OutC, OutH, OutW]. Forward panics
// when a slice is shorter than that.
func (c *Conv) Forward(dst, src []float32, n int) {
	c.check("Forward", dst, src, nil, n)
	c.forward(dst, src, nil, n)
}

// ForwardAdd computes dst = act(conv(src) + bias + res) for a batch of n
// images: the convolution followed by the element-wise addition of res
// (shaped like dst, e.g. a residual connection) and then the activation,
// fused into one pass over the output. res may be dst itself (the same
// slice, computing in place); it must not otherwise overlap dst. src must
// not overlap dst. ForwardAdd panics when a slice is shorter than n
// images need.
func (c *Conv) ForwardAdd(dst, src, res []float32, n int) {
	c.check("ForwardAdd", dst, src, res, n)
	c.forward(dst, src, res, n)
}

// check panics unless the slices hold n images (res only when non-nil).
func (c *Conv) check(name string, dst, src, res []float32, n int) {
	s := c.s
	isz, osz := s.InC*s.InH*s.InW, s.OutC*s.OutH()*s.OutW()
	if n < 0 || len(src) < n*isz || len(dst) < n*osz {
		panic(fmt.Sprintf("kernels: Conv.%s: %d images need %d input and %d output values, have %d and %d",
			name, n, n*isz, n*osz, len(src), len(dst)))
	}
	if res != nil && len(res) < n*osz {
		panic(fmt.Sprintf("kernels: Conv.%s: %d images need %d residual values, have %d", name, n, n*osz, len(res)))
	}
}

// addAct sets dst[i] = act(x[i] + r[i]); dst may be x or r.
func addAct(dst, x, r []float32, act Activation) {
	x, r = x[:len(dst)], r[:len(dst)]
	switch act.Kind {
	case ActNone:
		for i := range dst {
			dst[i] = x[i] + r[i]
		}
	case ActRelu:
		for i := range dst {
			dst[i] = max(x[i]+r[i], 0)
		}
	default:
		for i := range dst {
			dst[i] = act.apply1(x[i] + r[i])
		}
	}
}

// forward is Forward (res nil) and ForwardAdd.
func (c *Conv) forward(dst, src, res []float32, n int) {
	s := c.s
	isz, osz := s.InC*s.InH*s.InW, s.OutC*s.OutH()*s.OutW()
	if n == 0 {
		return
	}
	flops.Add(uint64(n) * c.Flops())
	enter()
	defer leave()
	// resAt returns image b's residual, nil without one.
	resAt := func(b int) []float32 {
		if res == nil {
			return nil
		}
		return res[b*osz : (b+1)*osz]
	}
	switch c.strategy {
	case stratReference:
		c.reference(dst, src, res, n)
		return
	case stratDirect:
		for b := 0; b < n; b++ {
			c.direct(dst[b*osz:(b+1)*osz], src[b*isz:(b+1)*isz], resAt(b))
		}
		return
	}
	call := c.calls.get()
	if c.strategy == stratWinograd {
		for b := 0; b < n; b++ {
			c.forwardWinograd(call, dst[b*osz:(b+1)*osz], src[b*isz:(b+1)*isz], resAt(b), nil)
		}
		c.calls.put(call)
		return
	}
	icg := s.InC / s.Groups
	per := packedASize(c.m, c.k)
	mPad := roundUp(c.m, mr)
	oh, ow := s.OutH(), s.OutW()
	// The shifted strategy's GEMM computes phase-plane rows wider than the
	// output's (narrow): in row mode straight into the output, otherwise
	// into cbuf, from which each worker copies its rows (compact).
	narrow := c.strategy == stratShifted && c.wph != ow
	compact := narrow && !c.rowMode
	var pad, cbuf []float32
	var bands *shiftBands
	if c.strategy == stratShifted {
		bands = c.bandPlan(2 * c.m * c.n * c.k)
	}
	if c.strategy == stratShifted && bands == nil {
		if call.scratch == nil {
			n := c.padLen
			if compact {
				n += c.m * c.n
			}
			call.scratch = make([]float32, n)
		}
		// padInput writes the same positions at every call: the borders
		// of pad stay zero from its allocation.
		pad, cbuf = call.scratch[:c.padLen], call.scratch[c.padLen:]
	}
	for b := 0; b < n; b++ {
		for g := 0; g < s.Groups; g++ {
			in := src[b*isz+g*icg*s.InH*s.InW : b*isz+(g+1)*icg*s.InH*s.InW]
			out := dst[b*osz+g*c.m*oh*ow : b*osz+(g+1)*c.m*oh*ow]
			var r []float32 // this group's residual
			if res != nil {
				r = res[b*osz+g*c.m*oh*ow : b*osz+(g+1)*c.m*oh*ow]
			}
			var bias []float32
			if c.bias != nil {
				bias = c.bias[g*mPad : (g+1)*mPad]
			}
			if bands != nil {
				c.forwardBands(call, bands, out, in, r, c.ap[g*per:(g+1)*per], bias)
				continue
			}
			call.g = gemmOp{ks: c.ks, m: c.m, n: c.n, k: c.k, kc: c.kc, ap: c.ap[g*per : (g+1)*per], c: out, ldc: c.n, bias: bias, act: c.act}
			if narrow {
				call.g.rowW, call.g.bRowW = ow, c.wph
				if c.rowMode {
					call.g.n, call.g.ldc = oh*ow, oh*ow
				}
			}
			switch {
			case r == nil:
			case compact:
				c.scatterRes(cbuf, c.n, r, 0, oh)
				call.g.acc = true
			default:
				// Accumulate into C = res.
				if &r[0] != &out[0] {
					copy(out, r)
				}
				call.g.acc = true
			}
			switch c.strategy {
			case stratPointwise:
				call.mat = matrixB{b: in, ldb: c.n, offs: c.offs}
				call.g.b = &call.mat
			case stratShifted:
				c.padImage(pad, in, icg)
				call.sh = shiftB{pad: pad, offs: c.offs, maxOff: c.maxOff}
				call.g.b = &call.sh
				if compact {
					call.g.c, call.g.out, call.g.outLd = cbuf, out, oh*ow
				}
			default:
				call.img = imageB{c: c, in: in}
				call.g.b = &call.img
			}
			call.g.run()
		}
	}
	call.g, call.mat, call.img, call.sh = gemmOp{}, matrixB{}, imageB{}, shiftB{}
	c.calls.put(call)
}

// scatterRes copies output rows [y0, y1) of the residual r (one group's)
// into the padded-width buffer cb of a compacted shifted GEMM (channel o's
// rows from cb[o·ldc:], wph values apart), zeroing the columns dropped
// afterwards, for the GEMM to accumulate into.
func (c *Conv) scatterRes(cb []float32, ldc int, r []float32, y0, y1 int) {
	oh, ow := c.s.OutH(), c.s.OutW()
	for o := 0; o < c.m; o++ {
		for y := y0; y < y1; y++ {
			row := cb[o*ldc+(y-y0)*c.wph : o*ldc+(y-y0+1)*c.wph]
			copy(row, r[(o*oh+y)*ow:(o*oh+y+1)*ow])
			clear(row[ow:])
		}
	}
}

// shiftLayout returns the B row offsets of the shifted strategy (see
// shiftB) for phase planes of ph rows, the largest of them, and the size
// of the padded buffer that the GEMM over rows output rows reads (the
// planes, or the columns it reads past them).
func (c *Conv) shiftLayout(ph, rows int) (offs []int, maxOff, padLen int) {
	s := c.s
	icg, plane := s.InC/s.Groups, ph*c.wph
	offs = make([]int, c.k)
	for t := 0; t < s.KH*s.KW; t++ {
		dy, dx := t/s.KW*s.DilH, t%s.KW*s.DilW
		for ch := 0; ch < icg; ch++ {
			phase := (ch*s.StrideH+dy%s.StrideH)*s.StrideW + dx%s.StrideW
			o := phase*plane + dy/s.StrideH*c.wph + dx/s.StrideW
			offs[t*icg+ch] = o
			maxOff = max(maxOff, o)
		}
	}
	nr := c.ks.nr
	return offs, maxOff, max(icg*s.StrideH*s.StrideW*plane, roundUp(rows*c.wph, nr)+maxOff+nr)
}

// padImage runs padInput over channels [0, icg) and the whole height, on
// several goroutines when the copy is large.
func (c *Conv) padImage(pad, in []float32, icg int) {
	if w := copyWorkers(icg * c.s.InH * c.s.InW); w > 1 {
		ParallelFor(icg, w, func(ch0, ch1 int) { c.padInput(pad, in, ch0, ch1, 0, c.hph, c.hph) })
		return
	}
	c.padInput(pad, in, 0, icg, 0, c.hph, c.hph)
}

// padInput scatters one group's input channels into the zero-padded,
// phase-split buffer pad: padded pixel (row, col) of channel ch goes to
// phase plane (ch, row mod StrideH, col mod StrideW) at (row/StrideH,
// col/StrideW). Phases that no kernel tap reads are skipped. The borders of
// pad are zero and stay so. It copies channels [ch0, ch1) and the rows
// [r0, r1) of the phase planes, into planes of ph rows whose row 0 is
// phase-plane row r0 (the whole image: 0, hph, hph; a band of output
// rows: see shiftBands).
func (c *Conv) padInput(pad, in []float32, ch0, ch1, r0, r1, ph int) {
	s := c.s
	sh, sw := s.StrideH, s.StrideW
	plane := ph * c.wph
	// The input rows whose padded rows fall in phase-plane rows [r0, r1).
	y0, y1 := max(0, r0*sh-s.PadTop), min(s.InH, r1*sh-s.PadTop)
	if y0 >= y1 {
		return
	}
	if sh == 1 && sw == 1 {
		// One phase: a plain copy of the rows into the padded planes.
		for ch := ch0; ch < ch1; ch++ {
			d := pad[ch*plane+(y0+s.PadTop-r0)*c.wph+s.PadLeft:]
			src := in[ch*s.InH*s.InW : (ch+1)*s.InH*s.InW]
			for y := y0; y < y1; y++ {
				copy(d[(y-y0)*c.wph:(y-y0)*c.wph+s.InW], src[y*s.InW:(y+1)*s.InW])
			}
		}
		return
	}
	if sh == 2 && sw == 2 {
		// Each row phase of a channel: every other input row, its columns
		// split into the two column phases by one vector copy (also when
		// no tap reads one of them, as in a 1×1 stride-2 convolution: its
		// plane is there, unread, and the vector copy is faster than a
		// scalar loop over the other).
		px := s.PadLeft % 2 // the column phase of input column 0
		for ch := ch0; ch < ch1; ch++ {
			for rp := 0; rp < 2; rp++ {
				if !c.rowPhase[rp] {
					continue
				}
				ya := y0 + ((rp-y0-s.PadTop)%2+2)%2 // first input row of this row phase
				if ya >= y1 {
					continue
				}
				rows := (y1 - ya + 1) / 2
				base := (ch*2+rp)*2*plane + ((ya+s.PadTop)/2-r0)*c.wph
				a := pad[base+px*plane+s.PadLeft/2:]         // even input columns
				b := pad[base+(1-px)*plane+(s.PadLeft+1)/2:] // odd ones
				deinterleave(c.ks, a, b, in[(ch*s.InH+ya)*s.InW:], s.InW, rows, 2*s.InW, c.wph)
			}
		}
		return
	}
	// Rows that split evenly into every column phase of a stride of 8 or
	// more (no left padding, a width of sw·wph: patch embeddings such as
	// ViT's 16×16, whose kernel is their stride): a row is a wph×sw matrix
	// whose transpose holds the phases' rows one after the other, moved by
	// transposeCols' 8×8 register blocks through a buffer on the stack
	// instead of a strided loop per phase (narrower strides have no whole
	// 8×8 block: the loop is faster). With a stride that is a multiple of
	// 8 and at least 8 patches a row, transposeStrip8 writes the transpose
	// straight into the phase planes (plane values apart), in strips of 8
	// patches, the last at wph − 8 (overlapping the one before when wph is
	// no multiple of 8: values written twice, the same) instead of through the
	// buffer and a copy per phase: a ViT /16 patch embedding's 3×224×224
	// input 134–163 → 22–29 µs on one thread (AMD EPYC Zen 4).
	var buf [transposeRowMax]float32
	whole := s.PadLeft == 0 && s.InW == sw*c.wph && s.InW <= len(buf) && !slices.Contains(c.colPhase, false)
	even := sw >= 8 && whole
	strips := even && sw%8 == 0 && c.wph >= 8 && c.ks.isa != isaGeneric
	// Stride 4 on such rows (ConvNeXt's 4×4 patchify stem): deinterleave
	// twice, the row into its even and odd columns (phases 0 and 2, 1 and
	// 3, interleaved), then each of those into its two phases' planes,
	// instead of the strided loop per phase: ConvNeXt's 3×224×224 input
	// 111–129 → 30–43 µs on one thread (AMD EPYC Zen 4; the whole model's
	// change within the noise of its 4 ms).
	quad := sw == 4 && whole
	for ch := ch0; ch < ch1; ch++ {
		for y := y0; y < y1; y++ {
			row := y + s.PadTop
			if !c.rowPhase[row%sh] {
				continue
			}
			src := in[(ch*s.InH+y)*s.InW : (ch*s.InH+y+1)*s.InW]
			base := (ch*sh+row%sh)*sw*plane + (row/sh-r0)*c.wph
			if sw == 1 {
				copy(pad[base+s.PadLeft:], src)
				continue
			}
			if strips {
				// Patches [i, i+8) of the row, i stepping by 8 and last at
				// wph−8: D[px][x'] = src[x'·sw + px] at pad[base + px·plane
				// + x'].
				_ = pad[base+(sw-1)*plane+c.wph-1]
				for i := 0; ; i = min(i+8, c.wph-8) {
					transposeStrip8(&pad[base+i], &src[i*sw], sw, plane, sw/8)
					if i == c.wph-8 {
						break
					}
				}
				continue
			}
			if quad {
				half := 2 * c.wph
				t := buf[:s.InW]
				deinterleave(c.ks, t[:half], t[half:], src, s.InW, 1, s.InW, half)
				deinterleave(c.ks, pad[base:], pad[base+2*plane:], t[:half], half, 1, half, c.wph)
				deinterleave(c.ks, pad[base+plane:], pad[base+3*plane:], t[half:], half, 1, half, c.wph)
				continue
			}
			if even {
				t := buf[:s.InW]
				transposeCols(t, src, c.wph, sw, 0, sw)
				for px := 0; px < sw; px++ {
					copy(pad[base+px*plane:base+px*plane+c.wph], t[px*c.wph:])
				}
				continue
			}
			for px := 0; px < sw; px++ {
				if !c.colPhase[px] {
					continue
				}
				// Input columns x with (x+PadLeft) mod sw = px.
				x0 := ((px-s.PadLeft)%sw + sw) % sw
				if x0 >= len(src) {
					continue
				}
				dst := pad[base+px*plane+(x0+s.PadLeft)/sw:]
				for i, x := 0, x0; x < len(src); i, x = i+1, x+sw {
					dst[i] = src[x]
				}
			}
		}
	}
}

// transposeRowMax is the widest input row padInput splits into its column
// phases by a transpose (values).
const transposeRowMax = 1024

// shiftB is the B operand of the shifted strategy: row p (tap, channel) of
// column j is pad[j+offs[p]], j indexing the output positions over the
// phase planes' width.
type shiftB struct {
	pad    []float32
	offs   []int
	maxOff int
}

func (sb *shiftB) panel(_ []float32, p0, kc, j, _, _ int) ([]float32, []int, int) {
	return sb.pad[j:], sb.offs[p0 : p0+kc], sb.maxOff
}

// imageB is the im2col matrix of one image (one group's channels) as a
// GEMM operand, packed block by block without being materialised.
type imageB struct {
	c  *Conv
	in []float32 // icg channels of InH×InW
}

func (ib *imageB) panel(buf []float32, p0, kc, j, _, nr int) ([]float32, []int, int) {
	c, s := ib.c, ib.c.s
	kk := s.KH * s.KW
	h, w := s.InH, s.InW
	q := j / nr
	segs := c.segs[c.segStart[q]:c.segStart[q+1]]
	end := int(segs[len(segs)-1].col + segs[len(segs)-1].len)
	d := buf[:kc*nr]
	for p := 0; p < kc; p++ {
		ch, tap := (p0+p)/kk, (p0+p)%kk
		dy, dx := int32(tap/s.KW*s.DilH), int32(tap%s.KW*s.DilW)
		plane := ib.in[ch*h*w : (ch+1)*h*w]
		dp := d[p*nr : (p+1)*nr]
		if end < nr {
			clear(dp[end:])
		}
		for _, sg := range segs {
			out := dp[sg.col : sg.col+sg.len]
			iy := int(sg.iy + dy)
			if iy < 0 || iy >= h {
				clear(out)
				continue
			}
			row := plane[iy*w : (iy+1)*w]
			ix := int(sg.ix + dx)
			if s.StrideW == 1 {
				lo, hi := max(0, -ix), min(len(out), w-ix)
				if lo >= hi {
					clear(out)
					continue
				}
				if lo == 0 && hi == nr {
					copy(out, row[ix:ix+nr])
					continue
				}
				clear(out[:lo])
				copy(out[lo:hi], row[ix+lo:ix+hi])
				clear(out[hi:])
				continue
			}
			sw := s.StrideW
			lo, hi := max(0, ceilDiv(-ix, sw)), min(len(out), ceilDiv(w-ix, sw))
			if lo >= hi {
				clear(out)
				continue
			}
			clear(out[:lo])
			src := row[ix+lo*sw : ix+(hi-1)*sw+1]
			dst := out[lo:hi]
			if sw == 2 {
				for t := range dst {
					dst[t] = src[2*t]
				}
			} else {
				for t := range dst {
					dst[t] = src[t*sw]
				}
			}
			clear(out[hi:])
		}
	}
	return d, packedOffsets(nr)[:kc], (kc - 1) * nr
}

// direct computes one image with plain loops (used when each group has
// fewer than mr output channels, e.g. depthwise convolutions), adding res
// (nil, or dst's shape; may be dst) before the activation.
func (c *Conv) direct(dst, src, res []float32) {
	s := c.s
	oh, ow := s.OutH(), s.OutW()
	icg := s.InC / s.Groups
	for o := 0; o < s.OutC; o++ {
		g := o / c.m
		plane := dst[o*oh*ow : (o+1)*oh*ow]
		var b0 float32
		if c.rawBias != nil {
			b0 = c.rawBias[o]
		}
		if res != nil {
			r := res[o*oh*ow : (o+1)*oh*ow]
			for i := range plane {
				plane[i] = b0 + r[i]
			}
		} else {
			for i := range plane {
				plane[i] = b0
			}
		}
		for ci := 0; ci < icg; ci++ {
			in := src[(g*icg+ci)*s.InH*s.InW : (g*icg+ci+1)*s.InH*s.InW]
			wk := c.weight[(o*icg+ci)*s.KH*s.KW : (o*icg+ci+1)*s.KH*s.KW]
			for ky := 0; ky < s.KH; ky++ {
				for kx := 0; kx < s.KW; kx++ {
					wv := wk[ky*s.KW+kx]
					// Output columns whose input column is in range.
					x0 := max(0, ceilDiv(s.PadLeft-kx*s.DilW, s.StrideW))
					x1 := min(ow, ceilDiv(s.InW+s.PadLeft-kx*s.DilW, s.StrideW))
					for y := 0; y < oh; y++ {
						iy := y*s.StrideH - s.PadTop + ky*s.DilH
						if iy < 0 || iy >= s.InH || x0 >= x1 {
							continue
						}
						row := in[iy*s.InW : (iy+1)*s.InW]
						orow := plane[y*ow : (y+1)*ow]
						ix := x0*s.StrideW - s.PadLeft + kx*s.DilW
						for x := x0; x < x1; x++ {
							orow[x] += wv * row[ix]
							ix += s.StrideW
						}
					}
				}
			}
		}
		c.act.Apply(plane)
	}
}

// ceilDiv returns ⌈a/b⌉ for b > 0.
func ceilDiv(a, b int) int {
	if a <= 0 {
		return -((-a) / b)
	}
	return (a + b - 1) / b
}

// reference runs the naive implementation (refkernels builds), adding res
// (nil, or dst's shape; may be dst) before the activation.
func (c *Conv) reference(dst, src, res []float32, n int) {
	if res == nil {
		naiveConv(c.s, c.weight, c.rawBias, c.act, dst, src, n)
		return
	}
	osz := c.s.OutC * c.s.OutH() * c.s.OutW()
	r := res[:n*osz]
	if &r[0] == &dst[0] {
		r = append([]float32(nil), r...)
	}
	naiveConv(c.s, c.weight, c.rawBias, Activation{}, dst, src, n)
	addAct(dst[:n*osz], dst, r, c.act)
}

// rowModePays reports whether the shifted strategy computes an image's
// outW-wide output rows in place, row by row (row mode: no panel crosses a
// row, so a row's last panel is partial), rather than every column of the
// phase planes' bRowW-wide rows into a buffer, compacted afterwards. Row
// mode saves the compaction, a pass over the output, and computes no more
// when the partial panels cost no more than the dropped columns: the avx512
// set computes a partial panel as masked 16-column vectors, the others as
// a whole tile. (Both compute every output value the same way.)
func (s *kernelSet) rowModePays(outW, bRowW int) bool {
	v := s.nr
	if s.isa == isaAVX512 {
		v = 16
	}
	return outW >= s.nr && roundUp(outW, v) <= bRowW
}
