package nn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
)

// seq returns n values 0.5, 1.5, … scaled by s, with alternating signs.
func seq(n int, s float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = (float32(i) + 0.5) * s
		if i%3 == 1 {
			out[i] = -out[i]
		}
	}
	return out
}

func dims(s []int) []any {
	out := make([]any, len(s))
	for i, d := range s {
		out[i] = d
	}
	return out
}

func i64s(s []int) []int64 {
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = int64(d)
	}
	return out
}

func mustLoad(t *testing.T, m ot.Model) *Model {
	t.Helper()
	mod, err := LoadBytes(m.Bytes(), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

func run1(t *testing.T, m *Model, ins ...*tensor.Dense) []float32 {
	t.Helper()
	outs, err := m.Run(ins...)
	if err != nil {
		t.Fatal(err)
	}
	return outs[0].Data().([]float32)
}

func dense(shape []int, data []float32) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(slices.Clone(data)))
}

func approx(t *testing.T, got, want []float32, tol float64) {
	t.Helper()
	if err := closeTo(got, want, tol); err != nil {
		t.Fatal(err)
	}
}

// refBroadcast is an independent reference for numpy broadcasting: it maps
// each output index to input indices by modulo arithmetic.
func refBroadcast(a []float32, as []int, b []float32, bs []int, os []int, f func(x, y float32) float32) []float32 {
	out := make([]float32, numel(os))
	idx := func(o int, s []int) int {
		// Decompose o over os, then recompose over s (right-aligned).
		coords := make([]int, len(os))
		for d := len(os) - 1; d >= 0; d-- {
			coords[d] = o % os[d]
			o /= os[d]
		}
		k := 0
		for d := 0; d < len(s); d++ {
			c := coords[len(os)-len(s)+d] % s[d]
			k = k*s[d] + c
		}
		return k
	}
	for o := range out {
		out[o] = f(a[idx(o, as)], b[idx(o, bs)])
	}
	return out
}

func TestBroadcastBinary(t *testing.T) {
	fs := map[string]func(x, y float32) float32{
		"Add": func(x, y float32) float32 { return x + y },
		"Sub": func(x, y float32) float32 { return x - y },
		"Mul": func(x, y float32) float32 { return x * y },
		"Div": func(x, y float32) float32 { return x / y },
	}
	shapes := [][3][]int{
		{{2, 3, 4}, {4}, {2, 3, 4}},
		{{2, 1, 4}, {3, 1}, {2, 3, 4}},
		{{1}, {2, 3}, {2, 3}},
		{{2, 3, 4, 5}, {1, 3, 1, 1}, {2, 3, 4, 5}},
		{{5}, {2, 1, 5}, {2, 1, 5}},
		{{3, 1, 2}, {1, 4, 1}, {3, 4, 2}},
		{{2, 3}, {2, 3}, {2, 3}},
		// Large enough (≥ arithParallelValues) to be split over the
		// cores: a per-channel scale (ConvNeXt's layer scale), a row
		// broadcast with odd sizes, a trailing vector, the same shape.
		{{1, 24, 56, 56}, {24, 1, 1}, {1, 24, 56, 56}},
		{{2, 17, 33, 65}, {1, 17, 1, 65}, {2, 17, 33, 65}},
		{{70, 501}, {501}, {70, 501}},
		{{3, 70, 199}, {3, 70, 199}, {3, 70, 199}},
	}
	for op, f := range fs {
		for _, s := range shapes {
			for _, constB := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v%v/const=%v", op, s[0], s[1], constB), func(t *testing.T) {
					a, b := seq(numel(s[0]), 0.7), seq(numel(s[1]), 1.3)
					m := ot.Model{Opset: 13,
						Nodes:   []ot.Node{{Name: "op", Op: op, In: []string{"a", "b"}, Out: []string{"y"}}},
						Inputs:  []ot.Value{{Name: "a", Dims: dims(s[0])}},
						Outputs: []ot.Value{{Name: "y", Dims: dims(s[2])}},
					}
					ins := []*tensor.Dense{dense(s[0], a)}
					if constB {
						m.Inits = []ot.Tensor{ot.F32("b", i64s(s[1]), b...)}
					} else {
						m.Inputs = append(m.Inputs, ot.Value{Name: "b", Dims: dims(s[1])})
						ins = append(ins, dense(s[1], b))
					}
					mod := mustLoad(t, m)
					outs, err := mod.Run(ins...)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(outs[0].Shape(), tensor.Shape(s[2])) {
						t.Fatalf("shape %v, want %v", outs[0].Shape(), s[2])
					}
					approx(t, outs[0].Data().([]float32), refBroadcast(a, s[0], b, s[1], s[2], f), 1e-6)
				})
			}
		}
	}
}

// TestGemmNoStateAcrossRuns guards against onnx-go issue 202 (Gemm's bias
// accumulating across runs) and checks transB/alpha/beta and C broadcasting.
func TestGemmNoStateAcrossRuns(t *testing.T) {
	A, B, C := seq(2*3, 0.5), seq(4*3, 0.25), []float32{1, -2, 3, -4}
	m := ot.Model{Opset: 11,
		Nodes: []ot.Node{{Name: "fc", Op: "Gemm", In: []string{"a", "b", "c"}, Out: []string{"y"},
			Attrs: []ot.Attr{ot.Int("transB", 1), ot.Float("alpha", 0.5), ot.Float("beta", 2)}}},
		Inits:   []ot.Tensor{ot.F32("b", []int64{4, 3}, B...), ot.F32("c", []int64{4}, C...)},
		Inputs:  []ot.Value{{Name: "a", Dims: []any{"N", 3}}},
		Outputs: []ot.Value{{Name: "y", Dims: []any{"N", 4}}},
	}
	want := make([]float32, 2*4)
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			var s float32
			for k := 0; k < 3; k++ {
				s += A[i*3+k] * B[j*3+k]
			}
			want[i*4+j] = 0.5*s + 2*C[j]
		}
	}
	mod := mustLoad(t, m)
	for rep := 0; rep < 3; rep++ {
		approx(t, run1(t, mod, dense([]int{2, 3}, A)), want, 1e-6)
	}
	// Another batch size in between, then batch 2 again.
	run1(t, mod, dense([]int{1, 3}, A[:3]))
	approx(t, run1(t, mod, dense([]int{2, 3}, A)), want, 1e-6)
}

