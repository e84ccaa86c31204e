package nn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
)

// chainNodes are element-wise chains as PyTorch 1.13 exports them (x is the
// input, y the result), with what they compute.
var chainNodes = []struct {
	name   string
	nodes  []ot.Node
	consts []ot.Tensor
	ref    func(x float64) float64
	known  string // the known activation recognised (fuse.go), or ""
}{
	{"gelu_erf", []ot.Node{
		{Op: "Div", In: []string{"x", "sqrt2"}, Out: []string{"d"}},
		{Op: "Erf", In: []string{"d"}, Out: []string{"e"}},
		{Op: "Add", In: []string{"e", "one"}, Out: []string{"a"}},
		{Op: "Mul", In: []string{"x", "a"}, Out: []string{"m"}},
		{Op: "Mul", In: []string{"m", "half"}, Out: []string{"y"}},
	}, nil, func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, "GELU"},
	{"gelu_tanh", []ot.Node{
		{Op: "Mul", In: []string{"x", "x"}, Out: []string{"x2"}},
		{Op: "Mul", In: []string{"x", "x2"}, Out: []string{"x3"}},
		{Op: "Mul", In: []string{"c044", "x3"}, Out: []string{"t1"}},
		{Op: "Add", In: []string{"x", "t1"}, Out: []string{"t2"}},
		{Op: "Mul", In: []string{"c079", "t2"}, Out: []string{"t3"}},
		{Op: "Tanh", In: []string{"t3"}, Out: []string{"t4"}},
		{Op: "Add", In: []string{"one", "t4"}, Out: []string{"t5"}},
		{Op: "Mul", In: []string{"x", "t5"}, Out: []string{"t6"}},
		{Op: "Mul", In: []string{"half", "t6"}, Out: []string{"y"}},
	}, nil, func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(0.7978846*(x+0.044715*x*x*x)))
	}, "GELUTanh"},
	{"silu", []ot.Node{
		{Op: "Sigmoid", In: []string{"x"}, Out: []string{"s"}},
		{Op: "Mul", In: []string{"x", "s"}, Out: []string{"y"}},
	}, nil, func(x float64) float64 { return x / (1 + math.Exp(-x)) }, "SiLU"},
	{"mish", []ot.Node{
		{Op: "Softplus", In: []string{"x"}, Out: []string{"s"}},
		{Op: "Tanh", In: []string{"s"}, Out: []string{"t"}},
		{Op: "Mul", In: []string{"x", "t"}, Out: []string{"y"}},
	}, nil, func(x float64) float64 { return x * math.Tanh(math.Log1p(math.Exp(x))) }, ""},
	{"hardswish_decomposed", []ot.Node{
		{Op: "HardSigmoid", In: []string{"x"}, Out: []string{"h"}, Attrs: []ot.Attr{ot.Float("alpha", 1.0/6)}},
		{Op: "Mul", In: []string{"x", "h"}, Out: []string{"y"}},
	}, nil, func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) }, ""},
	{"quick_gelu_clip", []ot.Node{
		{Op: "Mul", In: []string{"x", "k"}, Out: []string{"kx"}},
		{Op: "Sigmoid", In: []string{"kx"}, Out: []string{"s"}},
		{Op: "Mul", In: []string{"x", "s"}, Out: []string{"q"}},
		{Op: "Clip", In: []string{"q", "lo", "hi"}, Out: []string{"y"}},
	}, []ot.Tensor{ot.F32("lo", nil, -0.1), ot.F32("hi", nil, 1.5)}, func(x float64) float64 {
		return math.Max(-0.1, math.Min(1.5, x/(1+math.Exp(-1.702*x))))
	}, ""},
}

// chainModel builds a model computing a chain on x [N,5,7]; expose also
// makes the output of the chain's first node a graph output.
func chainModel(nodes []ot.Node, consts []ot.Tensor, expose bool) ot.Model {
	scalars := []ot.Tensor{ot.F32("sqrt2", nil, float32(math.Sqrt2)), ot.F32("one", nil, 1), ot.F32("half", nil, 0.5),
		ot.F32("c044", nil, 0.044715), ot.F32("c079", nil, 0.7978846), ot.F32("k", nil, 1.702)}
	m := ot.Model{Opset: 13, Inits: append(scalars, consts...),
		Inputs: []ot.Value{{Name: "x", Dims: []any{"N", 5, 7}}}, Outputs: []ot.Value{{Name: "y"}}}
	for k, n := range nodes {
		n.Name = fmt.Sprintf("n%d", k)
		m.Nodes = append(m.Nodes, n)
	}
	if expose {
		m.Outputs = append(m.Outputs, ot.Value{Name: nodes[0].Out[0]})
	}
	return m
}

