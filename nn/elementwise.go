package nn

import (
	"fmt"
	"math"

	"github.com/amt-dev/amt/nn/internal/shapes"
	"github.com/amt-dev/amt/nn/kernels"
)

// Element-wise operators: unary functions and activations (the ones a
// convolution can apply in its epilogue declare it with an act function in
// the operator table), the broadcasting binary arithmetic, and Softmax.

// unary returns the build function of an element-wise operator computing f
// on float32 values; an integer input is an error.
func unary(f func(float32) float32) buildFunc {
	return one(func(b *builder, _ *attrs, ins []*value) *value {
		return b.unaryOp(need(ins, 0, "X"), f, false)
	})
}

// unaryInt is unary for an operator that also folds integer constants
// (through float32: shape arithmetic only ever holds small integers).
func unaryInt(f func(float32) float32) buildFunc {
	return one(func(b *builder, _ *attrs, ins []*value) *value {
		return b.unaryOp(need(ins, 0, "X"), f, true)
	})
}

// The functions of the unary operators.

func relu(x float32) float32       { return max(x, 0) }
func sigmoid(x float32) float32    { return kernels.Sigmoidf(x) }
func tanh(x float32) float32       { return kernels.Tanhf(x) }
func exp(x float32) float32        { return kernels.Expf(x) }
func erf(x float32) float32        { return kernels.Erff(x) }
func ln(x float32) float32         { return float32(math.Log(float64(x))) }
func sqrt(x float32) float32       { return float32(math.Sqrt(float64(x))) }
func neg(x float32) float32        { return -x }
func abs(x float32) float32        { return float32(math.Abs(float64(x))) }
func floor(x float32) float32      { return float32(math.Floor(float64(x))) }
func ceil(x float32) float32       { return float32(math.Ceil(float64(x))) }
func reciprocal(x float32) float32 { return 1 / x }
func softsign(x float32) float32   { return x / (1 + float32(math.Abs(float64(x)))) }
func sin(x float32) float32        { return float32(math.Sin(float64(x))) }
func cos(x float32) float32        { return float32(math.Cos(float64(x))) }

// round rounds half to even, as ONNX Round.
func round(x float32) float32 { return float32(math.RoundToEven(float64(x))) }

// sign is -1, 0 or 1 (NaN for NaN).
func sign(x float32) float32 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

// softplus is ln(1+e**x), computed without overflow for large x.
func softplus(x float32) float32 {
	if x > 0 {
		return x + float32(math.Log1p(math.Exp(-float64(x))))
	}
	return float32(math.Log1p(math.Exp(float64(x))))
}

// hardSwish is HardSwish (opset 14): x·HardSigmoid(x) with alpha = 1/6 and
// beta = 1/2, the function body the ONNX specification defines it by.
func hardSwish(x float32) float32 {
	const alpha, beta = float32(1.0 / 6), float32(0.5)
	return x * max(0, min(1, alpha*x+beta))
}

// hardSwishOp is HardSwish with its loop written out (MobileNetV3 applies
// it to most of its activations).
func hardSwishOp(b *builder, _ *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	if x.c != nil && x.c.isInt {
		fail("integer input is not supported")
	}
	return b.onDevice(b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		const alpha, beta = float32(1.0 / 6), float32(0.5)
		in := ins[0][:len(out)]
		for i, v := range in {
			out[i] = v * max(0, min(1, alpha*v+beta))
		}
	}), devUnary{op: "HardSwish"})
}

// unaryOp applies f to every element of x; ints: an integer constant is
// folded (through float32), otherwise it is an error.
func (b *builder) unaryOp(x *value, f func(float32) float32, ints bool) *value {
	if x.c != nil && x.c.isInt {
		if ints {
			v := make([]int64, len(x.c.i))
			for k, e := range x.c.i {
				v[k] = int64(f(float32(e)))
			}
			return constVal(&tens{shape: x.shape, i: v, isInt: true})
		}
		fail("integer input is not supported")
	}
	v := b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		for k, v := range ins[0] {
			out[k] = f(v)
		}
	})
	if op := b.node().op; unaryOps[op] {
		b.onDevice(v, devUnary{op: op})
	}
	return v
}

