package nn

import (
	"errors"
	"fmt"
	"slices"

	onnx "github.com/owulveryck/onnx-go"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/kernels"
	"github.com/amt-dev/amt/nn/onnxfix"
)

// newProgram decodes a model with onnx-go and our backend.
func newProgram(b []byte, name string, opt LoadOptions) (*program, error) {
	fixed, info, err := onnxfix.Fix(b)
	if err != nil {
		return nil, err
	}
	g := info.Graph
	if err := checkGraph(&g, opt); err != nil {
		return nil, err
	}
	ig := newImportGraph()
	om := onnx.NewModel(ig)
	if err := decode(om, fixed); err != nil {
		return nil, err
	}
	if len(ig.ops) != len(g.Nodes) {
		return nil, fmt.Errorf("onnx-go reported %d operations, the file has %d nodes", len(ig.ops), len(g.Nodes))
	}
	p := &program{
		name:      name,
		opt:       opt,
		opset:     info.Opset,
		consts:    map[string]*tens{},
		consumers: map[string][]int{},
		isOutput:  map[string]bool{},
		convs:     map[convKey]*kernels.Conv{},
	}
	for i, n := range g.Nodes {
		op := ig.ops[i]
		if op.op.Name != n.OpType || !slices.Equal(op.outputs, n.Outputs) {
			return nil, fmt.Errorf("node %d (%q): onnx-go reported %s → %v, the file has %s → %v", i, n.Name, op.op.Name, op.outputs, n.OpType, n.Outputs)
		}
		name := n.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		p.nodes = append(p.nodes, onode{name: name, op: n.OpType, domain: n.Domain, inputs: n.Inputs, outputs: n.Outputs, attrs: op.op.Attributes, emptyAttrs: n.EmptyAttrs})
		for _, in := range n.Inputs {
			if in != "" && !slices.Contains(p.consumers[in], i) {
				p.consumers[in] = append(p.consumers[in], i)
			}
		}
	}
	if err := checkOps(p.nodes, p.opset); err != nil {
		return nil, err
	}
	isInit := map[string]bool{}
	for _, name := range g.Initializers {
		isInit[name] = true
		t, err := initializer(om, g, name)
		if err != nil {
			return nil, fmt.Errorf("initializer %q: %w", name, err)
		}
		if _, ok := checkedNumel(t.shape, opt.MaxElements); !ok || len(t.shape) > maxRank {
			return nil, limitError("initializer %q of shape %v has more than %d elements (or rank %d), the limits per tensor", name, t.shape, opt.MaxElements, maxRank)
		}
		p.weights += tensBytes(t)
		p.consts[name] = t
	}
	if p.weights > opt.MaxBytes {
		return nil, limitError("the weights need %s, more than the limit of %s", formatBytes(p.weights), formatBytes(opt.MaxBytes))
	}
	for _, v := range g.Inputs {
		if isInit[v.Name] {
			continue
		}
		if v.ElemType != 1 {
			return nil, fmt.Errorf("input %q has element type %d; only float32 (1) inputs are supported", v.Name, v.ElemType)
		}
		if !v.HasShape || len(v.Dims) == 0 {
			return nil, fmt.Errorf("input %q has no shape (rank ≥ 1 with known sizes required)", v.Name)
		}
		shape := make([]int, len(v.Dims))
		for d, x := range v.Dims {
			shape[d] = int(x)
			if x < 0 && d > 0 {
				return nil, fmt.Errorf("input %q: dimension %d (%q) is dynamic; only the batch axis (0) may be", v.Name, d, v.DimParams[d])
			}
			if x == 0 {
				return nil, fmt.Errorf("input %q has shape %v: a dimension of 0", v.Name, v.Dims)
			}
		}
		if len(shape) > maxRank {
			return nil, fmt.Errorf("input %q has rank %d; at most %d is supported", v.Name, len(shape), maxRank)
		}
		if _, ok := checkedNumel(append([]int{max(shape[0], 1)}, shape[1:]...), opt.MaxElements); !ok {
			return nil, limitError("input %q of shape %v has more than %d elements (per image where the batch is dynamic), the limit per tensor", v.Name, v.Dims, opt.MaxElements)
		}
		p.inputs = append(p.inputs, TensorInfo{Name: v.Name, Shape: shape})
	}
	if len(p.inputs) == 0 {
		return nil, errors.New("the graph has no (non-initializer) inputs")
	}
	p.splittable = true
	for _, in := range p.inputs {
		if in.Shape[0] < 0 {
			p.dynamic = true
		}
		if in.Shape[0] != 1 {
			p.splittable = false
		}
	}
	p.splittable = p.splittable && !p.dynamic
	for _, v := range g.Outputs {
		switch v.ElemType {
		case 0, 1: // float32
		case 6, 7, 9: // int32, int64, bool (ArgMax, TopK indices): returned as float32
		default:
			return nil, fmt.Errorf("output %q has element type %d; only float32 (1), int32 (6), int64 (7) and bool (9) outputs are supported", v.Name, v.ElemType)
		}
		shape := make([]int, len(v.Dims))
		for d, x := range v.Dims {
			shape[d] = int(x)
		}
		fixed := slices.DeleteFunc(slices.Clone(shape), func(d int) bool { return d < 0 })
		if _, ok := checkedNumel(fixed, opt.MaxElements); !ok || len(shape) > maxRank {
			return nil, limitError("output %q is declared of shape %v: more than %d elements (or rank %d), the limits per tensor", v.Name, v.Dims, opt.MaxElements, maxRank)
		}
		if !v.HasShape {
			shape = nil // filled in from the first built graph
		}
		p.outputs = append(p.outputs, TensorInfo{Name: v.Name, Shape: shape})
		p.isOutput[v.Name] = true
	}
	return p, nil
}

