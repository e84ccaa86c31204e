package nn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
	"github.com/amt-dev/amt/nn/kernels"
	"gorgonia.org/tensor"
)

// residualNet is a residual block: conv(+BN) → Add with the block input
// (as the Add's first or second operand) → optional activation; with
// exposeSum the pre-activation value (the Conv/BN output) is also a graph
// output, which must prevent the fusion of the Add into the Conv.
func residualNet(bn, convFirst bool, act string, exposeSum bool) ot.Model {
	w := func(name string, dims ...int64) ot.Tensor {
		n := 1
		for _, d := range dims {
			n *= int(d)
		}
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(math.Sin(float64(3*i+len(name)))) * 0.3
		}
		return ot.F32(name, dims, vals...)
	}
	nodes := []ot.Node{
		{Name: "stem", Op: "Conv", In: []string{"x", "w0", "b0"}, Out: []string{"h"}, Attrs: []ot.Attr{ot.Ints("pads", 1, 1, 1, 1)}},
		{Name: "conv", Op: "Conv", In: []string{"h", "w1", "b1"}, Out: []string{"c"}, Attrs: []ot.Attr{ot.Ints("pads", 1, 1, 1, 1)}},
	}
	pre := "c"
	if bn {
		nodes = append(nodes, ot.Node{Name: "bn", Op: "BatchNormalization", In: []string{"c", "g", "be", "mu", "var"}, Out: []string{"n"}})
		pre = "n"
	}
	in := []string{pre, "h"}
	if !convFirst {
		in = []string{"h", pre}
	}
	nodes = append(nodes, ot.Node{Name: "add", Op: "Add", In: in, Out: []string{"s"}})
	out := "s"
	if act != "" {
		nodes = append(nodes, ot.Node{Name: "act", Op: act, In: []string{"s"}, Out: []string{"y"}})
		out = "y"
	}
	outs := []ot.Value{{Name: out, Dims: []any{"N", 8, 9, 7}}}
	if exposeSum {
		outs = append(outs, ot.Value{Name: pre, Dims: []any{"N", 8, 9, 7}})
	}
	return ot.Model{Opset: 13,
		Nodes: nodes,
		Inits: []ot.Tensor{
			w("w0", 8, 3, 3, 3), w("b0", 8), w("w1", 8, 8, 3, 3), w("b1", 8),
			w("g", 8), w("be", 8), w("mu", 8), ot.F32("var", []int64{8}, 1, 2, 3, 4, 5, 6, 7, 8),
		},
		Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 3, 9, 7}}},
		Outputs: outs,
	}
}

// graphOps returns the labels of the Gorgonia ops of m's graph for batch n.
func graphOps(t *testing.T, m *Model, n int) []string {
	t.Helper()
	inst, err := m.instance(n)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, nd := range inst.g.AllNodes() {
		if o, ok := nd.Op().(*gop); ok {
			ops = append(ops, o.label)
		}
	}
	return ops
}

// runBoth runs the fused and the unfused model on x and returns their
// first outputs.
func runBoth(t *testing.T, fused, plain *Model, x *tensor.Dense) (got, want []float32) {
	t.Helper()
	g, err := fused.Run(x)
	if err != nil {
		t.Fatal(err)
	}
	w, err := plain.Run(x)
	if err != nil {
		t.Fatal(err)
	}
	return g[0].Data().([]float32), w[0].Data().([]float32)
}

// TestResidualFusion checks that a residual Add (and the activation after
// it) is fused into the Conv before it, with the Conv's output as either
// operand, and that the fused graph computes what the unfused one does.
func TestResidualFusion(t *testing.T) {
	for _, bn := range []bool{false, true} {
		for _, convFirst := range []bool{false, true} {
			for _, act := range []string{"", "Relu", "LeakyRelu"} {
				name := fmt.Sprintf("bn=%v,convFirst=%v,act=%q", bn, convFirst, act)
				t.Run(name, func(t *testing.T) {
					fused, err := LoadBytes(residualNet(bn, convFirst, act, false).Bytes(), "fused")
					if err != nil {
						t.Fatal(err)
					}
					plain, err := LoadBytes(residualNet(bn, convFirst, act, true).Bytes(), "unfused")
					if err != nil {
						t.Fatal(err)
					}
					for _, batch := range []int{1, 3} {
						if ops := graphOps(t, fused, batch); len(ops) != 2 || slices.ContainsFunc(ops, func(s string) bool { return !strings.HasPrefix(s, "Conv(") }) {
							t.Errorf("fused graph ops %v, want the two Convs only", ops)
						}
						if ops := graphOps(t, plain, batch); !slices.Contains(ops, "Add(add)") {
							t.Errorf("graph ops %v: the Add was fused although its input is a graph output", ops)
						}
						g, w := runBoth(t, fused, plain, randInput([]int{batch, 3, 9, 7}, uint64(batch)))
						if len(g) != len(w) {
							t.Fatalf("fused output has %d values, unfused %d", len(g), len(w))
						}
						neg := 0
						for i := range g {
							if math.Abs(float64(g[i]-w[i])) > 1e-5*(1+math.Abs(float64(w[i]))) {
								t.Fatalf("batch %d: output %d fused %v, unfused %v", batch, i, g[i], w[i])
							}
							if w[i] < 0 {
								neg++
							}
						}
						if act == "Relu" && neg > 0 || act != "Relu" && neg == 0 {
							t.Errorf("%d negative outputs: the activation was not applied as expected", neg)
						}
					}
				})
			}
		}
	}
}