// TestDuplicateInputs checks Mul(x, x), which onnx-go's edge list cannot
// represent (it keeps one edge).
func TestDuplicateInputs(t *testing.T) {
	m := ot.Model{Opset: 13,
		Nodes:   []ot.Node{{Name: "sq", Op: "Mul", In: []string{"x", "x"}, Out: []string{"y"}}},
		Inputs:  []ot.Value{{Name: "x", Dims: []any{4}}},
		Outputs: []ot.Value{{Name: "y", Dims: []any{4}}},
	}
	got := run1(t, mustLoad(t, m), dense([]int{4}, []float32{1, -2, 3, 0.5}))
	approx(t, got, []float32{1, 4, 9, 0.25}, 0)
}

// TestShapeArithmeticFolded exports the usual x.view(x.size(0), -1) chain
// (Shape, Gather, Unsqueeze, Concat, Reshape) with a dynamic batch.
func TestShapeArithmeticFolded(t *testing.T) {
	for _, opset := range []int64{11, 13} {
		t.Run(fmt.Sprint(opset), func(t *testing.T) {
			unsq := ot.Node{Name: "unsq", Op: "Unsqueeze", In: []string{"n"}, Out: []string{"n1"}, Attrs: []ot.Attr{ot.Ints("axes", 0)}}
			var inits []ot.Tensor
			if opset >= 13 {
				unsq = ot.Node{Name: "unsq", Op: "Unsqueeze", In: []string{"n", "axes"}, Out: []string{"n1"}}
				inits = append(inits, ot.I64("axes", []int64{1}, 0))
			}
			m := ot.Model{Opset: opset,
				Nodes: []ot.Node{
					{Name: "shape", Op: "Shape", In: []string{"x"}, Out: []string{"s"}},
					{Name: "c0", Op: "Constant", Out: []string{"zero"}, Attrs: []ot.Attr{ot.TensorAttr("value", ot.I64("", nil, 0))}},
					{Name: "g", Op: "Gather", In: []string{"s", "zero"}, Out: []string{"n"}, Attrs: []ot.Attr{ot.Int("axis", 0)}},
					unsq,
					{Name: "cat", Op: "Concat", In: []string{"n1", "minus1"}, Out: []string{"shape2"}, Attrs: []ot.Attr{ot.Int("axis", 0)}},
					{Name: "view", Op: "Reshape", In: []string{"x", "shape2"}, Out: []string{"flat"}},
					{Name: "relu", Op: "Relu", In: []string{"flat"}, Out: []string{"y"}},
				},
				Inits:   append(inits, ot.I64("minus1", []int64{1}, -1)),
				Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 2, 3}}},
				Outputs: []ot.Value{{Name: "y", Dims: []any{"N", 6}}},
			}
			mod := mustLoad(t, m)
			for _, n := range []int{2, 5, 1} {
				x := seq(n*6, 1)
				outs, err := mod.Run(dense([]int{n, 2, 3}, x))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(outs[0].Shape(), tensor.Shape{n, 6}) {
					t.Fatalf("batch %d: shape %v", n, outs[0].Shape())
				}
				want := make([]float32, len(x))
				for i, v := range x {
					want[i] = max(v, 0)
				}
				approx(t, outs[0].Data().([]float32), want, 0)
			}
		})
	}
}

func TestResizeEmptyRoiDynamicBatch(t *testing.T) {
	m := ot.Model{Opset: 11,
		Nodes: []ot.Node{{Name: "up", Op: "Resize", In: []string{"x", "roi", "scales"}, Out: []string{"y"},
			Attrs: []ot.Attr{ot.String("mode", "nearest"), ot.String("coordinate_transformation_mode", "asymmetric"), ot.String("nearest_mode", "floor")}}},
		Inits:   []ot.Tensor{ot.F32("roi", []int64{0}), ot.F32("scales", []int64{4}, 1, 1, 2, 2)},
		Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 1, 2, 2}}},
		Outputs: []ot.Value{{Name: "y", Dims: []any{"N", 1, 4, 4}}},
	}
	mod := mustLoad(t, m)
	if got := mod.Inputs(); len(got) != 1 || !slices.Equal(got[0].Shape, []int{-1, 1, 2, 2}) {
		t.Errorf("Inputs() = %v", got)
	}
	if got := mod.Outputs(); len(got) != 1 || !slices.Equal(got[0].Shape, []int{-1, 1, 4, 4}) {
		t.Errorf("Outputs() = %v", got)
	}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	got := run1(t, mod, dense([]int{3, 1, 2, 2}, x))
	for b := 0; b < 3; b++ {
		for y := 0; y < 4; y++ {
			for xx := 0; xx < 4; xx++ {
				if w := x[b*4+(y/2)*2+xx/2]; got[b*16+y*4+xx] != w {
					t.Fatalf("image %d (%d,%d): got %g, want %g", b, y, xx, got[b*16+y*4+xx], w)
				}
			}
		}
	}
}