// TestFusedChains checks that the element-wise chains of GELU, SiLU and the
// like compile into one op computing what the formula does, and into more
// than one when a value inside the chain is used outside it.
func TestFusedChains(t *testing.T) {
	for _, c := range chainNodes {
		for _, expose := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/expose=%v", c.name, expose), func(t *testing.T) {
				m := mustLoad(t, chainModel(c.nodes, c.consts, expose))
				for _, batch := range []int{1, 3} {
					ops := graphOps(t, m, batch)
					if !expose && len(ops) != 1 {
						t.Errorf("batch %d: graph ops %v, want one fused op", batch, ops)
					}
					if !expose && c.known != "" && (len(ops) != 1 || !strings.HasPrefix(ops[0], c.known+"(")) {
						t.Errorf("batch %d: graph ops %v, want the %s loop", batch, ops, c.known)
					}
					if expose && len(ops) < 2 {
						t.Errorf("batch %d: graph ops %v: the chain was fused although a value inside it is a graph output", batch, ops)
					}
					x := randInput([]int{batch, 5, 7}, uint64(batch))
					x.Data().([]float32)[0] = 9 // large values too
					x.Data().([]float32)[1] = -9
					outs, err := m.Run(x)
					if err != nil {
						t.Fatal(err)
					}
					got := outs[0].Data().([]float32)
					for i, v := range x.Data().([]float32) {
						want := c.ref(float64(v))
						if d := math.Abs(float64(got[i]) - want); d > 2e-6*(1+math.Abs(want)) {
							t.Fatalf("batch %d: f(%g) = %g, want %g", batch, v, got[i], want)
						}
					}
				}
			})
		}
	}
}

// TestFusedChainLarge runs a chain over a tensor large enough to be split
// over the cores, with a second run-time input.
func TestFusedChainLarge(t *testing.T) {
	m := mustLoad(t, ot.Model{Opset: 13,
		Nodes: []ot.Node{
			{Name: "s", Op: "Sigmoid", In: []string{"b"}, Out: []string{"s"}},
			{Name: "m", Op: "Mul", In: []string{"a", "s"}, Out: []string{"m"}},
			{Name: "t", Op: "Sub", In: []string{"m", "b"}, Out: []string{"y"}},
		},
		Inputs:  []ot.Value{{Name: "a", Dims: []any{"N", 333, 257}}, {Name: "b", Dims: []any{"N", 333, 257}}},
		Outputs: []ot.Value{{Name: "y"}}})
	if ops := graphOps(t, m, 2); len(ops) != 1 {
		t.Fatalf("graph ops %v, want one fused op", ops)
	}
	a, b := randInput([]int{2, 333, 257}, 1), randInput([]int{2, 333, 257}, 2)
	outs, err := m.Run(a, b)
	if err != nil {
		t.Fatal(err)
	}
	ad, bd, got := a.Data().([]float32), b.Data().([]float32), outs[0].Data().([]float32)
	for i := range got {
		want := float64(ad[i])/(1+math.Exp(-float64(bd[i]))) - float64(bd[i])
		if math.Abs(float64(got[i])-want) > 1e-5 {
			t.Fatalf("element %d: got %g, want %g", i, got[i], want)
		}
	}
}

// layerNormNodes is nn.LayerNorm as PyTorch exports it before opset 17
// (axes: the normalised axes; scale and bias applied when affine).
func layerNormNodes(axes []int64, affine bool, scaleFirst bool) []ot.Node {
	nodes := []ot.Node{
		{Op: "ReduceMean", In: []string{"x"}, Out: []string{"mean"}, Attrs: []ot.Attr{ot.Ints("axes", axes...)}},
		{Op: "Sub", In: []string{"x", "mean"}, Out: []string{"d"}},
		{Op: "Constant", Out: []string{"two"}, Attrs: []ot.Attr{ot.TensorAttr("value", ot.F32("", nil, 2))}},
		{Op: "Pow", In: []string{"d", "two"}, Out: []string{"p"}},
		{Op: "ReduceMean", In: []string{"p"}, Out: []string{"var"}, Attrs: []ot.Attr{ot.Ints("axes", axes...)}},
		{Op: "Add", In: []string{"var", "eps"}, Out: []string{"ve"}},
		{Op: "Sqrt", In: []string{"ve"}, Out: []string{"sd"}},
		{Op: "Div", In: []string{"d", "sd"}, Out: []string{"n"}},
	}
	if !affine {
		nodes[len(nodes)-1].Out = []string{"y"}
		return nodes
	}
	mul := ot.Node{Op: "Mul", In: []string{"n", "gamma"}, Out: []string{"g"}}
	if scaleFirst {
		mul.In = []string{"gamma", "n"}
	}
	return append(nodes, mul, ot.Node{Op: "Add", In: []string{"g", "beta"}, Out: []string{"y"}})
}

