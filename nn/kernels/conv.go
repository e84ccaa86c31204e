package kernels

import "fmt"

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
