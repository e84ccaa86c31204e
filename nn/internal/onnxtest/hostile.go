package onnxtest

import (
	"fmt"
	"math"
	"strconv"
)

// Case is a crafted model file that loading must reject with a one-line
// error containing Want (issue #12: files of a few hundred bytes that
// crashed the loader or exhausted memory).
type Case struct {
	Name string
	File []byte
	Want string
}

// Hostile returns the crafted model files of the families of issue #12:
// tensors whose stored data does not match their dimensions; negative,
// overflowing or huge dimensions in tensors, graph inputs and outputs;
// operators whose output size comes from values in the file
// (ConstantOfShape, Expand, Reshape, Resize, Pad, Range, …); absurd
// attributes; unsupported data types, external data, subgraphs; malformed
// protobuf and graph structure.
func Hostile() []Case {
	x := []Value{{Name: "x", Dims: []any{1, 3, 4, 4}}}
	y := []Value{{Name: "y"}}
	// one is a model of one node n over input x (plus inits).
	one := func(opset int64, n Node, inits ...Tensor) []byte {
		if n.Name == "" {
			n.Name = "n"
		}
		if n.Out == nil {
			n.Out = []string{"y"}
		}
		return Model{Opset: opset, Nodes: []Node{n}, Inits: inits, Inputs: x, Outputs: y}.Bytes()
	}
	// io is Relu over an input and an output of the given shapes.
	io := func(in, out []any) []byte {
		return Model{Opset: 13, Nodes: []Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
			Inputs: []Value{{Name: "x", Dims: in}}, Outputs: []Value{{Name: "y", Dims: out}}}.Bytes()
	}
	add := func(w Tensor) []byte { return one(13, Node{Op: "Add", In: []string{"x", w.Name}}, w) }
	shape := func(dims ...int64) Tensor { return I64("s", []int64{int64(len(dims))}, dims...) }
	cos := func(dims ...int64) []byte {
		return one(13, Node{Op: "ConstantOfShape", In: []string{"s"}}, shape(dims...))
	}
	valid := one(13, Node{Op: "Relu", In: []string{"x"}})
	attr := func(fields ...[]byte) Attr {
		var b []byte
		for _, f := range fields {
			b = append(b, f...)
		}
		return RawAttr(b)
	}
	name := func(s string) []byte { return Bytes(nil, 1, []byte(s)) }
	typ := func(t uint64) []byte { return Varint(nil, 20, t) }
	nested := func(depth int) Attr {
		// An If whose then_branch holds an If whose then_branch holds …
		g := Bytes(nil, 1, nil) // an empty node
		for i := 0; i < depth; i++ {
			n := Bytes(nil, 4, []byte("If"))
			n = Bytes(n, 5, attr(name("then_branch"), typ(5), Bytes(nil, 6, g)).raw)
			g = Bytes(nil, 1, n)
		}
		return attr(name("then_branch"), typ(5), Bytes(nil, 6, g))
	}
	chain := func(n int) []byte {
		m := Model{Opset: 13, Inputs: x, Outputs: y}
		prev := "x"
		for i := 0; i < n; i++ {
			out := "h" + itoa(i)
			if i == n-1 {
				out = "y"
			}
			m.Nodes = append(m.Nodes, Node{Name: "r" + itoa(i), Op: "Relu", In: []string{prev}, Out: []string{out}})
			prev = out
		}
		return m.Bytes()
	}
	f32raw := func(n int) []byte { return make([]byte, 4*n) }

	return []Case{
		// Stored data against declared dimensions.
		{"initializer declares 1e12 values, stores 1", add(F32("w", []int64{1e12}, 1)), "declare 1000000000000 values, the tensor stores 1"},
		{"Constant value declares 1e12 values, stores 1", one(13, Node{Op: "Constant", In: []string{},
			Attrs: []Attr{TensorAttr("value", F32("", []int64{1e6, 1e6}, 1))}}), "declare 1000000000000 values, the tensor stores 1"},
		{"initializer with a negative dimension", add(F32("w", []int64{-1}, 1)), "negative"},
		{"initializer of 2^32 x 2^32", add(F32("w", []int64{1 << 32, 1 << 32}, 1)), "declare more than"},
		{"initializer of 2^63-1 values", add(F32("w", []int64{math.MaxInt64}, 1)), "declare more than"},
		{"raw_data not a multiple of the element size", add(Tensor{Name: "w", Dims: []int64{2}, Raw: make([]byte, 7)}), "not a multiple"},
		{"float_data count differs", add(Tensor{Name: "w", Dims: []int64{2}, Extra: Bytes(nil, 4, f32raw(3))}), "declare 2 values, the tensor stores 3"},
		{"raw_data and float_data both", add(Tensor{Name: "w", Dims: []int64{1}, F: []float32{1}, Extra: Bytes(nil, 4, f32raw(1))}), "more than one field"},
		{"int64 shape with raw_data of 12 bytes", one(13, Node{Op: "Reshape", In: []string{"x", "s"}},
			Tensor{Name: "s", Dims: []int64{2}, IsInt: true, Raw: make([]byte, 12)}), "not a multiple"},
		{"float16 initializer", add(Tensor{Name: "w", Dims: []int64{1}, DataType: 10, Raw: make([]byte, 2)}), "FLOAT16 (10) is not supported"},
		{"string initializer", add(Tensor{Name: "w", Dims: []int64{1}, DataType: 8, Extra: Bytes(nil, 6, []byte("a"))}), "STRING (8) is not supported"},
		{"undefined data type", add(Tensor{Name: "w", Dims: []int64{1}, DataType: 99, Raw: make([]byte, 4)}), "data type 99 is not supported"},
		{"external data location", add(Tensor{Name: "w", Dims: []int64{1 << 30}, Extra: Varint(nil, 14, 1)}), "external data"},
		{"external data reference to /etc/passwd", add(Tensor{Name: "w", Dims: []int64{1},
			Extra: Bytes(nil, 13, append(Bytes(nil, 1, []byte("location")), Bytes(nil, 2, []byte("/etc/passwd"))...))}), "external data"},
		{"segmented tensor", add(Tensor{Name: "w", Dims: []int64{1}, F: []float32{1}, Extra: Bytes(nil, 3, Varint(nil, 1, 0))}), "segmented"},
		{"sparse initializer", Model{Opset: 13, Nodes: []Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
			Inputs: x, Outputs: y, GraphExtra: Bytes(nil, 15, nil)}.Bytes(), "sparse initializers"},
		{"Constant sparse_value", one(13, Node{Op: "Constant", In: []string{}, Attrs: []Attr{attr(name("sparse_value"), typ(11), Bytes(nil, 22, nil))}}), `"sparse_value" is not supported`},
		{"TENSOR attribute without a tensor", one(13, Node{Op: "Constant", In: []string{}, Attrs: []Attr{attr(name("value"), typ(4))}}), "holds no tensor"},
		{"attribute of unknown type 99", one(13, Node{Op: "Relu", In: []string{"x"}, Attrs: []Attr{attr(name("alpha"), typ(99), Varint(nil, 3, 1))}}), `unsupported attribute "alpha"`},
		{"attribute without a name", one(13, Node{Op: "Relu", In: []string{"x"}, Attrs: []Attr{attr(typ(2), Varint(nil, 3, 1))}}), "attribute without a name"},

		// Declared graph inputs and outputs.
		{"input [100000,3,100000,100000]", io([]any{100000, 3, 100000, 100000}, nil), "declare more than"},
		{"input [1,3,20000,20000]", io([]any{1, 3, 20000, 20000}, nil), "more than 67108864 elements"},
		{"input [N,3,20000,20000]", io([]any{"N", 3, 20000, 20000}, nil), "more than 67108864 elements"},
		{"input with a negative dimension", io([]any{1, -3, 4, 4}, nil), "dimension 1 has size -3"},
		{"input of 2^32 x 2^32", io([]any{1 << 32, 1 << 32, 1, 1}, nil), "declare more than"},
		{"input with a zero dimension", io([]any{1, 0, 4, 4}, nil), "a dimension of 0"},
		{"input of rank 40", io(ones(40), nil), "rank 40"},
		{"input of int64", Model{Opset: 13, Nodes: []Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
			Inputs: []Value{{Name: "x", Dims: []any{1, 4}, ElemType: 7}}, Outputs: y}.Bytes(), "element type 7"},
		{"input without a shape", io(nil, nil), "has no shape"},
		{"output [1,1e12]", io([]any{1, 3, 4, 4}, []any{1, 1000000000000}), "more than 67108864 elements"},
		{"output of 2^32 x 2^32", io([]any{1, 3, 4, 4}, []any{1 << 32, 1 << 32}), "declare more than"},

		// Operators whose output size comes from values in the file.
		{"ConstantOfShape of 1e12", cos(1e12), "more than 67108864 elements"},
		{"ConstantOfShape of 1e6 x 1e6", cos(1e6, 1e6), "more than 67108864 elements"},
		{"ConstantOfShape of 2^32 x 2^32", cos(1<<32, 1<<32), "more than 67108864 elements"},
		{"ConstantOfShape of -5", cos(-5), "negative dimension"},
		{"Expand to [1e7,3,4,4]", one(13, Node{Op: "Expand", In: []string{"x", "s"}}, shape(1e7, 3, 4, 4)), "more than 67108864 elements"},
		{"Expand to a negative shape", one(13, Node{Op: "Expand", In: []string{"x", "s"}}, shape(-1, 3, 4, 4)), "negative dimension"},
		{"Reshape to a shape whose size overflows to 48", one(13, Node{Op: "Reshape", In: []string{"x", "s"}}, shape(48, 7, 7905747460161236407)), "more than 67108864 elements"},
		{"Reshape with two -1", one(13, Node{Op: "Reshape", In: []string{"x", "s"}}, shape(-1, -1)), "more than one -1"},
		{"Resize by scales of 1e9", one(11, Node{Op: "Resize", In: []string{"x", "", "sc"}}, F32("sc", []int64{4}, 1, 1, 1e9, 1e9)), "4e+09 long"},
		{"Resize by scales of +Inf", one(11, Node{Op: "Resize", In: []string{"x", "", "sc"}}, F32("sc", []int64{4}, 1, 1, float32(math.Inf(1)), 1)), "long"},
		{"Resize to sizes of 1e6 x 1e6", one(11, Node{Op: "Resize", In: []string{"x", "", "", "sz"}}, I64("sz", []int64{4}, 1, 3, 1e6, 1e6)), "more than 67108864 elements"},
		{"Resize to a negative size", one(11, Node{Op: "Resize", In: []string{"x", "", "", "sz"}}, I64("sz", []int64{4}, 1, 3, -4, 4)), "negative dimension"},
		{"Resize to an empty output", one(11, Node{Op: "Resize", In: []string{"x", "", "sc"}}, F32("sc", []int64{4}, 1, 1, 1, 0.1)), "has no elements"},
		{"Upsample by scales of 1e9", one(9, Node{Op: "Upsample", In: []string{"x", "sc"}}, F32("sc", []int64{4}, 1, 1, 1e9, 1e9)), "4e+09 long"},
		{"Pad by 1e9", one(11, Node{Op: "Pad", In: []string{"x", "p"}}, I64("p", []int64{8}, 0, 0, 1e9, 1e9, 0, 0, 1e9, 1e9)), "more than 67108864"},
		{"Pad by 2^63-1", one(11, Node{Op: "Pad", In: []string{"x", "p"}}, I64("p", []int64{8}, 0, 0, 0, math.MaxInt64, 0, 0, 0, math.MaxInt64)), "more than 67108864"},
		{"Range of 1e12 values", one(11, Node{Op: "Range", In: []string{"a", "b", "c"}}, I64("a", nil, 0), I64("b", nil, 1e12), I64("c", nil, 1)), "more than the limit"},
		{"Range from MinInt64 to MaxInt64", one(11, Node{Op: "Range", In: []string{"a", "b", "c"}}, I64("a", nil, math.MinInt64), I64("b", nil, math.MaxInt64), I64("c", nil, 1)), "more than the limit"},
		{"Range of floats to +Inf", one(11, Node{Op: "Range", In: []string{"a", "b", "c"}}, F32("a", nil, 0), F32("b", nil, float32(math.Inf(1))), F32("c", nil, 1)), "more than the limit"},
		{"Split into parts of 1e12", Model{Opset: 13, Nodes: []Node{{Name: "n", Op: "Split", In: []string{"x", "sp"}, Out: []string{"y", "z"}, Attrs: []Attr{Int("axis", 1)}}},
			Inits: []Tensor{I64("sp", []int64{2}, 1e12, -1e12+3)}, Inputs: x, Outputs: y}.Bytes(), "sums to more"},
		{"MatMul broadcasting to 1e10 values", Model{Opset: 13, Nodes: []Node{
			{Name: "a", Op: "ConstantOfShape", In: []string{"sa"}, Out: []string{"A"}},
			{Name: "b", Op: "ConstantOfShape", In: []string{"sb"}, Out: []string{"B"}},
			{Name: "m", Op: "MatMul", In: []string{"A", "B"}, Out: []string{"C"}},
			{Name: "n", Op: "Add", In: []string{"x", "C"}, Out: []string{"y"}}},
			Inits: []Tensor{I64("sa", []int64{4}, 100000, 1, 1, 1), I64("sb", []int64{4}, 1, 100000, 1, 1)}, Inputs: x, Outputs: y}.Bytes(), "more than 67108864 elements"},
		{"Add broadcasting to 1e10 values", Model{Opset: 13, Nodes: []Node{
			{Name: "a", Op: "ConstantOfShape", In: []string{"sa"}, Out: []string{"A"}},
			{Name: "b", Op: "ConstantOfShape", In: []string{"sb"}, Out: []string{"B"}},
			{Name: "m", Op: "Add", In: []string{"A", "B"}, Out: []string{"C"}},
			{Name: "n", Op: "Add", In: []string{"x", "C"}, Out: []string{"y"}}},
			Inits: []Tensor{I64("sa", []int64{2}, 100000, 1), I64("sb", []int64{2}, 1, 100000)}, Inputs: x, Outputs: y}.Bytes(), "more than 67108864 elements"},
		{"Unsqueeze to rank 1004", one(11, Node{Op: "Unsqueeze", In: []string{"x"}, Attrs: []Attr{Ints("axes", seq(1000)...)}}), "rank 1004"},

		// Absurd attributes and mismatched shapes.
		{"Gather index out of range", one(13, Node{Op: "Gather", In: []string{"x", "i"}, Attrs: []Attr{Int("axis", 1)}}, I64("i", []int64{1}, 10)), "out of range"},
		{"Gemm of mismatched matrices", Model{Opset: 13, Nodes: []Node{{Name: "n", Op: "Gemm", In: []string{"x", "w"}, Out: []string{"y"}}},
			Inits: []Tensor{F32("w", []int64{3, 2}, 1, 2, 3, 4, 5, 6)}, Inputs: []Value{{Name: "x", Dims: []any{1, 4}}}, Outputs: y}.Bytes(), "inner dimensions differ"},
		{"Conv with group 0", one(11, Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []Attr{Int("group", 0)}}, F32("w", []int64{1, 3, 1, 1}, 1, 1, 1)), "group=0"},
		{"Conv with group not dividing the channels", one(11, Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []Attr{Int("group", 2)}}, F32("w", []int64{2, 1, 1, 1}, 1, 1)), "group=2"},
		{"Conv weights of 2 channels on 3", one(11, Node{Op: "Conv", In: []string{"x", "w"}}, F32("w", []int64{1, 2, 1, 1}, 1, 1)), "does not fit"},
		{"Conv with strides 0", one(11, Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []Attr{Ints("strides", 0, 1)}}, F32("w", []int64{1, 3, 1, 1}, 1, 1, 1)), "must be positive"},
		{"Conv with pads of 1e7", one(11, Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []Attr{Ints("pads", 1e7, 1e7, 1e7, 1e7)}}, F32("w", []int64{1, 3, 1, 1}, 1, 1, 1)), "more than 67108864 elements"},
		{"Conv with pads of 2^62", one(11, Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []Attr{Ints("pads", 1<<62, 1<<62, 1<<62, 1<<62)}}, F32("w", []int64{1, 3, 1, 1}, 1, 1, 1)), "more than 67108864"},
		{"Conv with negative pads", one(11, Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []Attr{Ints("pads", -1, 0, 0, 0)}}, F32("w", []int64{1, 3, 1, 1}, 1, 1, 1)), "non-negative"},
		{"Conv with kernel_shape 1e9", one(11, Node{Op: "Conv", In: []string{"x", "w"}, Attrs: []Attr{Ints("kernel_shape", 1e9, 1e9)}}, F32("w", []int64{1, 3, 1, 1}, 1, 1, 1)), "does not match weight shape"},
		{"MaxPool with kernel_shape 1e9", one(11, Node{Op: "MaxPool", In: []string{"x"}, Attrs: []Attr{Ints("kernel_shape", 1e9, 1e9)}}), "more than 67108864"},
		{"MaxPool with dilations 2^62", one(11, Node{Op: "MaxPool", In: []string{"x"}, Attrs: []Attr{Ints("kernel_shape", 2, 2), Ints("dilations", 1<<62, 1<<62)}}), "more than 67108864"},
		{"AveragePool with pads beyond the kernel", one(11, Node{Op: "AveragePool", In: []string{"x"}, Attrs: []Attr{Ints("kernel_shape", 3, 3), Ints("pads", 1, 48, 1, 1), Ints("strides", 2, 48)}}), "must be smaller than kernel_shape"},
		{"Transpose by an invalid perm", one(13, Node{Op: "Transpose", In: []string{"x"}, Attrs: []Attr{Ints("perm", 0, 0, 1, 2)}}), "not a permutation"},
		{"Softmax over axis 5", one(13, Node{Op: "Softmax", In: []string{"x"}, Attrs: []Attr{Int("axis", 5)}}), "out of range"},
		{"Concat of mismatched shapes", one(13, Node{Op: "Concat", In: []string{"x", "w"}, Attrs: []Attr{Int("axis", 1)}}, F32("w", []int64{1, 1, 2, 2}, 1, 2, 3, 4)), "incompatible"},

		// Protobuf and graph structure.
		{"truncated file", valid[:len(valid)/2], "truncated or not an ONNX file"},
		{"empty file", []byte{}, "truncated or not an ONNX file"},
		{"text file", []byte("hello, world\n"), "truncated or not an ONNX file (malformed protobuf field 13: mismatching end group marker)"},
		{"length prefix of 2^62", Bytes(nil, 7, nil)[:1:1], "truncated or not an ONNX file"},
		{"group wire type", append(valid[:len(valid):len(valid)], 0x0b, 0x0c), "truncated or not an ONNX file"},
		{"no opset", Model{Opset: 0, Nodes: []Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}}, Inputs: x, Outputs: y}.Bytes(), "operator set"},
		{"opset 1e18", one(1e18, Node{Op: "Relu", In: []string{"x"}}), "not a valid version"},
		{"opset -1", one(-1, Node{Op: "Relu", In: []string{"x"}}), "not a valid version"},
		{"two graphs", Model{Opset: 13, Nodes: []Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
			Inputs: x, Outputs: y, Extra: Bytes(nil, 7, nil)}.Bytes(), "more than one graph"},
		{"graph without nodes", Model{Opset: 13, Inputs: x, Outputs: y}.Bytes(), "no nodes"},
		{"graph without outputs", Model{Opset: 13, Nodes: []Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}}, Inputs: x}.Bytes(), "no outputs"},
		{"initializer defined twice", Model{Opset: 13, Nodes: []Node{{Name: "n", Op: "Add", In: []string{"x", "w"}, Out: []string{"y"}}},
			Inits: []Tensor{F32("w", nil, 1), F32("w", []int64{2}, 1, 2)}, Inputs: x, Outputs: y}.Bytes(), "defined twice"},
		{"initializer without a name", add(F32("", []int64{1}, 1)), "has no name"},
		{"node redefining the graph input", Model{Opset: 13, Nodes: []Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"x"}}},
			Inputs: x, Outputs: []Value{{Name: "x"}}}.Bytes(), "already defined"},
		{"cycle", Model{Opset: 13, Nodes: []Node{
			{Name: "a", Op: "Add", In: []string{"x", "z"}, Out: []string{"y"}},
			{Name: "b", Op: "Relu", In: []string{"y"}, Out: []string{"z"}}}, Inputs: x, Outputs: y}.Bytes(), `input "z" is not produced`},
		{"dangling input", one(13, Node{Op: "Add", In: []string{"x", "nowhere"}}), `input "nowhere" is not produced`},
		{"node without outputs", Model{Opset: 13, Nodes: []Node{{Name: "c", Op: "Conv", In: []string{"x", "w"}, Out: []string{}},
			{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}}, Inits: []Tensor{F32("w", []int64{1, 3, 1, 1}, 1, 1, 1)}, Inputs: x, Outputs: y}.Bytes(), "has no outputs"},
		{"node without op_type", Model{Opset: 13, Nodes: []Node{{Name: "r", In: []string{"x"}, Out: []string{"y"}}}, Inputs: x, Outputs: y}.Bytes(), "no op_type"},
		{"graph input listed twice", Model{Opset: 13, Nodes: []Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
			Inputs: append(x, x...), Outputs: y}.Bytes(), "listed twice"},
		{"If nested 2000 deep", one(13, Node{Op: "If", In: []string{"x"}, Attrs: []Attr{nested(2000)}}), "unsupported operator If"},
		{"200001 nodes", chain(200001), "200001 nodes, more than the limit"},
		{"node name not UTF-8", one(13, Node{Name: "bad\xff\xfe", Op: "Relu", In: []string{"x"}}), "not valid UTF-8"},
		{"operator name with newlines", one(13, Node{Op: "Fancy\nsecond line\r\nthird line", In: []string{"x"}}), "unsupported operator"},

		// The same families in operators added since (issue #18).
		{"Tile by 1e9", one(13, Node{Op: "Tile", In: []string{"x", "r"}}, I64("r", []int64{4}, 1, 1, 1e9, 1e9)), "more than 67108864 elements"},
		{"Tile by a negative repeat", one(13, Node{Op: "Tile", In: []string{"x", "r"}}, I64("r", []int64{4}, 1, 1, -1, 1)), "negative repeat"},
		{"ConvTranspose with strides 2^62", one(13, Node{Op: "ConvTranspose", In: []string{"x", "w"}, Attrs: []Attr{Ints("strides", 1<<62, 1<<62)}}, F32("w", []int64{3, 1, 1, 1}, 1, 1, 1)), "at most 1048576"},
		{"ConvTranspose to output_shape 1e6 x 1e6", one(13, Node{Op: "ConvTranspose", In: []string{"x", "w"}, Attrs: []Attr{Ints("output_shape", 1e6, 1e6)}}, F32("w", []int64{3, 1, 1, 1}, 1, 1, 1)), "more than 67108864 elements"},
		{"DepthToSpace with blocksize 2^32", one(13, Node{Op: "DepthToSpace", In: []string{"x"}, Attrs: []Attr{Int("blocksize", 1<<32)}}), "does not divide the 3 channels"},
		{"SpaceToDepth with blocksize 2^62", one(13, Node{Op: "SpaceToDepth", In: []string{"x"}, Attrs: []Attr{Int("blocksize", 1<<62)}}), "does not divide the spatial size"},
		{"TopK of 1e12", Model{Opset: 13, Nodes: []Node{{Name: "n", Op: "TopK", In: []string{"x", "k"}, Out: []string{"y", "i"}}},
			Inits: []Tensor{I64("k", []int64{1}, 1e12)}, Inputs: x, Outputs: y}.Bytes(), "out of range"},
		{"Einsum outer product to 1e10 values", Model{Opset: 13, Nodes: []Node{
			{Name: "a", Op: "ConstantOfShape", In: []string{"s"}, Out: []string{"A"}},
			{Name: "e", Op: "Einsum", In: []string{"A", "A"}, Out: []string{"B"}, Attrs: []Attr{String("equation", "i,j->ij")}},
			{Name: "n", Op: "Add", In: []string{"x", "B"}, Out: []string{"y"}}},
			Inits: []Tensor{I64("s", []int64{1}, 100000)}, Inputs: x, Outputs: y}.Bytes(), "more than 67108864 elements"},
		{"Einsum with an invalid label", one(13, Node{Op: "Einsum", In: []string{"x"}, Attrs: []Attr{String("equation", "a\xff\xfe->a")}}), "invalid label"},
		{"ScatterND index out of range", one(13, Node{Op: "ScatterND", In: []string{"x", "i", "u"}},
			I64("i", []int64{1, 1}, 99), F32("u", []int64{1, 3, 4, 4}, make([]float32, 48)...)), "out of range"},
		{"Slice with step 0", one(13, Node{Op: "Slice", In: []string{"x", "s", "e", "a", "st"}},
			I64("s", []int64{1}, 0), I64("e", []int64{1}, 2), I64("a", []int64{1}, 2), I64("st", []int64{1}, 0)), "step 0"},
		{"integer division by zero", Model{Opset: 13, Nodes: []Node{
			{Name: "d", Op: "Div", In: []string{"a", "b"}, Out: []string{"c"}},
			{Name: "r", Op: "Reshape", In: []string{"x", "c"}, Out: []string{"y"}}},
			Inits: []Tensor{I64("a", []int64{1}, 48), I64("b", []int64{1}, 0)}, Inputs: x, Outputs: y}.Bytes(), "integer division by zero"},
		{"Range with delta 0", one(11, Node{Op: "Range", In: []string{"a", "b", "c"}}, I64("a", nil, 0), I64("b", nil, 10), I64("c", nil, 0)), "delta is 0"},
		{"Gather of indices computed at run time", Model{Opset: 13, Nodes: []Node{
			{Name: "c", Op: "Cast", In: []string{"x"}, Out: []string{"xi"}, Attrs: []Attr{Int("to", 7)}},
			{Name: "g", Op: "Gather", In: []string{"x", "xi"}, Out: []string{"y"}, Attrs: []Attr{Int("axis", 1)}}}, Inputs: x, Outputs: y}.Bytes(), "must be a constant"},
		{"Resize by scales of NaN", one(13, Node{Op: "Resize", In: []string{"x", "", "sc"}}, F32("sc", []int64{4}, 1, 1, float32(math.NaN()), 2)), "NaN long"},
		{"Cast to data type 99", one(13, Node{Op: "Cast", In: []string{"x"}, Attrs: []Attr{Int("to", 99)}}), `"to" = 99`},
		{"ten ConstantOfShape of 3x4096x4096 added (10 x 201 MB computed at load time)", func() []byte {
			m := Model{Opset: 13, Inits: []Tensor{I64("s", []int64{4}, 1, 3, 4096, 4096)}, Inputs: x, Outputs: y}
			prev := "x"
			for i := range 10 {
				c, sum := fmt.Sprint("c", i), fmt.Sprint("s", i)
				if i == 9 {
					sum = "y"
				}
				m.Nodes = append(m.Nodes, Node{Name: c, Op: "ConstantOfShape", In: []string{"s"}, Out: []string{c}},
					Node{Name: "add" + c, Op: "Add", In: []string{prev, c}, Out: []string{sum}})
				prev = sum
			}
			return m.Bytes()
		}(), "constants computed at load time would need"},
	}
}

func ones(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func seq(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
