package onnxfix

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	onnx "github.com/owulveryck/onnx-go"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/internal/onnxtest"
)

// backend is a minimal onnx-go backend whose nodes carry tensors, so that
// onnx-go decodes every tensor of the model.
type backend struct{ *simple.WeightedDirectedGraph }

type node struct {
	id int64
	t  tensor.Tensor
}

func (n *node) ID() int64                       { return n.id }
func (n *node) SetTensor(t tensor.Tensor) error { n.t = t; return nil }
func (n *node) GetTensor() tensor.Tensor        { return n.t }

func newBackend() *backend {
	return &backend{simple.NewWeightedDirectedGraph(0, 0)}
}

func (b *backend) NewNode() graph.Node {
	return &node{id: b.WeightedDirectedGraph.NewNode().ID()}
}

func (b *backend) ApplyOperation(onnx.Operation, ...graph.Node) error { return nil }

// resizeModel is an opset-11 Resize with an empty roi initializer and a
// named batch dimension: what onnx-go alone cannot decode.
func resizeModel() onnxtest.Model {
	return onnxtest.Model{
		Opset: 11,
		Nodes: []onnxtest.Node{{Name: "up", Op: "Resize", In: []string{"x", "roi", "scales"}, Out: []string{"y"},
			Attrs: []onnxtest.Attr{onnxtest.String("mode", "nearest")}}},
		Inits: []onnxtest.Tensor{
			onnxtest.F32("roi", []int64{0}),
			onnxtest.F32("scales", []int64{4}, 1, 1, 2, 2),
		},
		Inputs:  []onnxtest.Value{{Name: "x", Dims: []any{"N", 1, 2, 2}}},
		Outputs: []onnxtest.Value{{Name: "y", Dims: []any{"N", 1, 4, 4}}},
	}
}