// Activations with parameters. The ones the convolution kernels implement
// (Relu, LeakyRelu, Clip) read their parameters through their act function.

func reluAct(*builder, *attrs, []*value) kernels.Activation {
	return kernels.Activation{Kind: kernels.ActRelu}
}

func leakyReluAct(_ *builder, a *attrs, _ []*value) kernels.Activation {
	return kernels.Activation{Kind: kernels.ActLeakyRelu, Alpha: a.float("alpha", 0.01)}
}

func leakyReluOp(b *builder, a *attrs, ins []*value) *value {
	alpha := leakyReluAct(b, a, ins).Alpha
	return b.onDevice(b.unaryOp(need(ins, 0, "X"), func(x float32) float32 {
		if x < 0 {
			return alpha * x
		}
		return x
	}, false), devUnary{op: "LeakyRelu", alpha: alpha})
}

// clipAct reads Clip's bounds: attributes min and max before opset 11,
// optional scalar inputs min and max (constants) since; an absent bound is
// infinite.
func clipAct(b *builder, a *attrs, ins []*value) kernels.Activation {
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	if b.p.opset < 11 {
		lo, hi = a.float("min", lo), a.float("max", hi)
	} else {
		if opt(ins, 1) != nil {
			lo = scalar(ins, 1, "min")
		}
		if opt(ins, 2) != nil {
			hi = scalar(ins, 2, "max")
		}
	}
	return kernels.Activation{Kind: kernels.ActClip, Min: lo, Max: hi}
}

func clipOp(b *builder, a *attrs, ins []*value) *value {
	act := clipAct(b, a, ins)
	lo, hi := act.Min, act.Max
	return b.onDevice(b.unaryOp(need(ins, 0, "input"), func(x float32) float32 {
		if x < lo {
			return lo
		}
		if x > hi {
			return hi
		}
		return x
	}, false), devUnary{op: "Clip", alpha: lo, beta: hi})
}

func eluOp(b *builder, a *attrs, ins []*value) *value {
	alpha := a.float("alpha", 1)
	return b.onDevice(b.unaryOp(need(ins, 0, "X"), func(x float32) float32 {
		if x < 0 {
			return alpha * float32(math.Expm1(float64(x)))
		}
		return x
	}, false), devUnary{op: "Elu", alpha: alpha})
}

// seluOp is Selu with ONNX's default alpha and gamma (those of the SELU
// paper, rounded to float32).
func seluOp(b *builder, a *attrs, ins []*value) *value {
	alpha, gamma := a.float("alpha", 1.67326319217681884765625), a.float("gamma", 1.05070102214813232421875)
	return b.unaryOp(need(ins, 0, "X"), func(x float32) float32 {
		if x <= 0 {
			return gamma * alpha * float32(math.Expm1(float64(x)))
		}
		return gamma * x
	}, false)
}

func celuOp(b *builder, a *attrs, ins []*value) *value {
	alpha := a.float("alpha", 1)
	if alpha == 0 {
		fail("attribute \"alpha\" must not be 0")
	}
	return b.unaryOp(need(ins, 0, "X"), func(x float32) float32 {
		return max(0, x) + min(0, alpha*float32(math.Expm1(float64(x/alpha))))
	}, false)
}

func thresholdedReluOp(b *builder, a *attrs, ins []*value) *value {
	alpha := a.float("alpha", 1)
	return b.unaryOp(need(ins, 0, "X"), func(x float32) float32 {
		if x > alpha {
			return x
		}
		return 0
	}, false)
}

func shrinkOp(b *builder, a *attrs, ins []*value) *value {
	bias, lambd := a.float("bias", 0), a.float("lambd", 0.5)
	return b.unaryOp(need(ins, 0, "input"), func(x float32) float32 {
		switch {
		case x < -lambd:
			return x + bias
		case x > lambd:
			return x - bias
		}
		return 0
	}, false)
}