// TestOperators checks single operators with tricky attributes against
// hand-computed results.
func TestOperators(t *testing.T) {
	x16 := make([]float32, 16) // 4×4 plane 0..15
	for i := range x16 {
		x16[i] = float32(i)
	}
	cases := []struct {
		name    string
		opset   int64
		node    ot.Node
		inits   []ot.Tensor
		inShape []int
		in      []float32
		want    []float32
		outDims []int
	}{
		{"MaxPool ceil_mode", 11, ot.Node{Op: "MaxPool", Attrs: []ot.Attr{ot.Ints("kernel_shape", 3, 3), ot.Ints("strides", 2, 2), ot.Int("ceil_mode", 1)}},
			nil, []int{1, 1, 4, 4}, x16, []float32{10, 11, 14, 15}, []int{1, 1, 2, 2}},
		{"MaxPool pads", 11, ot.Node{Op: "MaxPool", Attrs: []ot.Attr{ot.Ints("kernel_shape", 2, 2), ot.Ints("strides", 2, 2), ot.Ints("pads", 1, 1, 1, 1)}},
			nil, []int{1, 1, 4, 4}, x16, []float32{0, 2, 3, 8, 10, 11, 12, 14, 15}, []int{1, 1, 3, 3}},
		{"AveragePool exclude pad", 11, ot.Node{Op: "AveragePool", Attrs: []ot.Attr{ot.Ints("kernel_shape", 2, 2), ot.Ints("strides", 2, 2), ot.Ints("pads", 1, 1, 1, 1)}},
			nil, []int{1, 1, 4, 4}, x16, []float32{0, 1.5, 3, 6, 7.5, 9, 12, 13.5, 15}, []int{1, 1, 3, 3}},
		{"AveragePool include pad", 11, ot.Node{Op: "AveragePool", Attrs: []ot.Attr{ot.Ints("kernel_shape", 2, 2), ot.Ints("strides", 2, 2), ot.Ints("pads", 1, 1, 1, 1), ot.Int("count_include_pad", 1)}},
			nil, []int{1, 1, 4, 4}, x16, []float32{0, 0.75, 0.75, 3, 7.5, 4.5, 3, 6.75, 3.75}, []int{1, 1, 3, 3}},
		{"GlobalAveragePool", 11, ot.Node{Op: "GlobalAveragePool"}, nil, []int{1, 2, 2, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8}, []float32{2.5, 6.5}, []int{1, 2, 1, 1}},
		{"GlobalAveragePool 5 planes", 11, ot.Node{Op: "GlobalAveragePool"}, nil, []int{1, 5, 1, 3}, x16[1:16], []float32{2, 5, 8, 11, 14}, []int{1, 5, 1, 1}},
		{"Slice negative step", 11, ot.Node{Op: "Slice", In: []string{"x", "st", "en", "ax", "sp"}},
			[]ot.Tensor{ot.I64("st", []int64{1}, -1), ot.I64("en", []int64{1}, math.MinInt64), ot.I64("ax", []int64{1}, 1), ot.I64("sp", []int64{1}, -2)},
			[]int{2, 5}, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []float32{4, 2, 0, 9, 7, 5}, []int{2, 3}},
		{"Slice opset 9 attrs", 9, ot.Node{Op: "Slice", Attrs: []ot.Attr{ot.Ints("starts", 1), ot.Ints("ends", 1000), ot.Ints("axes", 1)}},
			nil, []int{2, 3}, []float32{0, 1, 2, 3, 4, 5}, []float32{1, 2, 4, 5}, []int{2, 2}},
		{"Pad reflect", 11, ot.Node{Op: "Pad", In: []string{"x", "p"}, Attrs: []ot.Attr{ot.String("mode", "reflect")}},
			[]ot.Tensor{ot.I64("p", []int64{4}, 0, 2, 0, 1)}, []int{1, 3}, []float32{1, 2, 3}, []float32{3, 2, 1, 2, 3, 2}, []int{1, 6}},
		{"Pad edge", 11, ot.Node{Op: "Pad", In: []string{"x", "p"}, Attrs: []ot.Attr{ot.String("mode", "edge")}},
			[]ot.Tensor{ot.I64("p", []int64{4}, 0, 1, 0, 2)}, []int{1, 3}, []float32{1, 2, 3}, []float32{1, 1, 2, 3, 3, 3}, []int{1, 6}},
		{"Pad constant opset 2", 2, ot.Node{Op: "Pad", Attrs: []ot.Attr{ot.Ints("pads", 1, 0, 0, 1), ot.Float("value", 9)}},
			nil, []int{1, 2}, []float32{1, 2}, []float32{9, 9, 9, 1, 2, 9}, []int{2, 3}},
		{"Transpose", 11, ot.Node{Op: "Transpose", Attrs: []ot.Attr{ot.Ints("perm", 1, 0)}}, nil, []int{2, 3}, []float32{0, 1, 2, 3, 4, 5}, []float32{0, 3, 1, 4, 2, 5}, []int{3, 2}},
		{"Softmax opset 11 coerces to 2-D", 11, ot.Node{Op: "Softmax", Attrs: []ot.Attr{ot.Int("axis", 1)}}, nil, []int{1, 2, 1}, []float32{0, float32(math.Log(3))}, []float32{0.25, 0.75}, []int{1, 2, 1}},
		{"Softmax opset 13 one axis", 13, ot.Node{Op: "Softmax", Attrs: []ot.Attr{ot.Int("axis", 1)}}, nil, []int{1, 2, 2}, []float32{0, 0, float32(math.Log(3)), 0}, []float32{0.25, 0.5, 0.75, 0.5}, []int{1, 2, 2}},
		{"Clip opset 11 inputs", 11, ot.Node{Op: "Clip", In: []string{"x", "lo", "hi"}}, []ot.Tensor{ot.F32("lo", nil, -1), ot.F32("hi", nil, 2)},
			[]int{4}, []float32{-3, 0.5, 1.5, 7}, []float32{-1, 0.5, 1.5, 2}, []int{4}},
		{"Clip opset 6 attrs", 6, ot.Node{Op: "Clip", Attrs: []ot.Attr{ot.Float("min", 0), ot.Float("max", 1)}}, nil, []int{3}, []float32{-1, 0.5, 2}, []float32{0, 0.5, 1}, []int{3}},
		{"LeakyRelu", 11, ot.Node{Op: "LeakyRelu", Attrs: []ot.Attr{ot.Float("alpha", 0.1)}}, nil, []int{2}, []float32{-2, 3}, []float32{-0.2, 3}, []int{2}},
		{"Flatten axis 2", 11, ot.Node{Op: "Flatten", Attrs: []ot.Attr{ot.Int("axis", 2)}}, nil, []int{1, 2, 3}, seq(6, 1), seq(6, 1), []int{2, 3}},
		{"Resize linear align_corners", 11, ot.Node{Op: "Resize", In: []string{"x", "", "", "sz"}, Attrs: []ot.Attr{ot.String("mode", "linear"), ot.String("coordinate_transformation_mode", "align_corners")}},
			[]ot.Tensor{ot.I64("sz", []int64{4}, 1, 1, 1, 3)}, []int{1, 1, 1, 2}, []float32{0, 4}, []float32{0, 2, 4}, []int{1, 1, 1, 3}},
		{"Resize linear half_pixel", 11, ot.Node{Op: "Resize", In: []string{"x", "", "sc"}, Attrs: []ot.Attr{ot.String("mode", "linear")}},
			[]ot.Tensor{ot.F32("sc", []int64{4}, 1, 1, 1, 2)}, []int{1, 1, 1, 2}, []float32{0, 4}, []float32{0, 1, 3, 4}, []int{1, 1, 1, 4}},
		{"Upsample opset 9", 9, ot.Node{Op: "Upsample", In: []string{"x", "sc"}}, []ot.Tensor{ot.F32("sc", []int64{2}, 1, 3)},
			[]int{1, 2}, []float32{1, 2}, []float32{1, 1, 1, 2, 2, 2}, []int{1, 6}},
		{"BatchNormalization", 11, ot.Node{Op: "BatchNormalization", In: []string{"x", "g", "b", "m", "v"}, Attrs: []ot.Attr{ot.Float("epsilon", 0)}},
			[]ot.Tensor{ot.F32("g", []int64{2}, 2, 1), ot.F32("b", []int64{2}, 1, 0), ot.F32("m", []int64{2}, 1, -1), ot.F32("v", []int64{2}, 4, 1)},
			[]int{1, 2, 1, 2}, []float32{3, 5, 0, 1}, []float32{3, 5, 1, 2}, []int{1, 2, 1, 2}},
		{"MatMul batched broadcast", 13, ot.Node{Op: "MatMul", In: []string{"x", "w"}}, []ot.Tensor{ot.F32("w", []int64{2, 1}, 1, 10)},
			[]int{2, 2, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8}, []float32{21, 43, 65, 87}, []int{2, 2, 1}},
		{"Conv depthwise asymmetric pads dilations", 11, ot.Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []ot.Attr{ot.Int("group", 2), ot.Ints("pads", 0, 1, 0, 0), ot.Ints("dilations", 1, 2)}},
			[]ot.Tensor{ot.F32("w", []int64{2, 1, 1, 2}, 1, 10, 2, 20)}, []int{1, 2, 1, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8},
			[]float32{20, 31, 42, 20 * 6, 2*5 + 20*7, 2*6 + 20*8}, []int{1, 2, 1, 3}},
		{"ReduceMean", 13, ot.Node{Op: "ReduceMean", Attrs: []ot.Attr{ot.Ints("axes", -1), ot.Int("keepdims", 0)}}, nil, []int{2, 3}, []float32{1, 2, 6, -1, 0, 4}, []float32{3, 1}, []int{2}},
		{"ReduceMean all keepdims", 13, ot.Node{Op: "ReduceMean"}, nil, []int{2, 2}, []float32{1, 2, 3, 6}, []float32{3}, []int{1, 1}},
		{"Expand", 13, ot.Node{Op: "Expand", In: []string{"x", "s"}}, []ot.Tensor{ot.I64("s", []int64{2}, 2, 1)}, []int{1, 3}, []float32{1, 2, 3}, []float32{1, 2, 3, 1, 2, 3}, []int{2, 3}},
		{"Sigmoid", 13, ot.Node{Op: "Sigmoid"}, nil, []int{2}, []float32{0, float32(math.Log(3))}, []float32{0.5, 0.75}, []int{2}},
		{"Pow", 13, ot.Node{Op: "Pow", In: []string{"x", "e"}}, []ot.Tensor{ot.F32("e", nil, 2)}, []int{3}, []float32{-2, 0.5, 3}, []float32{4, 0.25, 9}, []int{3}},
		// HardSwish: the values ONNX Runtime 1.30.0 computes (bit for bit, as
		// on 2,001 points of [-5, 5]); x·(x/6 + 1/2) between -3 and 3.
		{"HardSwish", 14, ot.Node{Op: "HardSwish"}, nil, []int{7}, []float32{-4, -3, -1.5, 0, 1, 3, 4}, []float32{0, 0, -0.375, 0, 0.6666667, 3, 4}, []int{7}},
		{"Cast to float", 13, ot.Node{Op: "Cast", Attrs: []ot.Attr{ot.Int("to", 1)}}, nil, []int{2}, []float32{1.5, -2}, []float32{1.5, -2}, []int{2}},
		{"Conv SAME_UPPER stride 2 + Relu fused", 11, ot.Node{Op: "Conv", In: []string{"x", "w", "bias"}, Out: []string{"c"}, Attrs: []ot.Attr{ot.String("auto_pad", "SAME_UPPER"), ot.Ints("strides", 2, 2)}},
			[]ot.Tensor{ot.F32("w", []int64{1, 1, 2, 2}, 1, 1, 1, 1), ot.F32("bias", []int64{1}, -20)}, []int{1, 1, 4, 4}, x16,
			[]float32{0, 0, 22, 30}, []int{1, 1, 2, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := c.node
			n.Name = "n0"
			if n.In == nil {
				n.In = []string{"x"}
			}
			nodes := []ot.Node{n}
			if strings.Contains(c.name, "fused") {
				nodes = append(nodes, ot.Node{Name: "r", Op: "Relu", In: []string{"c"}, Out: []string{"y"}})
			} else {
				nodes[0].Out = []string{"y"}
			}
			m := ot.Model{Opset: c.opset, Nodes: nodes, Inits: c.inits,
				Inputs:  []ot.Value{{Name: "x", Dims: dims(c.inShape)}},
				Outputs: []ot.Value{{Name: "y", Dims: dims(c.outDims)}},
			}
			mod := mustLoad(t, m)
			for rep := 0; rep < 2; rep++ {
				outs, err := mod.Run(dense(c.inShape, c.in))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(outs[0].Shape(), tensor.Shape(c.outDims)) {
					t.Fatalf("shape %v, want %v", outs[0].Shape(), c.outDims)
				}
				approx(t, outs[0].Data().([]float32), c.want, 1e-6)
			}
		})
	}
}

