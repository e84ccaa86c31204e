package nn

import (
	"math"

	"github.com/amt-dev/amt/nn/internal/shapes"
	"github.com/amt-dev/amt/nn/kernels"
)

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
	st, idx, off := bcastRowStart(os, r0, as, bs)
	inner := os[nd-1]
	ia, ib := st[0][nd-1], st[1][nd-1]
	for o := r0 * inner; o < r1*inner; o += inner {
		arithRow(k, out[o:o+inner], a[off[0]:], ia, b[off[1]:], ib)
		nextRow(idx, os, off, st...)
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