func hardSigmoidOp(b *builder, a *attrs, ins []*value) *value {
	alpha, beta := a.float("alpha", 0.2), a.float("beta", 0.5)
	return b.onDevice(b.unaryOp(need(ins, 0, "X"), func(x float32) float32 {
		return max(0, min(1, alpha*x+beta))
	}, false), devUnary{op: "HardSigmoid", alpha: alpha, beta: beta})
}

// binop returns the build function of a broadcasting binary operator
// computing f on float32 values and fi on integer constants (folded at load
// time).
func binop(f func(x, y float32) float32, fi func(x, y int64) int64) buildFunc {
	return one(func(b *builder, _ *attrs, ins []*value) *value {
		if b.p.opset < 7 {
			fail("opset %d broadcasting rules (before opset 7) are not supported", b.p.opset)
		}
		x, y := need(ins, 0, "A"), need(ins, 1, "B")
		shape, err := shapes.Broadcast(x.shape, y.shape)
		if err != nil {
			fail("%v", err)
		}
		if x.c != nil && y.c != nil && (x.c.isInt || y.c.isInt) {
			if !x.c.isInt || !y.c.isInt {
				fail("mixed integer and float inputs")
			}
			out := make([]int64, b.checkShape(shape))
			bcast(out, shape, x.c.i, x.shape, y.c.i, y.shape, fi)
			return constVal(&tens{shape: shape, i: out, isInt: true})
		}
		xs, ys := x.shape, y.shape
		return b.onDevice(b.emit(shape, []*value{x, y}, func(out []float32, ins [][]float32) {
			bcast(out, shape, ins[0], xs, ins[1], ys, f)
		}), devBinary{op: b.node().op, a: xs, b: ys})
	})
}

// arith is the build function of Add, Sub, Mul and Div: binop, with the
// float32 broadcasting done by bcastArith's loops (no call per element:
// squeeze-excitation's gating Mul of [N,C,H,W] by [N,C,1,1], biases,
// residuals).
func arith(k arithKind) buildFunc {
	fi := []func(x, y int64) int64{add[int64], sub[int64], mul[int64], divInt}[k]
	return one(func(b *builder, a *attrs, ins []*value) *value {
		x, y := need(ins, 0, "A"), need(ins, 1, "B")
		if b.p.opset < 7 || (x.c != nil && y.c != nil) {
			return binop(arithFuncs[k], fi)(b, a, ins)[0] // errors and folding
		}
		shape, err := shapes.Broadcast(x.shape, y.shape)
		if err != nil {
			fail("%v", err)
		}
		xs, ys := x.shape, y.shape
		return b.onDevice(b.emit(shape, []*value{x, y}, func(out []float32, ins [][]float32) {
			bcastArith(k, out, shape, ins[0], xs, ins[1], ys)
		}), devBinary{op: arithNames[k], a: xs, b: ys})
	})
}

// arithKind names an arithmetic operator.
type arithKind int

const (
	arithAdd arithKind = iota
	arithSub
	arithMul
	arithDiv
)

var arithFuncs = []func(x, y float32) float32{add[float32], sub[float32], mul[float32], div[float32]}

// arithNames are the operators of the arithKinds.
var arithNames = []string{"Add", "Sub", "Mul", "Div"}

// bcastArith is bcast of an arithmetic operator on float32, a row of the
// output at a time; outputs of at least arithParallelValues values are
// split by rows (or, without broadcasting, into equal chunks) over the free
// threads. Each value is computed alike however the work is split.
func bcastArith(k arithKind, out []float32, os []int, a []float32, as []int, b []float32, bs []int) {
	if len(out) == 0 {
		return
	}
	w := 1
	if len(out) >= arithParallelValues {
		w = kernels.FreeThreads()
	}
	nd := len(os)
	if nd == 0 || (len(a) == len(out) && len(b) == len(out)) {
		if w == 1 { // without the closure, which would be allocated
			arithRow(k, out, a, 1, b, 1)
			return
		}
		kernels.ParallelFor(len(out), w, func(i0, i1 int) {
			arithRow(k, out[i0:i1], a[i0:], 1, b[i0:], 1)
		})
		return
	}
	inner := os[nd-1]
	if w == 1 {
		bcastArithRows(k, out, os, a, as, b, bs, 0, len(out)/inner)
		return
	}
	kernels.ParallelFor(len(out)/inner, w, func(r0, r1 int) {
		bcastArithRows(k, out, os, a, as, b, bs, r0, r1)
	})
}

