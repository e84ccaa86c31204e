package nn

import (
	"math"

	"github.com/amt-dev/amt/nn/kernels"
)

// Element-wise operators: the unary functions here; the activations with
// parameters (the ones a convolution can apply in its epilogue declare it
// with an act function in the operator table) in activation.go, the
// broadcasting binary arithmetic in binary.go, Sum, Min, Max and Mean in
// variadic.go, and Softmax in softmax.go.

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