// TestHardSwishFunctionBody checks HardSwish against the function body the
// ONNX specification defines it by, HardSigmoid(alpha = 1/6, beta = 1/2)
// then Mul, built from the engine's own operators: bit for bit.
func TestHardSwishFunctionBody(t *testing.T) {
	x := make([]float32, 1201)
	for i := range x {
		x[i] = float32(i-600) / 100 // -6 … 6 by 0.01: both plateaus and the curve
	}
	in := []ot.Value{{Name: "x", Dims: []any{"N", len(x)}}}
	out := []ot.Value{{Name: "y"}}
	hs := mustLoad(t, ot.Model{Opset: 14, Nodes: []ot.Node{{Name: "hs", Op: "HardSwish", In: []string{"x"}, Out: []string{"y"}}},
		Inputs: in, Outputs: out})
	body := mustLoad(t, ot.Model{Opset: 14, Nodes: []ot.Node{
		{Name: "hsig", Op: "HardSigmoid", In: []string{"x"}, Out: []string{"s"}, Attrs: []ot.Attr{ot.Float("alpha", 1.0/6), ot.Float("beta", 0.5)}},
		{Name: "mul", Op: "Mul", In: []string{"x", "s"}, Out: []string{"y"}},
	}, Inputs: in, Outputs: out})
	got := run1(t, hs, dense([]int{1, len(x)}, x))
	want := run1(t, body, dense([]int{1, len(x)}, x))
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("HardSwish(%v) = %v, HardSigmoid·x gives %v", x[i], got[i], want[i])
		}
	}
}

