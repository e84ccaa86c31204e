//go:build gpu

package nn

import (
	"errors"

	"github.com/amt-dev/amt/nn/cuda"
)

// errNoDeviceOp marks an op that the GPU does not implement as described
// (it runs on the CPU instead), as opposed to a failure of the GPU;
// errCPUOp one kept on the CPU by LoadOptions.CPUOps.
var (
	errNoDeviceOp = errors.New("no GPU implementation")
	errCPUOp      = errors.New("kept on the CPU (LoadOptions.CPUOps)")
)

// The device's element-wise operators.
var (
	cudaUnary = map[string]cuda.UnaryOp{
		"Abs": cuda.UnaryAbs, "Ceil": cuda.UnaryCeil, "Clip": cuda.UnaryClip, "Elu": cuda.UnaryElu,
		"Exp": cuda.UnaryExp, "Floor": cuda.UnaryFloor, "HardSigmoid": cuda.UnaryHardSigmoid,
		"LeakyRelu": cuda.UnaryLeakyRelu, "Log": cuda.UnaryLog, "Neg": cuda.UnaryNeg,
		"Reciprocal": cuda.UnaryReciprocal, "Relu": cuda.UnaryRelu, "Sigmoid": cuda.UnarySigmoid,
		"Sqrt": cuda.UnarySqrt, "Tanh": cuda.UnaryTanh,
	}
	cudaBinary = map[string]cuda.BinaryOp{
		"Add": cuda.BinaryAdd, "Sub": cuda.BinarySub, "Mul": cuda.BinaryMul, "Div": cuda.BinaryDiv, "Pow": cuda.BinaryPow,
	}
	cudaReduce = map[string]cuda.ReduceOp{"sum": cuda.ReduceSum, "mean": cuda.ReduceMean, "max": cuda.ReduceMax}
)

// maxDeviceRank is the largest rank the device's broadcasting, transposing
// and gathering kernels take without merging axes (AMT_MAX_DIMS).
const maxDeviceRank = 6