// bcastArithRows is bcastArith for the output rows (of the last axis)
// [r0, r1).
func bcastArithRows(k arithKind, out []float32, os []int, a []float32, as []int, b []float32, bs []int, r0, r1 int) {
	nd := len(os)
	sa, sb := bstrides(as, os), bstrides(bs, os)
	inner := os[nd-1]
	ia, ib := sa[nd-1], sb[nd-1]
	// The index and offsets of row r0.
	idx := make([]int, nd)
	offA, offB := 0, 0
	for d, r := nd-2, r0; d >= 0; d-- {
		idx[d] = r % os[d]
		r /= os[d]
		offA += idx[d] * sa[d]
		offB += idx[d] * sb[d]
	}
	for o := r0 * inner; o < r1*inner; o += inner {
		arithRow(k, out[o:o+inner], a[offA:], ia, b[offB:], ib)
		for d := nd - 2; d >= 0; d-- {
			idx[d]++
			offA += sa[d]
			offB += sb[d]
			if idx[d] < os[d] {
				break
			}
			offA -= sa[d] * os[d]
			offB -= sb[d] * os[d]
			idx[d] = 0
		}
	}
}

// arithParallelValues is the output size from which bcastArith splits its
// work over the cores (as fuseChain's elementwise chains).
const arithParallelValues = 1 << 15

// arithRow sets dst[j] = a[j·ia] op b[j·ib] (strides 0 or 1 are the fast
// cases).
func arithRow(k arithKind, dst, a []float32, ia int, b []float32, ib int) {
	n := len(dst)
	switch {
	case ia == 1 && ib == 1:
		a, b = a[:n], b[:n]
		switch k {
		case arithAdd:
			for j := range dst {
				dst[j] = a[j] + b[j]
			}
		case arithSub:
			for j := range dst {
				dst[j] = a[j] - b[j]
			}
		case arithMul:
			for j := range dst {
				dst[j] = a[j] * b[j]
			}
		default:
			for j := range dst {
				dst[j] = a[j] / b[j]
			}
		}
	case ia == 1 && ib == 0:
		a, y := a[:n], b[0]
		switch k {
		case arithAdd:
			for j := range dst {
				dst[j] = a[j] + y
			}
		case arithSub:
			for j := range dst {
				dst[j] = a[j] - y
			}
		case arithMul:
			for j := range dst {
				dst[j] = a[j] * y
			}
		default:
			for j := range dst {
				dst[j] = a[j] / y
			}
		}
	case ia == 0 && ib == 1:
		x, b := a[0], b[:n]
		switch k {
		case arithAdd:
			for j := range dst {
				dst[j] = x + b[j]
			}
		case arithSub:
			for j := range dst {
				dst[j] = x - b[j]
			}
		case arithMul:
			for j := range dst {
				dst[j] = x * b[j]
			}
		default:
			for j := range dst {
				dst[j] = x / b[j]
			}
		}
	default:
		f := arithFuncs[k]
		for j := range dst {
			dst[j] = f(a[j*ia], b[j*ib])
		}
	}
}

// The functions of the binary operators.

func add[T number](x, y T) T { return x + y }
func sub[T number](x, y T) T { return x - y }
func mul[T number](x, y T) T { return x * y }
func div[T number](x, y T) T { return x / y }
func pow[T number](x, y T) T { return T(math.Pow(float64(x), float64(y))) }

// divInt is integer Div, failing on a division by zero.
func divInt(x, y int64) int64 {
	if y == 0 {
		fail("integer division by zero")
	}
	return x / y
}

