package nn

import (
	"math"

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
func sigmoid(x float32) float32    { return float32(1 / (1 + math.Exp(-float64(x)))) }
func tanh(x float32) float32       { return float32(math.Tanh(float64(x))) }
func exp(x float32) float32        { return float32(math.Exp(float64(x))) }
func ln(x float32) float32         { return float32(math.Log(float64(x))) }
func sqrt(x float32) float32       { return float32(math.Sqrt(float64(x))) }
func neg(x float32) float32        { return -x }
func abs(x float32) float32        { return float32(math.Abs(float64(x))) }
func floor(x float32) float32      { return float32(math.Floor(float64(x))) }
func ceil(x float32) float32       { return float32(math.Ceil(float64(x))) }
func reciprocal(x float32) float32 { return 1 / x }

// hardSwish is HardSwish (opset 14): x·HardSigmoid(x) with alpha = 1/6 and
// beta = 1/2, the function body the ONNX specification defines it by.
func hardSwish(x float32) float32 {
	const alpha, beta = float32(1.0 / 6), float32(0.5)
	return x * max(0, min(1, alpha*x+beta))
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
	return b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		for k, v := range ins[0] {
			out[k] = f(v)
		}
	})
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
	return b.unaryOp(need(ins, 0, "X"), func(x float32) float32 {
		if x < 0 {
			return alpha * x
		}
		return x
	}, false)
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
	return b.unaryOp(need(ins, 0, "input"), func(x float32) float32 {
		if x < lo {
			return lo
		}
		if x > hi {
			return hi
		}
		return x
	}, false)
}

func eluOp(b *builder, a *attrs, ins []*value) *value {
	alpha := a.float("alpha", 1)
	return b.unaryOp(need(ins, 0, "X"), func(x float32) float32 {
		if x < 0 {
			return alpha * float32(math.Expm1(float64(x)))
		}
		return x
	}, false)
}

func hardSigmoidOp(b *builder, a *attrs, ins []*value) *value {
	alpha, beta := a.float("alpha", 0.2), a.float("beta", 0.5)
	return b.unaryOp(need(ins, 0, "X"), func(x float32) float32 {
		return max(0, min(1, alpha*x+beta))
	}, false)
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
		shape, err := broadcastShape(x.shape, y.shape)
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
		return b.emit(shape, []*value{x, y}, func(out []float32, ins [][]float32) {
			bcast(out, shape, ins[0], xs, ins[1], ys, f)
		})
	})
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

func softmaxOp(b *builder, a *attrs, ins []*value) *value {
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
	return b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				base := o*n*inner + i
				m := float32(math.Inf(-1))
				for k := 0; k < n; k++ {
					m = max(m, in[base+k*inner])
				}
				var s float64
				for k := 0; k < n; k++ {
					e := math.Exp(float64(in[base+k*inner] - m))
					out[base+k*inner] = float32(e)
					s += e
				}
				for k := 0; k < n; k++ {
					out[base+k*inner] = float32(float64(out[base+k*inner]) / s)
				}
			}
		}
	})
}

// softmaxPerImage: Softmax normalises within an image unless its axis is
// the batch axis.
func softmaxPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	return batchedFirst(b, a, ins, outs) && axisNot0(softmaxAxis(b, a), len(ins[0].shape))
}