// importGraph is amt's onnx-go backend: it records the operations onnx-go
// applies, in order, and the tensors it sets on nodes.
type importGraph struct {
	*simple.WeightedDirectedGraph
	ops []importedOp
}

type importedOp struct {
	op      onnx.Operation
	outputs []string
}

func newImportGraph() *importGraph {
	return &importGraph{WeightedDirectedGraph: simple.NewWeightedDirectedGraph(0, 0)}
}

// NewNode implements graph.NodeAdder with nodes carrying names and tensors.
func (g *importGraph) NewNode() graph.Node {
	return &importNode{id: g.WeightedDirectedGraph.NewNode().ID()}
}

// SetWeightedEdge ignores self-loops, which gonum's simple graphs reject
// and the engine does not need (it takes inputs from the node list).
func (g *importGraph) SetWeightedEdge(e graph.WeightedEdge) {
	if e.From().ID() == e.To().ID() {
		return
	}
	g.WeightedDirectedGraph.SetWeightedEdge(e)
}

// ApplyOperation implements onnx.OperationCarrier.
func (g *importGraph) ApplyOperation(op onnx.Operation, outs ...graph.Node) error {
	names := make([]string, len(outs))
	for i, n := range outs {
		if nn, ok := n.(*importNode); ok {
			names[i] = nn.name
		}
	}
	g.ops = append(g.ops, importedOp{op: op, outputs: names})
	return nil
}

// importNode is a node of importGraph.
type importNode struct {
	id   int64
	name string
	t    tensor.Tensor
}

func (n *importNode) ID() int64                       { return n.id }
func (n *importNode) SetName(s string)                { n.name = s }
func (n *importNode) GetName() string                 { return n.name }
func (n *importNode) SetTensor(t tensor.Tensor) error { n.t = t; return nil }
func (n *importNode) GetTensor() tensor.Tensor        { return n.t }

// initializer returns the initializer name of a decoded graph.
func initializer(om *onnx.Model, g onnxfix.Graph, name string) (*tens, error) {
	if dims, ok := g.Empty[name]; ok {
		return emptyTens(dims), nil
	}
	gn, ok := om.GetNodeByName(name)
	if !ok {
		return nil, errors.New("not found in the decoded graph")
	}
	dc, ok := gn.(onnx.DataCarrier)
	if !ok || dc.GetTensor() == nil {
		return nil, errors.New("no data")
	}
	return fromTensor(dc.GetTensor())
}

// checkGraph checks the graph's size and that every value is defined once
// (by an initializer, a graph input or a node output), before onnx-go
// decodes it.
func checkGraph(g *onnxfix.Graph, opt LoadOptions) error {
	switch {
	case len(g.Nodes) == 0:
		return errors.New("the graph has no nodes")
	case len(g.Nodes) > opt.MaxNodes:
		return limitError("the graph has %d nodes, more than the limit of %d", len(g.Nodes), opt.MaxNodes)
	case len(g.Outputs) == 0:
		return errors.New("the graph has no outputs")
	}
	def := map[string]string{} // value name → what defines it
	for _, name := range g.Initializers {
		if d, ok := def[name]; ok {
			return fmt.Errorf("initializer %q is defined twice (also by %s)", name, d)
		}
		def[name] = "an initializer"
	}
	seen := map[string]bool{}
	for _, v := range g.Inputs {
		if seen[v.Name] {
			return fmt.Errorf("graph input %q is listed twice", v.Name)
		}
		seen[v.Name] = true
		if _, ok := def[v.Name]; !ok {
			def[v.Name] = "a graph input"
		}
	}
	for i, n := range g.Nodes {
		if len(n.Outputs) == 0 {
			return fmt.Errorf("node %d (%q) has no outputs", i, n.Name)
		}
		for _, out := range n.Outputs {
			if out == "" {
				continue
			}
			if d, ok := def[out]; ok {
				return fmt.Errorf("node %d (%q) outputs %q, which is already defined by %s", i, n.Name, out, d)
			}
			def[out] = fmt.Sprintf("node %d (%q)", i, n.Name)
		}
	}
	return nil
}

// decode runs onnx-go's decoder on a model checked and re-encoded by
// onnxfix. onnxfix rules out the inputs known to make it panic; a panic
// left is reported as an internal error rather than crashing the caller.
func decode(om *onnx.Model, b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: onnx-go's decoder panicked: %v", r)
		}
	}()
	if err := om.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("onnx-go decoder: %w", err)
	}
	return nil
}