// TestLayerNormFusion checks that the decomposed layer normalisation
// compiles into one op (over the last axis as nn.LayerNorm, over axis 1 of
// NCHW as timm's LayerNorm2d), computing the layer normalisation, and is
// left alone when a value inside it is used elsewhere.
func TestLayerNormFusion(t *testing.T) {
	cases := []struct {
		name       string
		in         []int
		axes       []int64
		gammaShape []int64
		affine     bool
		scaleFirst bool
		expose     bool
		fused      bool
	}{
		{"last axis", []int{4, 6}, []int64{-1}, []int64{6}, true, false, false, true},
		{"last axis, scale first", []int{4, 6}, []int64{2}, []int64{6}, true, true, false, true},
		{"no scale", []int{4, 6}, []int64{-1}, nil, false, false, false, true},
		{"channels first", []int{3, 2, 5}, []int64{1}, []int64{3, 1, 1}, true, true, false, true},
		{"two axes", []int{4, 6}, []int64{1, 2}, []int64{4, 6}, true, false, false, true},
		{"difference also a graph output", []int{4, 6}, []int64{-1}, []int64{6}, true, false, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nodes := layerNormNodes(c.axes, c.affine, c.scaleFirst)
			for k := range nodes {
				nodes[k].Name = fmt.Sprintf("n%d", k)
			}
			ng := numel(intsOf(c.gammaShape))
			gamma, beta := seq(ng, 0.3), seq(ng, -0.2)
			for k := range gamma {
				gamma[k] += 1
			}
			m := ot.Model{Opset: 13, Nodes: nodes,
				Inits:   []ot.Tensor{ot.F32("eps", nil, 1e-5), ot.F32("gamma", c.gammaShape, gamma...), ot.F32("beta", c.gammaShape, beta...)},
				Inputs:  []ot.Value{{Name: "x", Dims: append([]any{"N"}, dims(c.in)...)}},
				Outputs: []ot.Value{{Name: "y"}}}
			if c.expose {
				m.Outputs = append(m.Outputs, ot.Value{Name: "d"})
			}
			mod := mustLoad(t, m)
			ops := graphOps(t, mod, 2)
			if c.fused != (len(ops) == 1) {
				t.Errorf("graph ops %v, fused %v", ops, c.fused)
			}
			shape := append([]int{2}, c.in...)
			x := randInput(shape, 7)
			outs, err := mod.Run(x)
			if err != nil {
				t.Fatal(err)
			}
			// Reference: normalise over the block of axes, float64.
			r := len(shape)
			a0, a1 := int(c.axes[0]), int(c.axes[len(c.axes)-1])
			if a0 < 0 {
				a0 += r
			}
			if a1 < 0 {
				a1 += r
			}
			outer, n, inner := numel(shape[:a0]), numel(shape[a0:a1+1]), numel(shape[a1+1:])
			xd, got := x.Data().([]float32), outs[0].Data().([]float32)
			for o := 0; o < outer; o++ {
				for i := 0; i < inner; i++ {
					var s, q float64
					for k := 0; k < n; k++ {
						s += float64(xd[(o*n+k)*inner+i])
					}
					mean := s / float64(n)
					for k := 0; k < n; k++ {
						d := float64(xd[(o*n+k)*inner+i]) - mean
						q += d * d
					}
					rstd := 1 / math.Sqrt(q/float64(n)+1e-5)
					for k := 0; k < n; k++ {
						at := (o*n+k)*inner + i
						want := (float64(xd[at]) - mean) * rstd
						if c.affine {
							want = want*float64(gamma[k%ng]) + float64(beta[k%ng])
						}
						if d := math.Abs(float64(got[at]) - want); d > 1e-5*(1+math.Abs(want)) {
							t.Fatalf("element %d: got %g, want %g", at, got[at], want)
						}
					}
				}
			}
		})
	}
}

func intsOf(d []int64) []int {
	out := make([]int, len(d))
	for k, v := range d {
		out[k] = int(v)
	}
	return out
}