// TestSupportedOps checks the list of operators against the table and the
// load-time check.
func TestSupportedOps(t *testing.T) {
	ops := SupportedOps()
	if !slices.IsSorted(ops) || len(slices.Compact(slices.Clone(ops))) != len(ops) {
		t.Errorf("SupportedOps() = %v: not sorted or not unique", ops)
	}
	if len(ops) != len(opTable) {
		t.Errorf("SupportedOps() has %d operators, the table %d", len(ops), len(opTable))
	}
	var nodes []onode
	for _, op := range ops {
		if opTable[op].build == nil {
			t.Errorf("%s has no build function", op)
		}
		nodes = append(nodes, onode{name: "n_" + op, op: op})
	}
	if err := checkOps(nodes, 13); err != nil {
		t.Errorf("checkOps rejects a supported operator: %v", err)
	}
	for _, op := range []string{"Conv", "HardSwish", "Resize"} {
		if !slices.Contains(ops, op) {
			t.Errorf("SupportedOps() lacks %s", op)
		}
	}
}

// TestSplit checks Split with explicit sizes at opsets 11 (attribute) and
// 13 (input).
func TestSplit(t *testing.T) {
	for _, opset := range []int64{11, 13} {
		n := ot.Node{Name: "s", Op: "Split", In: []string{"x"}, Out: []string{"a", "b"}, Attrs: []ot.Attr{ot.Int("axis", 1), ot.Ints("split", 1, 2)}}
		var inits []ot.Tensor
		if opset >= 13 {
			n = ot.Node{Name: "s", Op: "Split", In: []string{"x", "sp"}, Out: []string{"a", "b"}, Attrs: []ot.Attr{ot.Int("axis", 1)}}
			inits = []ot.Tensor{ot.I64("sp", []int64{2}, 1, 2)}
		}
		m := ot.Model{Opset: opset, Nodes: []ot.Node{n}, Inits: inits,
			Inputs:  []ot.Value{{Name: "x", Dims: []any{2, 3}}},
			Outputs: []ot.Value{{Name: "b", Dims: []any{2, 2}}, {Name: "a", Dims: []any{2, 1}}},
		}
		outs, err := mustLoad(t, m).Run(dense([]int{2, 3}, []float32{0, 1, 2, 3, 4, 5}))
		if err != nil {
			t.Fatal(err)
		}
		approx(t, outs[0].Data().([]float32), []float32{1, 2, 4, 5}, 0)
		approx(t, outs[1].Data().([]float32), []float32{0, 3}, 0)
	}
}