// poolNet is a convolution of inC input channels (pointwise for k = 1;
// for k = 3 shifted with 3, Winograd with 8) with a Relu, then a MaxPool
// with the given attributes; with exposeConv the Relu's output is also a
// graph output, which must prevent the fusion of the MaxPool into the Conv.
func poolNet(inC, k int64, poolAttrs []ot.Attr, exposeConv bool) ot.Model {
	vals := make([]float32, 8*inC*k*k)
	for i := range vals {
		vals[i] = float32(math.Sin(float64(5*i+1))) * 0.4
	}
	outs := []ot.Value{{Name: "p"}}
	if exposeConv {
		outs = append(outs, ot.Value{Name: "r"})
	}
	return ot.Model{Opset: 13,
		Nodes: []ot.Node{
			{Name: "conv", Op: "Conv", In: []string{"x", "w", "b"}, Out: []string{"c"}, Attrs: []ot.Attr{ot.Ints("pads", (k-1)/2, (k-1)/2, (k-1)/2, (k-1)/2)}},
			{Name: "relu", Op: "Relu", In: []string{"c"}, Out: []string{"r"}},
			{Name: "pool", Op: "MaxPool", In: []string{"r"}, Out: []string{"p"}, Attrs: poolAttrs},
		},
		Inits:   []ot.Tensor{ot.F32("w", []int64{8, inC, k, k}, vals...), ot.F32("b", []int64{8}, -0.1, 0.2, -0.3, 0.4, -0.5, 0.6, -0.7, 0.8)},
		Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", int(inC), 23, 19}}},
		Outputs: outs,
	}
}

// TestMaxPoolFusion checks that a MaxPool after a Conv (and its Relu) is
// computed with it, as one op, with exactly the unfused graph's results,
// and that those that cannot be (a 2×2/1 pooling with its windows past the
// right edge of a shifted convolution's rows, a 3×3/2 one after a Winograd
// convolution) are left alone.
func TestMaxPoolFusion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inC, k int64
		attrs  []ot.Attr
		fused  bool
	}{
		{"3x3 shifted conv, 3x3/2 ceil pool", 3, 3, []ot.Attr{ot.Ints("kernel_shape", 3, 3), ot.Ints("strides", 2, 2), ot.Int("ceil_mode", 1)}, true},
		{"3x3 shifted conv, 2x2/2 pool", 3, 3, []ot.Attr{ot.Ints("kernel_shape", 2, 2), ot.Ints("strides", 2, 2)}, true},
		{"3x3 Winograd conv, 2x2/2 ceil pool", 8, 3, []ot.Attr{ot.Ints("kernel_shape", 2, 2), ot.Ints("strides", 2, 2), ot.Int("ceil_mode", 1)}, true},
		{"1x1 conv, padded 3x3/1 pool", 3, 1, []ot.Attr{ot.Ints("kernel_shape", 3, 3), ot.Ints("pads", 1, 1, 1, 1)}, true},
		{"3x3 shifted conv, padded 2x2/1 pool", 3, 3, []ot.Attr{ot.Ints("kernel_shape", 2, 2), ot.Ints("pads", 0, 0, 1, 1)}, false},
		{"3x3 Winograd conv, 3x3/2 pool", 8, 3, []ot.Attr{ot.Ints("kernel_shape", 3, 3), ot.Ints("strides", 2, 2)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fused, err := LoadBytes(poolNet(tc.inC, tc.k, tc.attrs, false).Bytes(), "fused")
			if err != nil {
				t.Fatal(err)
			}
			plain, err := LoadBytes(poolNet(tc.inC, tc.k, tc.attrs, true).Bytes(), "unfused")
			if err != nil {
				t.Fatal(err)
			}
			// The reference kernels (refkernels builds) are never banded.
			wantFused := tc.fused && kernels.KernelSet() != "reference"
			for _, batch := range []int{1, 3} {
				if ops := graphOps(t, fused, batch); slices.Contains(ops, "MaxPool(pool)") == wantFused {
					t.Errorf("graph ops %v: MaxPool fused %v, want %v", ops, !wantFused, wantFused)
				}
				if ops := graphOps(t, plain, batch); !slices.Contains(ops, "MaxPool(pool)") {
					t.Errorf("graph ops %v: the MaxPool was fused although its input is a graph output", ops)
				}
				g, w := runBoth(t, fused, plain, randInput([]int{batch, int(tc.inC), 23, 19}, uint64(batch)))
				if !slices.Equal(g, w) {
					t.Fatalf("batch %d: fused output %v…, unfused %v…", batch, g[:min(8, len(g))], w[:min(8, len(w))])
				}
			}
		})
	}
}