// broadcastPerImage is the per-image rule of the binary operators: every
// runtime operand spans the batch axis itself, and a constant of the
// output's rank is broadcast along it.
func broadcastPerImage(b *builder, _ *attrs, ins, outs []*value) bool {
	r := len(outs[0].shape)
	for _, v := range ins {
		switch {
		case v == nil:
			return false
		case v.c == nil:
			// A runtime operand must span the batch axis itself.
			if len(v.shape) != r || !b.batched(v) {
				return false
			}
		case len(v.shape) == r && v.shape[0] != 1:
			// A constant broadcast along the batch axis only.
			return false
		}
	}
	return true
}

// softmaxAxis returns Softmax's axis attribute, whose default changed in
// opset 13 (from 1 to -1), not normalised.
func softmaxAxis(b *builder, a *attrs) int64 {
	def := int64(1)
	if b.p.opset >= 13 {
		def = -1
	}
	return a.int("axis", def)
}

func softmaxOp(b *builder, a *attrs, ins []*value) *value    { return b.softmax(a, ins, false) }
func logSoftmaxOp(b *builder, a *attrs, ins []*value) *value { return b.softmax(a, ins, true) }

// softmax implements Softmax and, with log, LogSoftmax: over one axis from
// opset 13, over all axes from the axis on before (the input coerced to
// 2-D).
func (b *builder) softmax(a *attrs, ins []*value, log bool) *value {
	x := need(ins, 0, "input")
	r := len(x.shape)
	ax, err := normAxis(softmaxAxis(b, a), r)
	if err != nil {
		fail("%v", err)
	}
	var outer, n, inner int
	if b.p.opset >= 13 {
		outer, n, inner = numel(x.shape[:ax]), x.shape[ax], numel(x.shape[ax+1:])
	} else { // coerced to 2-D [outer, n]
		outer, n, inner = numel(x.shape[:ax]), numel(x.shape[ax:]), 1
	}
	v := b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		if inner == 1 {
			parallelRows(outer, n, func(o0, o1 int) {
				for o := o0; o < o1; o++ {
					softmaxRow(out[o*n:(o+1)*n], in[o*n:(o+1)*n], log)
				}
			})
			return
		}
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				base := o*n*inner + i
				m := float32(math.Inf(-1))
				for k := 0; k < n; k++ {
					m = max(m, in[base+k*inner])
				}
				var s float64
				for k := 0; k < n; k++ {
					e := kernels.Expf(in[base+k*inner] - m)
					if !log {
						out[base+k*inner] = e
					}
					s += float64(e)
				}
				if log {
					ls := m + float32(math.Log(s))
					for k := 0; k < n; k++ {
						out[base+k*inner] = in[base+k*inner] - ls
					}
					continue
				}
				inv := float32(1 / s)
				for k := 0; k < n; k++ {
					out[base+k*inner] *= inv
				}
			}
		}
	})
	if !log {
		b.onDevice(v, devSoftmax{outer, n, inner})
	}
	return v
}

// softmaxRow writes the softmax (or, with log, the log-softmax) of in to
// out.
func softmaxRow(out, in []float32, log bool) {
	m := kernels.Max(in)
	if math.IsInf(float64(m), 0) || m != m {
		softmaxRowSlow(out, in, m, log)
		return
	}
	s := kernels.ExpShifted(out, in, m)
	if log {
		ls := m + float32(math.Log(s))
		for k, v := range in {
			out[k] = v - ls
		}
		return
	}
	kernels.Scale(out, float32(1/s))
}

// softmaxRowSlow is softmaxRow for a row whose maximum m is infinite or
// NaN (all −Inf, or +Inf or NaN in it): the exponentials computed in the
// general way, giving what ONNX Runtime gives (NaN where it does).
func softmaxRowSlow(out, in []float32, m float32, log bool) {
	var s float64
	for k, v := range in {
		e := kernels.Expf(v - m)
		out[k] = e
		s += float64(e)
	}
	for k, v := range in {
		if log {
			out[k] = v - m - float32(math.Log(s))
		} else {
			out[k] = float32(float64(out[k]) / s)
		}
	}
}