// deviceOp prepares op r on the device, reading ins (its inputs' buffers)
// and writing out. An error that is not a *cuda.Error means the device
// does not implement the op as described: it then runs on the CPU.
func (ci *cudaInst) deviceOp(r *opRec, ins []*cuda.Buffer, out *cuda.Buffer) (func() error, error) {
	d := ci.d
	keep := func(f interface{ Free() error }) { ci.owned = append(ci.owned, f) }
	switch dv := r.dev.(type) {
	case devConv:
		c, err := d.NewConv(cuda.ConvSpec{Shape: dv.shape, Weight: dv.weight, Bias: dv.bias, Act: dv.act})
		if err != nil {
			return nil, err
		}
		keep(c)
		x, n := ins[0], dv.batch
		if dv.pool != nil {
			// The convolution into a buffer of its own, then the pooling.
			ps := *dv.pool
			if err := ps.Validate(); err != nil {
				return nil, err
			}
			tmp, err := ci.alloc(n * dv.shape.OutC * dv.shape.OutH() * dv.shape.OutW())
			if err != nil {
				return nil, err
			}
			return func() error {
				if err := c.Forward(tmp, x, n); err != nil {
					return err
				}
				return d.MaxPool(out, tmp, n*dv.shape.OutC, ps)
			}, nil
		}
		switch o := r.op; {
		case len(ins) > 1 && ins[1] != nil:
			res := ins[1]
			return func() error { return c.ForwardAdd(out, x, res, n) }, nil
		case o.into != nil:
			return func() error { return c.ForwardInto(out, o.off, o.stride, x, n) }, nil
		}
		return func() error { return c.Forward(out, x, n) }, nil

	case devAffine:
		scale, err := ci.upload(dv.scale)
		if err != nil {
			return nil, err
		}
		shift, err := ci.upload(dv.shift)
		if err != nil {
			return nil, err
		}
		return func() error { return d.ChannelAffine(out, ins[0], scale, shift, dv.channels, dv.inner) }, nil

	case devPool:
		if err := dv.shape.Validate(); err != nil {
			return nil, err
		}
		if dv.max {
			return func() error { return d.MaxPool(out, ins[0], dv.planes, dv.shape) }, nil
		}
		return func() error {
			return d.AvgPool(out, ins[0], dv.planes, dv.shape, dv.padBottom, dv.padRight, dv.countIncludePad)
		}, nil

	case devReduce:
		op, ok := cudaReduce[dv.op]
		if !ok || dv.n == 0 {
			return nil, errNoDeviceOp
		}
		x := ins[0]
		var pre func() error
		if dv.perm != nil && !isIdentity(dv.perm) {
			if len(dv.perm) > maxDeviceRank {
				return nil, errNoDeviceOp
			}
			tmp, err := ci.alloc(numel(dv.inShape))
			if err != nil {
				return nil, err
			}
			src := x
			pre = func() error { return d.Transpose(tmp, src, dv.inShape, dv.perm) }
			x = tmp
		}
		return func() error {
			if pre != nil {
				if err := pre(); err != nil {
					return err
				}
			}
			return d.Reduce(op, out, x, dv.outer, dv.n, dv.inner)
		}, nil

	case devUnary:
		x := ins[0]
		if dv.op == "HardSwish" { // x·HardSigmoid(x) with alpha 1/6, beta 1/2
			shape := []int{x.Len()}
			return func() error {
				if err := d.Unary(cuda.UnaryHardSigmoid, out, x, float32(1.0/6), 0.5); err != nil {
					return err
				}
				return d.Binary(cuda.BinaryMul, out, x, shape, out, shape)
			}, nil
		}
		op, ok := cudaUnary[dv.op]
		if !ok {
			return nil, errNoDeviceOp
		}
		return func() error { return d.Unary(op, out, x, dv.alpha, dv.beta) }, nil

	case devBinary:
		op, ok := cudaBinary[dv.op]
		if !ok || max(len(dv.a), len(dv.b)) > maxDeviceRank {
			return nil, errNoDeviceOp
		}
		return func() error { return d.Binary(op, out, ins[0], dv.a, ins[1], dv.b) }, nil

	case devSoftmax:
		return func() error { return d.Softmax(out, ins[0], dv.outer, dv.n, dv.inner) }, nil

	case devTranspose:
		if len(dv.shape) > maxDeviceRank {
			return nil, errNoDeviceOp
		}
		return func() error { return d.Transpose(out, ins[0], dv.shape, dv.perm) }, nil

	case devConcat:
		return func() error { return d.Concat(out, ins, dv.shapes, dv.axis) }, nil

	case devGather:
		return ci.gather(ins[0], out, dv.shape, dv.maps, dv.fill)

	case devTake:
		maps := identityMaps(dv.shape)
		maps[dv.axis] = dv.ids
		return ci.gather(ins[0], out, dv.shape, maps, 0)

	case devResize:
		taps := func(ts []linearTap) []cuda.Tap {
			out := make([]cuda.Tap, len(ts))
			for i, t := range ts {
				out[i] = cuda.Tap{I0: t.i0, I1: t.i1, W0: t.w0, W1: t.w1}
			}
			return out
		}
		rs, err := d.NewResizeLinear(dv.planes, dv.ih, dv.iw, taps(dv.ys), taps(dv.xs))
		if err != nil {
			return nil, err
		}
		keep(rs)
		return func() error { return rs.Run(out, ins[0]) }, nil

	case devGemm:
		if dv.m > 65535*64 {
			return nil, errNoDeviceOp
		}
		g := cuda.GemmArgs{TransA: dv.transA, TransB: dv.transB, M: dv.m, N: dv.n, K: dv.k, Alpha: dv.alpha,
			A: ins[0], LDA: dv.lda, B: ins[1], LDB: dv.ldb, Y: out, LDY: dv.n}
		switch {
		case dv.c != nil:
			c, err := ci.upload(dv.c)
			if err != nil {
				return nil, err
			}
			g.C, g.Beta, g.LDCRow, g.LDCCol = c, 1, dv.n, 1
		case len(ins) > 2 && ins[2] != nil:
			// C of rank ≤ 2 broadcast to m×n: as [rows, cols].
			s := append(make([]int, 2-len(dv.cShape)), dv.cShape...)
			for k := range s[:2-len(dv.cShape)] {
				s[k] = 1
			}
			g.C, g.Beta = ins[2], dv.beta
			if s[0] != 1 {
				g.LDCRow = s[1]
			}
			if s[1] != 1 {
				g.LDCCol = 1
			}
		}
		return func() error { return d.GemmEx(g) }, nil

	case devMatMul:
		nb := len(dv.offA)
		if dv.m > 65535*64 {
			return nil, errNoDeviceOp
		}
		mn := dv.m * dv.n
		g := cuda.GemmArgs{M: dv.m, N: dv.n, K: dv.k, Alpha: 1, A: ins[0], LDA: dv.k, B: ins[1], LDB: dv.n, Y: out, LDY: dv.n}
		// The bias and the residual are the C term: the residual (with the
		// bias added first, as the CPU does) one matrix each, the bias one
		// row for all.
		var pre func() error
		var bias *cuda.Buffer
		if dv.bias != nil {
			var err error
			if bias, err = ci.upload(dv.bias); err != nil {
				return nil, err
			}
		}
		var c *cuda.Buffer
		stride := mn
		switch {
		case dv.res && bias != nil:
			res, shape := ins[2], []int{nb * dv.m, dv.n}
			pre = func() error { return d.Binary(cuda.BinaryAdd, out, res, shape, bias, []int{dv.n}) }
			c = out
		case dv.res:
			c = ins[2]
		case bias != nil:
			c, stride = bias, 0
		}
		if c != nil {
			g.C, g.Beta, g.LDCCol = c, 1, 1
			if stride != 0 {
				g.LDCRow = dv.n
			}
		}
		sa, oka := progression(dv.offA)
		sb, okb := progression(dv.offB)
		var run func() error
		if oka && okb && nb <= 65535 {
			g.Batch, g.StrideA, g.StrideB, g.StrideY, g.StrideC = nb, sa, sb, mn, stride
			run = func() error { return d.GemmEx(g) }
		} else {
			run = func() error {
				for i := range nb {
					gi := g
					gi.A = ins[0].Slice(dv.offA[i], dv.m*dv.k)
					gi.B = ins[1].Slice(dv.offB[i], dv.k*dv.n)
					gi.Y = out.Slice(i*mn, mn)
					if c != nil && stride != 0 {
						gi.C = c.Slice(i*mn, mn)
					}
					if err := d.GemmEx(gi); err != nil {
						return err
					}
				}
				return nil
			}
		}
		if pre == nil {
			return run, nil
		}
		return func() error {
			if err := pre(); err != nil {
				return err
			}
			return run()
		}, nil
	}
	return nil, errNoDeviceOp
}

// gather prepares an index-map gather.
func (ci *cudaInst) gather(x, out *cuda.Buffer, shape []int, maps [][]int, fill float32) (func() error, error) {
	if len(shape) == 0 || len(shape) > maxDeviceRank {
		return nil, errNoDeviceOp
	}
	g, err := ci.d.NewGather(shape, maps, fill)
	if err != nil {
		return nil, err
	}
	ci.owned = append(ci.owned, g)
	return func() error { return g.Run(out, x) }, nil
}