func TestFixMakesEmptyTensorsDecodable(t *testing.T) {
	b := resizeModel().Bytes()
	err := onnx.NewModel(newBackend()).UnmarshalBinary(b)
	if err == nil || !strings.Contains(err.Error(), "No data found") {
		t.Fatalf("onnx-go on the raw model: got %v, want its \"No data found\" error (if it now decodes, the pre-pass may be unnecessary)", err)
	}
	orig := slices.Clone(b)
	fixed, m, err := Fix(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, orig) {
		t.Error("Fix modified its input")
	}
	if err := onnx.NewModel(newBackend()).UnmarshalBinary(fixed); err != nil {
		t.Fatalf("onnx-go on the fixed model: %v", err)
	}
	if got := m.Graph.Empty; len(got) != 1 || !slices.Equal(got["roi"], []int64{0}) {
		t.Errorf("Empty = %v, want map[roi:[0]]", got)
	}
	if m.Opset != 11 || m.IRVersion != 7 {
		t.Errorf("opset %d, IR %d; want 11, 7", m.Opset, m.IRVersion)
	}
	in := m.Graph.Inputs[0]
	if in.Name != "x" || !slices.Equal(in.Dims, []int64{-1, 1, 2, 2}) || !slices.Equal(in.DimParams, []string{"N", "", "", ""}) || in.ElemType != 1 {
		t.Errorf("input = %+v, want x with dims [-1 1 2 2] and dim_param N", in)
	}
	if out := m.Graph.Outputs[0]; out.Name != "y" || !slices.Equal(out.Dims, []int64{-1, 1, 4, 4}) {
		t.Errorf("output = %+v", out)
	}
	n := m.Graph.Nodes[0]
	if n.Name != "up" || n.OpType != "Resize" || !slices.Equal(n.Inputs, []string{"x", "roi", "scales"}) || !slices.Equal(n.Outputs, []string{"y"}) {
		t.Errorf("node = %+v", n)
	}
	if !slices.Equal(m.Graph.Initializers, []string{"roi", "scales"}) {
		t.Errorf("initializers = %v", m.Graph.Initializers)
	}
	// Without empty tensors, Fix is idempotent: its output is already in
	// the form it produces.
	clean := resizeModel()
	clean.Inits[0] = onnxtest.F32("roi", []int64{1}, 0)
	fixed2, m2, err := Fix(clean.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	fixed3, m3, err := Fix(fixed2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fixed3, fixed2) || len(m2.Graph.Empty) != 0 || !reflect.DeepEqual(m2.Graph.Nodes, m3.Graph.Nodes) ||
		!slices.Equal(m2.Graph.Initializers, m3.Graph.Initializers) || m3.Graph.Inputs[0].Name != "x" {
		t.Error("Fix is not idempotent on a model without empty tensors")
	}
}

func TestFixEmptyConstantAttribute(t *testing.T) {
	m := onnxtest.Model{
		Opset: 13,
		Nodes: []onnxtest.Node{
			{Name: "c", Op: "Constant", Out: []string{"e"}, Attrs: []onnxtest.Attr{onnxtest.TensorAttr("value", onnxtest.I64("", []int64{0}))}},
			{Name: "id", Op: "Identity", In: []string{"x"}, Out: []string{"y"}},
		},
		Inputs:  []onnxtest.Value{{Name: "x", Dims: []any{2}}},
		Outputs: []onnxtest.Value{{Name: "y", Dims: []any{2}}},
	}
	fixed, info, err := Fix(m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Graph.Nodes[0].EmptyAttrs; !slices.Equal(got["value"], []int64{0}) {
		t.Errorf("EmptyAttrs = %v, want map[value:[0]]", got)
	}
	if err := onnx.NewModel(newBackend()).UnmarshalBinary(fixed); err != nil {
		t.Fatalf("onnx-go on the fixed model: %v", err)
	}
}

func TestFixErrors(t *testing.T) {
	noOpset := resizeModel()
	noOpset.Opset = 0
	b := noOpset.Bytes()
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", resizeModel().Bytes()[:40], "truncated or not an ONNX file (malformed protobuf"},
		{"garbage", []byte{0xff, 0xff, 0xff}, "truncated or not an ONNX file (malformed protobuf"},
		{"no graph", []byte{0x08, 0x07}, "truncated or not an ONNX file: it has no graph"},
		{"opset 0", b, "operator set"},
		{"op_type of the wrong wire type", withNode(onnxtest.Node{Name: "n", In: []string{"x"}, Out: []string{"y"}, Extra: onnxtest.Varint(nil, 4, 1)}),
			"truncated or not an ONNX file (graph: node 1 (\"n\"): malformed protobuf field 4: op_type has wire type varint, want bytes)"},
		{"two tensors in one attribute", withNode(onnxtest.Node{Name: "n", Op: "Constant", Out: []string{"c"},
			Attrs: []onnxtest.Attr{onnxtest.RawAttr(onnxtest.Bytes(onnxtest.Bytes(onnxtest.Bytes(nil, 1, []byte("value")), 5, oneFloat), 5, oneFloat))}}),
			`attribute "value": field t occurs twice`},
		{"float tensor in int64_data", withInit(onnxtest.Tensor{Name: "w", Dims: []int64{1}, Extra: onnxtest.Varint(nil, 7, 1)}),
			`initializer "w": FLOAT (1) tensor stores int64_data (want raw_data or float_data)`},
		{"packed floats of 5 bytes", withInit(onnxtest.Tensor{Name: "w", Dims: []int64{1}, Extra: onnxtest.Bytes(nil, 4, make([]byte, 5))}),
			"packed float_data has 5 bytes, not a multiple of 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Fix(c.b)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// oneFloat is an encoded TensorProto holding the float 0 of shape [1].
var oneFloat = onnxtest.Bytes(onnxtest.Varint(onnxtest.Varint(nil, 1, 1), 2, 1), 9, make([]byte, 4))

// withNode is resizeModel with node n appended.
func withNode(n onnxtest.Node) []byte {
	m := resizeModel()
	m.Nodes = append(m.Nodes, n)
	return m.Bytes()
}

// withInit is resizeModel with initializer t appended.
func withInit(t onnxtest.Tensor) []byte {
	m := resizeModel()
	m.Inits = append(m.Inits, t)
	return m.Bytes()
}

// TestFixReencodes checks what Fix passes on to onnx-go: graph inputs and
// outputs without their types (onnx-go would allocate a tensor of the
// declared shape), no value_info or doc strings, bools as int32_data, and
// tensors that onnx-go decodes to the values stored.
func TestFixReencodes(t *testing.T) {
	m := resizeModel()
	m.Inputs[0].Dims = []any{1, 3, 20000, 20000} // 4.8 GB if allocated
	m.Inits = append(m.Inits,
		onnxtest.Tensor{Name: "mask", Dims: []int64{3}, DataType: 9, Raw: []byte{1, 0, 5}},
		onnxtest.Tensor{Name: "fd", Dims: []int64{2}, Extra: onnxtest.Bytes(nil, 4, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})})
	m.GraphExtra = onnxtest.Bytes(onnxtest.Bytes(nil, 13, []byte("\n\x01z")), 10, []byte("doc"))
	fixed, info, err := Fix(m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Graph.Inputs[0].Dims, []int64{1, 3, 20000, 20000}) {
		t.Errorf("input dims %v", info.Graph.Inputs[0].Dims)
	}
	if bytes.Contains(fixed, []byte("doc")) || bytes.Contains(fixed, []byte("\n\x01z")) {
		t.Error("doc string or value_info passed on")
	}
	be := newBackend()
	om := onnx.NewModel(be)
	if err := om.UnmarshalBinary(fixed); err != nil {
		t.Fatal(err)
	}
	n, _ := om.GetNodeByName("x")
	if n.(*node).t != nil {
		t.Error("onnx-go allocated a tensor for the graph input")
	}
	mask, _ := om.GetNodeByName("mask")
	if got := mask.(*node).t.Data(); !slices.Equal(got.([]bool), []bool{true, false, true}) {
		t.Errorf("mask %v, want [true false true]", got)
	}
	fd, _ := om.GetNodeByName("fd")
	if got := fd.(*node).t.Data(); !slices.Equal(got.([]float32), []float32{1, 2}) {
		t.Errorf("float_data %v, want [1 2]", got)
	}
}