// parallelRows runs f over rows [0, n) of cost values each, split over the
// cores when there is enough work to pay for the goroutines.
func parallelRows(n, cost int, f func(i0, i1 int)) {
	if n*cost < 1<<15 {
		f(0, n)
		return
	}
	forEachChunk(n, f)
}

// softmaxPerImage: Softmax normalises within an image unless its axis is
// the batch axis.
func softmaxPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	return batchedFirst(b, a, ins, outs) && axisNot0(softmaxAxis(b, a), len(ins[0].shape))
}

// prelu is PRelu's function: x for x ≥ 0, slope·x below.
func prelu[T number](x, slope T) T {
	if x < 0 {
		return slope * x
	}
	return x
}

// modOp is Mod: with fmod=1 the C fmod (the sign of the dividend), with
// fmod=0 (integers only) the remainder with the sign of the divisor.
func modOp(b *builder, a *attrs, ins []*value) *value {
	fmod := a.int("fmod", 0) != 0
	x, y := need(ins, 0, "A"), need(ins, 1, "B")
	isInt := x.c != nil && y.c != nil && x.c.isInt && y.c.isInt
	if !fmod && !isInt {
		fail("attribute \"fmod\" = 0 on float values (the specification requires fmod=1 for them)")
	}
	return binop(func(x, y float32) float32 { return float32(math.Mod(float64(x), float64(y))) },
		func(x, y int64) int64 {
			if y == 0 {
				fail("integer modulo by zero")
			}
			m := x % y
			if !fmod && m != 0 && (m < 0) != (y < 0) {
				m += y
			}
			return m
		})(b, a, ins)[0]
}

// variadic returns the build function of Sum, Min, Max (f, fi) and Mean
// (Sum, then divided by the number of inputs): the inputs broadcast
// together, combined left to right.
func variadic(f func(x, y float32) float32, fi func(x, y int64) int64, mean bool) buildFunc {
	return one(func(b *builder, _ *attrs, ins []*value) *value {
		if len(ins) == 0 {
			fail("no inputs")
		}
		vals := make([]*value, len(ins))
		allConst, anyInt := true, false
		shape := need(ins, 0, "data_0").shape
		for k := range ins {
			vals[k] = need(ins, k, fmt.Sprintf("data_%d", k))
			var err error
			if shape, err = shapes.Broadcast(shape, vals[k].shape); err != nil {
				fail("%v", err)
			}
			allConst = allConst && vals[k].c != nil
			anyInt = anyInt || (vals[k].c != nil && vals[k].c.isInt)
		}
		shapes := make([][]int, len(vals))
		for k, v := range vals {
			shapes[k] = v.shape
		}
		if anyInt {
			if !allConst || mean {
				fail("integer inputs are supported only for Sum, Min and Max of constants")
			}
			out := make([]int64, b.checkConst(shape, true))
			bcast(out, shape, vals[0].c.ints(), shapes[0], []int64{0}, nil, first[int64])
			for k, v := range vals[1:] {
				bcast(out, shape, out, shape, v.c.ints(), shapes[k+1], fi)
			}
			return constVal(&tens{shape: shape, i: out, isInt: true})
		}
		return b.emit(shape, vals, func(out []float32, in [][]float32) {
			bcast(out, shape, in[0], shapes[0], []float32{0}, nil, first[float32])
			for k := 1; k < len(in); k++ {
				bcast(out, shape, out, shape, in[k], shapes[k], f)
			}
			if mean {
				inv := 1 / float32(len(in))
				for i := range out {
					out[i] *= inv
				}
			}
		})
	})
}

// The functions of the variadic operators (min and max propagate NaN).

func first[T number](x, _ T) T { return x }
func minOf[T number](x, y T) T { return min(x, y) }
func maxOf[T number](x, y T) T { return max(x, y) }