// TestLoadErrors checks that unsupported models fail at load time with a
// message naming the model, node, operator and attribute.
func TestLoadErrors(t *testing.T) {
	base := func(n ot.Node, inits ...ot.Tensor) ot.Model {
		n.Name = "bad_node"
		n.Out = []string{"y"}
		if n.In == nil {
			n.In = []string{"x"}
		}
		return ot.Model{Opset: 11, Nodes: []ot.Node{n}, Inits: inits,
			Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 1, 4, 4}}},
			Outputs: []ot.Value{{Name: "y"}},
		}
	}
	w := ot.F32("w", []int64{1, 1, 1, 1}, 1)
	cases := []struct {
		name string
		m    ot.Model
		want []string
	}{
		{"unknown op", base(ot.Node{Op: "FancyOp"}), []string{`unsupported operator FancyOp (opset 11, node "bad_node")`}},
		{"unknown ops", ot.Model{Opset: 13,
			Nodes: []ot.Node{
				{Name: "a", Op: "Gelu", In: []string{"x"}, Out: []string{"h1"}},
				{Name: "b", Op: "Relu", In: []string{"h1"}, Out: []string{"h2"}},
				{Name: "c", Op: "FusedConv", Domain: "com.microsoft", In: []string{"h2"}, Out: []string{"h3"}},
				{Name: "d", Op: "GridSample", In: []string{"h3"}, Out: []string{"h4"}},
				{Name: "e", Op: "Gelu", In: []string{"h4"}, Out: []string{"y"}},
			},
			Inputs: []ot.Value{{Name: "x", Dims: []any{"N", 4}}}, Outputs: []ot.Value{{Name: "y"}}},
			[]string{`3 unsupported operators: Gelu (opset 13, node "a" and 1 more), FusedConv in domain "com.microsoft" (node "c"), GridSample (opset 13, node "d")`}},
		{"unknown attribute", base(ot.Node{Op: "Relu", Attrs: []ot.Attr{ot.Int("fancy", 1)}}), []string{`node "bad_node" (Relu`, `unsupported attribute "fancy"`}},
		{"pad wrap", base(ot.Node{Op: "Pad", In: []string{"x", "p"}, Attrs: []ot.Attr{ot.String("mode", "wrap")}}, ot.I64("p", []int64{8}, 0, 0, 1, 1, 0, 0, 1, 1)), []string{`"mode" = "wrap"`}},
		{"resize cubic", base(ot.Node{Op: "Resize", In: []string{"x", "", "s"}, Attrs: []ot.Attr{ot.String("mode", "cubic")}}, ot.F32("s", []int64{4}, 1, 1, 2, 2)), []string{`"mode" = "cubic"`}},
		{"conv runtime weight", ot.Model{Opset: 11, Nodes: []ot.Node{{Name: "bad_node", Op: "Conv", In: []string{"x", "x"}, Out: []string{"y"}}},
			Inputs: []ot.Value{{Name: "x", Dims: []any{1, 1, 4, 4}}}, Outputs: []ot.Value{{Name: "y"}}}, []string{"must be a constant"}},
		{"conv bad auto_pad", base(ot.Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []ot.Attr{ot.String("auto_pad", "FANCY")}}, w), []string{`"auto_pad" = "FANCY"`}},
		{"3-D conv", ot.Model{Opset: 11, Nodes: []ot.Node{{Name: "bad_node", Op: "Conv", In: []string{"x", "w"}, Out: []string{"y"}}},
			Inits:  []ot.Tensor{ot.F32("w", []int64{1, 1, 1, 1, 1}, 1)},
			Inputs: []ot.Value{{Name: "x", Dims: []any{1, 1, 2, 2, 2}}}, Outputs: []ot.Value{{Name: "y"}}}, []string{"only 1-D and 2-D convolution"}},
		{"clip bound not a scalar", base(ot.Node{Op: "Clip", In: []string{"x", "lo"}}, ot.F32("lo", []int64{2}, 0, 1)), []string{`node "bad_node" (Clip`, "input 1 (min) has 2 values, want a scalar"}},
		{"missing input", base(ot.Node{Op: "Add", In: []string{"x", "nowhere"}}), []string{`input "nowhere" is not produced`}},
		{"dynamic spatial dim", ot.Model{Opset: 11, Nodes: []ot.Node{{Name: "n", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
			Inputs: []ot.Value{{Name: "x", Dims: []any{"N", "H"}}}, Outputs: []ot.Value{{Name: "y"}}}, []string{`dimension 1 ("H") is dynamic`}},
		{"missing output", ot.Model{Opset: 11, Nodes: []ot.Node{{Name: "n", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
			Inputs: []ot.Value{{Name: "x", Dims: []any{"N", 2}}}, Outputs: []ot.Value{{Name: "nothere"}}}, []string{`graph output "nothere"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadBytes(c.m.Bytes(), "model.onnx")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(c.want, "model.onnx") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestRunErrors checks the input validation of Run.
func TestRunErrors(t *testing.T) {
	m := mustLoad(t, ot.Model{Opset: 11, Nodes: []ot.Node{{Name: "n", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
		Inputs: []ot.Value{{Name: "x", Dims: []any{"N", 2}}}, Outputs: []ot.Value{{Name: "y"}}})
	cases := []struct {
		name string
		ins  []*tensor.Dense
		want string
	}{
		{"no input", nil, "got 0 inputs"},
		{"wrong dims", []*tensor.Dense{dense([]int{1, 3}, make([]float32, 3))}, "want [-1 2]"},
		{"wrong rank", []*tensor.Dense{dense([]int{2}, make([]float32, 2))}, "want rank 2"},
		{"wrong type", []*tensor.Dense{tensor.New(tensor.WithShape(1, 2), tensor.Of(tensor.Float64))}, "want float32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := m.Run(c.ins...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestFixedBatchRunsImageByImage checks that a model with a fixed batch of
// 1 accepts larger batches.
func TestFixedBatchRunsImageByImage(t *testing.T) {
	m := mustLoad(t, ot.Model{Opset: 11, Nodes: []ot.Node{{Name: "n", Op: "Neg", In: []string{"x"}, Out: []string{"y"}}},
		Inputs: []ot.Value{{Name: "x", Dims: []any{1, 2}}}, Outputs: []ot.Value{{Name: "y", Dims: []any{1, 2}}}})
	outs, err := m.Run(dense([]int{3, 2}, []float32{1, 2, 3, 4, 5, 6}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(outs[0].Shape(), tensor.Shape{3, 2}) {
		t.Fatalf("shape %v", outs[0].Shape())
	}
	approx(t, outs[0].Data().([]float32), []float32{-1, -2, -3, -4, -5, -6}, 0)
}

// TestClone checks that clones share weights but run independently,
// concurrently.
func TestClone(t *testing.T) {
	m := mustLoad(t, ot.Model{Opset: 11,
		Nodes:   []ot.Node{{Name: "c", Op: "Conv", In: []string{"x", "w"}, Out: []string{"y"}}},
		Inits:   []ot.Tensor{ot.F32("w", []int64{2, 1, 1, 1}, 2, -1)},
		Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 1, 1, 2}}},
		Outputs: []ot.Value{{Name: "y"}}})
	done := make(chan error)
	for g := 0; g < 4; g++ {
		c := m.Clone()
		go func() {
			for i := 0; i < 50; i++ {
				v := float32(g*100 + i)
				out, err := c.Run(dense([]int{1, 1, 1, 2}, []float32{v, 1}))
				if err != nil {
					done <- err
					return
				}
				if err := closeTo(out[0].Data().([]float32), []float32{2 * v, 2, -v, -1}, 0); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestConvBatchNormReluFused checks the folding of BatchNormalization into
// the preceding Conv's weights and bias, and the fused Relu.
func TestConvBatchNormReluFused(t *testing.T) {
	m := ot.Model{Opset: 11,
		Nodes: []ot.Node{
			{Name: "c", Op: "Conv", In: []string{"x", "w", "b"}, Out: []string{"c"}},
			{Name: "bn", Op: "BatchNormalization", In: []string{"c", "g", "be", "mu", "var"}, Out: []string{"n"}, Attrs: []ot.Attr{ot.Float("epsilon", 1), ot.Float("momentum", 0.9)}},
			{Name: "r", Op: "Relu", In: []string{"n"}, Out: []string{"y"}},
		},
		Inits: []ot.Tensor{
			ot.F32("w", []int64{2, 1, 1, 1}, 1, -1), ot.F32("b", []int64{2}, 0.5, 0),
			ot.F32("g", []int64{2}, 2, 1), ot.F32("be", []int64{2}, 0, 1), ot.F32("mu", []int64{2}, 1, 0), ot.F32("var", []int64{2}, 3, 0),
		},
		Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 1, 1, 2}}},
		Outputs: []ot.Value{{Name: "y"}},
	}
	mod := mustLoad(t, m)
	// conv: ch0 [1.5 2.5], ch1 [-1 -2]; BN scale g/sqrt(var+1) = [1 1]:
	// ch0 (v-1)·1+0 = [0.5 1.5], ch1 v+1 = [0 -1]; Relu.
	approx(t, run1(t, mod, dense([]int{1, 1, 1, 2}, []float32{1, 2})), []float32{0.5, 1.5, 0, 0}, 1e-6)
	inst, _ := mod.instance(1)
	if n := len(inst.g.AllNodes()); n != 2 { // the input and one fused op
		t.Errorf("graph has %d nodes, want 2 (input, fused Conv)", n)
	}
}

// TestZeroCopyConcat checks a Concat of two Conv outputs, which the convs
// write straight into (batch 3, per-image strides), and the same graph
// where one conv output is also a graph output (ordinary copying Concat).
func TestZeroCopyConcat(t *testing.T) {
	for _, alsoOutput := range []bool{false, true} {
		t.Run(fmt.Sprint("alsoOutput=", alsoOutput), func(t *testing.T) {
			m := ot.Model{Opset: 11,
				Nodes: []ot.Node{
					{Name: "ca", Op: "Conv", In: []string{"x", "wa"}, Out: []string{"a"}},
					{Name: "cb", Op: "Conv", In: []string{"x", "wb"}, Out: []string{"b"}},
					{Name: "cat", Op: "Concat", In: []string{"a", "b"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Int("axis", 1)}},
				},
				Inits:   []ot.Tensor{ot.F32("wa", []int64{1, 1, 1, 1}, 2), ot.F32("wb", []int64{2, 1, 1, 1}, -1, 3)},
				Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 1, 1, 2}}},
				Outputs: []ot.Value{{Name: "y"}},
			}
			if alsoOutput {
				m.Outputs = append(m.Outputs, ot.Value{Name: "b"})
			}
			mod := mustLoad(t, m)
			x := []float32{1, 2, 3, 4, 5, 6}
			var want []float32
			for i := 0; i < 3; i++ {
				p, q := x[2*i], x[2*i+1]
				want = append(want, 2*p, 2*q, -p, -q, 3*p, 3*q)
			}
			for rep := 0; rep < 2; rep++ {
				approx(t, run1(t, mod, dense([]int{3, 1, 1, 2}, x)), want, 0)
			}
			inst, _ := mod.instance(3)
			zeroCopy := false
			for _, n := range inst.g.AllNodes() {
				if o, ok := n.Op().(*gop); ok && o.parts != nil {
					zeroCopy = true
				}
			}
			if zeroCopy == alsoOutput {
				t.Errorf("zero-copy concat used: %v, want %v", zeroCopy, !alsoOutput)
			}
		})
	}
}

// TestNoRuntimeOps checks a graph whose output is its input (Identity):
// the Gorgonia graph holds only the input node.
func TestNoRuntimeOps(t *testing.T) {
	m := mustLoad(t, ot.Model{Opset: 13,
		Nodes:  []ot.Node{{Name: "id", Op: "Identity", In: []string{"x"}, Out: []string{"y"}}},
		Inputs: []ot.Value{{Name: "x", Dims: []any{"N", 2}}}, Outputs: []ot.Value{{Name: "y"}}})
	x := []float32{1, 2, 3, 4}
	for rep := 0; rep < 2; rep++ {
		approx(t, run1(t, m, dense([]int{2, 2}, x)), x, 0)
	}
}

// TestNewOpErrors checks that attribute values of the operators of issue
// #18 outside what is implemented (or hostile sizes) fail at load time with
// the operator, node and value named.
func TestNewOpErrors(t *testing.T) {
	one := func(n ot.Node, in []any, inits ...ot.Tensor) ot.Model {
		n.Name, n.Out = "bad_node", []string{"y"}
		if n.In == nil {
			n.In = []string{"x"}
		}
		return ot.Model{Opset: 13, Nodes: []ot.Node{n}, Inits: inits,
			Inputs: []ot.Value{{Name: "x", Dims: in}}, Outputs: []ot.Value{{Name: "y"}}}
	}
	cases := []struct {
		name string
		m    ot.Model
		want string
	}{
		{"tile too large", one(ot.Node{Op: "Tile", In: []string{"x", "r"}}, []any{"N", 4}, ot.I64("r", []int64{2}, 1, 1<<40)), "the limit per tensor"},
		{"tile negative", one(ot.Node{Op: "Tile", In: []string{"x", "r"}}, []any{"N", 4}, ot.I64("r", []int64{2}, 1, -2)), "negative repeat"},
		{"convtranspose output_shape", one(ot.Node{Op: "ConvTranspose", In: []string{"x", "w"}, Attrs: []ot.Attr{ot.Ints("output_shape", 1<<40, 1<<40)}},
			[]any{1, 1, 2, 2}, ot.F32("w", []int64{1, 1, 1, 1}, 1)), "the limit per tensor"},
		{"convtranspose pads", one(ot.Node{Op: "ConvTranspose", In: []string{"x", "w"}, Attrs: []ot.Attr{ot.Ints("pads", -1, 0, 0, 0)}},
			[]any{1, 1, 2, 2}, ot.F32("w", []int64{1, 1, 1, 1}, 1)), `"pads"`},
		{"topk k", one(ot.Node{Op: "TopK", In: []string{"x", "k"}, Out: []string{"v", "i"}}, []any{2, 5}, ot.I64("k", []int64{1}, 9)), "K = 9 out of range"},
		{"einsum diagonal", one(ot.Node{Op: "Einsum", Attrs: []ot.Attr{ot.String("equation", "ii->i")}}, []any{3, 3}), "diagonals are not supported"},
		{"einsum rank", one(ot.Node{Op: "Einsum", Attrs: []ot.Attr{ot.String("equation", "ij->j")}}, []any{3, 3, 3}), "does not match an operand of rank 3"},
		{"mod fmod 0 on floats", one(ot.Node{Op: "Mod", In: []string{"x", "x"}}, []any{3}), `"fmod" = 0`},
		{"depthtospace blocksize", one(ot.Node{Op: "DepthToSpace", Attrs: []ot.Attr{ot.Int("blocksize", 3)}}, []any{1, 8, 2, 2}), `"blocksize" = 3`},
		{"layernorm scale shape", one(ot.Node{Op: "LayerNormalization", In: []string{"x", "s"}}, []any{2, 4}, ot.F32("s", []int64{3}, 1, 1, 1)), "Scale of shape [3] does not broadcast to [4]"},
		{"scatternd index", one(ot.Node{Op: "ScatterND", In: []string{"x", "i", "u"}}, []any{4}, ot.I64("i", []int64{1, 1}, 7), ot.F32("u", []int64{1}, 1)), "out of range"},
		{"1-D conv pads", one(ot.Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []ot.Attr{ot.Ints("pads", 1, 1, 1, 1)}}, []any{1, 1, 5}, ot.F32("w", []int64{1, 1, 3}, 1, 1, 1)), "want 2 values for a 1-D convolution"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "topk k" {
				c.m.Outputs = []ot.Value{{Name: "v"}}
			}
			_, err := LoadBytes(c.m.Bytes(), "model.onnx")
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `node "bad_node"`) {
				t.Errorf("error %q does not contain %q and the node", err, c.want)
			}
		})
	}
}
