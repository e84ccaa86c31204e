package nn

import (
	"math"

	"github.com/amt-dev/amt/nn/kernels"
)

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
