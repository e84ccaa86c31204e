package onnxfix

import (
	"bytes"
	"fmt"
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
	// A model without empty tensors comes back byte-identical.
	clean := resizeModel()
	clean.Inits[0] = onnxtest.F32("roi", []int64{1}, 0)
	cb := clean.Bytes()
	fixed2, m2, err := Fix(cb)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fixed2, cb) || len(m2.Graph.Empty) != 0 {
		t.Error("Fix changed a model without empty tensors")
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
		{"truncated", resizeModel().Bytes()[:40], "malformed protobuf"},
		{"garbage", []byte{0xff, 0xff, 0xff}, "malformed protobuf"},
		{"no graph", []byte{0x08, 0x07}, "no graph"},
		{"opset 0", b, "operator set"},
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

func TestFixBoolRawData(t *testing.T) {
	m := onnxtest.Model{
		Opset: 13,
		Nodes: []onnxtest.Node{
			{Name: "c", Op: "Constant", Out: []string{"b"}, Attrs: []onnxtest.Attr{onnxtest.TensorAttr("value", onnxtest.Bool("", []int64{3}, 1, 0, 1))}},
			{Name: "s", Op: "Constant", Out: []string{"s"}, Attrs: []onnxtest.Attr{onnxtest.TensorAttr("value", onnxtest.Bool("", nil, 1))}},
			{Name: "w", Op: "Where", In: []string{"b", "x", "y"}, Out: []string{"z"}},
		},
		Inits:   []onnxtest.Tensor{onnxtest.Bool("init", []int64{2}, 0, 1)},
		Inputs:  []onnxtest.Value{{Name: "x", Dims: []any{3}}, {Name: "y", Dims: []any{3}}},
		Outputs: []onnxtest.Value{{Name: "z", Dims: []any{3}}},
	}
	b := m.Bytes()
	if err := onnx.NewModel(newBackend()).UnmarshalBinary(b); err == nil || !strings.Contains(err.Error(), "Unable to decode data") {
		t.Fatalf("onnx-go on the raw model: got %v, want its \"Unable to decode data\" error (if it now decodes, the rewrite may be unnecessary)", err)
	}
	fixed, _, err := Fix(b)
	if err != nil {
		t.Fatal(err)
	}
	be := newBackend()
	if err := onnx.NewModel(be).UnmarshalBinary(fixed); err != nil {
		t.Fatalf("onnx-go on the fixed model: %v", err)
	}
	// The initializer's values (the constants' are checked through nn's
	// Where tests).
	found := false
	for _, n := range graph.NodesOf(be.Nodes()) {
		if v := n.(*node).t; v != nil && v.Dtype() == tensor.Bool {
			if got := fmt.Sprint(v.Data()); got != "[false true]" {
				t.Errorf("initializer decoded as %s, want [false true]", got)
			}
			found = true
		}
	}
	if !found {
		t.Error("no bool initializer decoded")
	}
}