// TestMatMulFusion checks that a MatMul of a 3-D value by a weight absorbs
// the bias Add, the layer-scale Mul and the residual Add after it (one op,
// one GEMM over all rows), computing what the unfused graph does.
func TestMatMulFusion(t *testing.T) {
	model := func(expose bool) ot.Model {
		m := ot.Model{Opset: 13,
			Nodes: []ot.Node{
				{Name: "mm", Op: "MatMul", In: []string{"x", "w"}, Out: []string{"a"}},
				{Name: "bias", Op: "Add", In: []string{"bvec", "a"}, Out: []string{"b"}},
				{Name: "scale", Op: "Mul", In: []string{"b", "g"}, Out: []string{"c"}},
				{Name: "res", Op: "Add", In: []string{"r", "c"}, Out: []string{"y"}},
			},
			Inits: []ot.Tensor{ot.F32("w", []int64{6, 4}, seq(24, 0.1)...), ot.F32("bvec", []int64{4}, 0.5, -1, 2, 0.25),
				ot.F32("g", []int64{1, 1, 4}, 1.5, 0.5, -2, 3)},
			Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 5, 6}}, {Name: "r", Dims: []any{"N", 5, 4}}},
			Outputs: []ot.Value{{Name: "y"}}}
		if expose {
			m.Outputs = append(m.Outputs, ot.Value{Name: "a"})
		}
		return m
	}
	fused, plain := mustLoad(t, model(false)), mustLoad(t, model(true))
	for _, batch := range []int{1, 3} {
		if ops := graphOps(t, fused, batch); len(ops) != 1 {
			t.Errorf("batch %d: graph ops %v, want the MatMul alone", batch, ops)
		}
		if ops := graphOps(t, plain, batch); len(ops) != 4 {
			t.Errorf("batch %d: graph ops %v, want four (the product is a graph output)", batch, ops)
		}
		x, r := randInput([]int{batch, 5, 6}, 1), randInput([]int{batch, 5, 4}, 2)
		got, err := fused.Run(x, r)
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.Run(x, r)
		if err != nil {
			t.Fatal(err)
		}
		approx(t, got[0].Data().([]float32), want[0].Data().([]float32), 1e-5)
	}
}

// TestDepthwiseConcat checks depthwise convolutions (one with a fused
// Relu) writing straight into a channel Concat, against the same graph with
// a Concat input also a graph output (ordinary Concat).
func TestDepthwiseConcat(t *testing.T) {
	model := func(expose bool) ot.Model {
		m := ot.Model{Opset: 13,
			Nodes: []ot.Node{
				{Name: "dw1", Op: "Conv", In: []string{"x", "w1", "b1"}, Out: []string{"c"}, Attrs: []ot.Attr{ot.Int("group", 2), ot.Ints("pads", 1, 1, 1, 1)}},
				{Name: "relu", Op: "Relu", In: []string{"c"}, Out: []string{"r"}},
				{Name: "dw2", Op: "Conv", In: []string{"x", "w2"}, Out: []string{"d"}, Attrs: []ot.Attr{ot.Int("group", 2), ot.Ints("pads", 2, 2, 2, 2)}},
				{Name: "cat", Op: "Concat", In: []string{"r", "d"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Int("axis", 1)}},
			},
			Inits: []ot.Tensor{ot.F32("w1", []int64{2, 1, 3, 3}, seq(18, 0.1)...), ot.F32("b1", []int64{2}, 0.1, -0.2),
				ot.F32("w2", []int64{2, 1, 5, 5}, seq(50, 0.05)...)},
			Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 2, 5, 6}}},
			Outputs: []ot.Value{{Name: "y"}}}
		if expose {
			m.Outputs = append(m.Outputs, ot.Value{Name: "d"})
		}
		return m
	}
	fused, plain := mustLoad(t, model(false)), mustLoad(t, model(true))
	for _, batch := range []int{1, 3} {
		x := randInput([]int{batch, 2, 5, 6}, 5)
		got, err := fused.Run(x)
		if err != nil {
			t.Fatal(err)
		}
		want := batchedRun(t, plain, x)
		approx(t, got[0].Data().([]float32), want[0].Data().([]float32), 1e-6)
		inst, _ := fused.instance(batch)
		parts := 0
		for _, n := range inst.g.AllNodes() {
			if o, ok := n.Op().(*gop); ok {
				parts += len(o.parts)
			}
		}
		if parts != 2 {
			t.Errorf("batch %d: %d convolutions write into the Concat, want 2", batch, parts)
		}
	}
}
