// Package nn is amt's ONNX execution engine: it imports ONNX models with
// github.com/owulveryck/onnx-go (through its own backend, not onnx-go's
// gorgonnx) and runs them on a Gorgonia expression graph whose nodes are
// custom ops backed by the kernels of package nn/kernels.
//
// A model file is first passed through nn/onnxfix, which records what
// onnx-go's decoder would lose (node names, input order, opset, named
// dynamic dimensions) and makes zero-element tensors decodable. Shape
// arithmetic (Shape, Gather, Unsqueeze, Concat, … on values known at load
// time) is folded when a graph is built; a graph is built lazily for each
// batch size and cached. Batches of graphs that compute every image alone
// (the usual CNNs) run image by image, one image (or a small group of
// images, for models with more weights than a core's cache holds) per core
// (see Model.Run).
// Conv is fused with a following BatchNormalization and Relu, LeakyRelu or
// Clip, and Convs feeding only a channel Concat write straight into its
// output. Op outputs live in buffers allocated once per graph, on its first
// run, and reused between ops whose lifetimes do not overlap (planned in
// the tape machine's execution order and checked at run time), so a run
// allocates no activation memory and carries no state into the next run.
//
// A model file is untrusted input: loading checks every size before
// allocating for it and plans the memory of a run against the limits of
// LoadOptions; a file that is malformed, unsupported or over the limits
// fails to load with a one-line *ModelError, "invalid model FILE: reason"
// (see limits.go).
//
// A Model is not safe for concurrent use; Clone gives each goroutine its own
// graphs over shared weights.
//
// Models run on the CPU unless LoadWith names another device: built with
// -tags gpu, "cuda" runs the same graph, fusion included, on an NVIDIA GPU
// through package nn/cuda, with the activations kept on the GPU (see
// LoadOptions and device.go). Gorgonia's own "cuda" build tag is not used:
// it needs cgo, the CUDA toolkit and cuDNN (gorgonia.org/cu) and would not
// move these custom ops to the GPU.
//
// The supported operators (default domain; the model's opset is honoured
// where attributes became inputs) are those SupportedOps lists; each has one
// entry in the operator table (ops.go) and its code in the file of its
// family. A model using other operators fails to load with one error
// listing them all; an attribute value outside what is implemented is a
// load-time error naming the operator, the node and the attribute.
package nn

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"

	onnx "github.com/owulveryck/onnx-go"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/kernels"
	"github.com/amt-dev/amt/nn/onnxfix"
)

// TensorInfo describes a graph input or output.
type TensorInfo struct {
	Name  string
	Shape []int // -1 for a dynamic dimension (e.g. batch)
}

// Model is a loaded ONNX model.
//
// A Model is not safe for concurrent use: it owns the buffers of the
// graphs it has built. Use [Model.Clone] to get an independent Model that
// shares the (read-only) weights, one per goroutine.
type Model struct {
	p     *program
	insts map[int]*instance // by batch size
	// workers are clones running images of batched calls beside m (see
	// splitRun), created on first use.
	workers []*Model
	// dev is the device m runs on; nil: the CPU (see device.go).
	dev *deviceRun
}

// program is the immutable, shareable part of a loaded model.
type program struct {
	name    string
	opt     LoadOptions // with defaults
	opset   int64
	weights int64 // bytes of the initializers
	nodes   []onode
	consts  map[string]*tens // initializers
	inputs  []TensorInfo
	outputs []TensorInfo
	// dynamic: some input has a dynamic batch axis (axis 0). Otherwise
	// splittable: every input has a fixed leading dimension of 1, and Run
	// accepts larger batches by running image by image.
	dynamic, splittable bool
	consumers           map[string][]int // value name → indices of consuming nodes
	isOutput            map[string]bool

	mu    sync.Mutex
	convs map[convKey]*kernels.Conv // prepared conv kernels, shared by clones

	sepOnce   sync.Once
	separable bool // see program.isSeparable
}

// onode is one ONNX node as the engine sees it.
type onode struct {
	name, op        string
	domain          string // "" or "ai.onnx" for the default domain
	inputs, outputs []string
	attrs           map[string]any
	emptyAttrs      map[string][]int64
}

// Load reads and prepares the ONNX model in the file at path, with the
// default LoadOptions. See LoadWith.
func Load(path string) (*Model, error) { return LoadWith(path, LoadOptions{}) }

// LoadWith reads and prepares the ONNX model in the file at path within the
// limits of opt. Every error about the file, including its absence, is a
// *ModelError ("invalid model FILE: reason"); one over the limits also
// wraps ErrLimit.
func LoadWith(path string, opt LoadOptions) (*Model, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	b, err := readModel(path, opt.MaxBytes)
	if err != nil {
		return nil, &ModelError{File: path, Err: err}
	}
	return LoadBytesWith(b, path, opt)
}

// readModel reads the file at path, refusing one of more than max bytes
// before reading it (or, for what is not a regular file, after max+1).
func readModel(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, unwrapPath(err)
	}
	if st.IsDir() {
		return nil, errors.New("is a directory")
	}
	tooBig := func(n int64) error {
		return limitError("the file has %d bytes, more than the limit of %s", n, formatBytes(max))
	}
	if st.Mode().IsRegular() && st.Size() > max {
		return nil, tooBig(st.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, unwrapPath(err)
	}
	if int64(len(b)) > max {
		return nil, tooBig(int64(len(b)))
	}
	return b, nil
}

// unwrapPath returns the cause of a *fs.PathError (ModelError names the
// file already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// LoadBytes prepares the ONNX model encoded in b, with the default
// LoadOptions; name (e.g. the file name) is used in error messages. See
// LoadBytesWith.
func LoadBytes(b []byte, name string) (*Model, error) { return LoadBytesWith(b, name, LoadOptions{}) }

// LoadBytesWith prepares the ONNX model encoded in b within the limits of
// opt; name (e.g. the file name) is used in error messages. The model is
// checked before anything is allocated for it: the file's structure and
// stored tensors (see nn/onnxfix), the graph (operators, attributes,
// shapes) and the memory a run of opt.Batch images would need. Errors are
// *ModelError values. The activation buffers are allocated on the first
// run.
func LoadBytesWith(b []byte, name string, opt LoadOptions) (*Model, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := load(b, name, opt)
	if err != nil {
		return nil, &ModelError{File: name, Err: err}
	}
	return attachDevice(m, opt)
}

func load(b []byte, name string, opt LoadOptions) (*Model, error) {
	if int64(len(b)) > opt.MaxBytes {
		return nil, limitError("the file has %d bytes, more than the limit of %s", len(b), formatBytes(opt.MaxBytes))
	}
	p, err := newProgram(b, name, opt)
	if err != nil {
		return nil, err
	}
	if len(opt.Outputs) > 0 {
		if p, err = p.withOutputs(opt.Outputs); err != nil {
			return nil, err
		}
	}
	m := &Model{p: p, insts: map[int]*instance{}}
	// Build the graph for the smallest batch now so that unsupported
	// operators and attributes are reported at load time.
	if _, err := m.instance(p.batchKey(1)); err != nil {
		return nil, err
	}
	if _, err := m.checkPlan(opt.Batch); err != nil {
		return nil, err
	}
	return m, nil
}

// fits reports whether a value of shape got matches the declared shape of
// a graph output (nil: undeclared; -1: any size).
func fits(declared, got []int) bool {
	if declared == nil || len(declared) != len(got) {
		return false
	}
	for d, x := range declared {
		if x >= 0 && x != got[d] {
			return false
		}
	}
	return true
}

// Clone returns a Model sharing m's weights and prepared kernels but with
// its own graphs and buffers, for use by another goroutine. It runs on m's
// device.
func (m *Model) Clone() *Model {
	return &Model{p: m.p, insts: map[int]*instance{}, dev: m.dev.clone()}
}

// Name returns the name the model was loaded under.
func (m *Model) Name() string { return m.p.name }

// Opset returns the version of the default operator set the model uses.
func (m *Model) Opset() int64 { return m.p.opset }

// Inputs describes the graph inputs (initializers excluded) in order.
func (m *Model) Inputs() []TensorInfo { return cloneInfos(m.p.inputs) }

// Outputs describes the graph outputs in order.
func (m *Model) Outputs() []TensorInfo { return cloneInfos(m.p.outputs) }

func cloneInfos(in []TensorInfo) []TensorInfo {
	out := make([]TensorInfo, len(in))
	for i, t := range in {
		out[i] = TensorInfo{t.Name, slices.Clone(t.Shape)}
	}
	return out
}

// Run runs one batch. inputs are in graph-input order (initializers
// excluded), float32, with any batch size on a dynamic batch axis; all
// inputs must have the same batch size. Run returns every graph output in
// graph-output order as new tensors. Repeated runs give identical results.
//
// A model of fixed shape whose inputs all have a leading dimension of 1
// (e.g. yolov3-tiny, [1,3,416,416]) accepts a larger batch: it runs image
// by image and concatenates the outputs along axis 0. Inputs of other fixed
// shapes must be matched exactly.
//
// A batch of a model with a dynamic batch axis whose every op computes each
// image from that image alone (checked once per model, conservatively: the
// usual CNN ops, not those that may mix images) runs the same way, image
// by image: up to kernels.Threads goroutines each run whole images on their
// own graphs (batch-1 graphs, and for a model with large weights graphs for
// a small group of images, see splitGroups), which keeps an image's
// activations in one core's caches. Other dynamic-batch graphs run op by
// op over the whole batch. Either way the results are those of running
// each image alone, bit for bit.
func (m *Model) Run(inputs ...*tensor.Dense) ([]*tensor.Dense, error) {
	p := m.p
	if len(inputs) != len(p.inputs) {
		return nil, fmt.Errorf("nn: %s: got %d inputs, the model has %d (%s)", p.name, len(inputs), len(p.inputs), infoNames(p.inputs))
	}
	batch, exact := -1, true
	for i, t := range inputs {
		info := p.inputs[i]
		if t == nil {
			return nil, fmt.Errorf("nn: %s: input %d (%q) is nil", p.name, i, info.Name)
		}
		if t.Dtype() != tensor.Float32 {
			return nil, fmt.Errorf("nn: %s: input %q has type %v, want float32", p.name, info.Name, t.Dtype())
		}
		if !t.IsNativelyAccessible() || !t.DataOrder().IsRowMajor() || t.IsView() {
			return nil, fmt.Errorf("nn: %s: input %q must be a contiguous row-major tensor (not a view)", p.name, info.Name)
		}
		s := t.Shape()
		if len(s) != len(info.Shape) {
			return nil, fmt.Errorf("nn: %s: input %q has shape %v, want rank %d %v", p.name, info.Name, s, len(info.Shape), info.Shape)
		}
		for d := range s {
			if s[d] != info.Shape[d] && !(d == 0 && (info.Shape[0] < 0 || p.splittable)) {
				return nil, fmt.Errorf("nn: %s: input %q has shape %v, want %v", p.name, info.Name, s, info.Shape)
			}
		}
		if s[0] != info.Shape[0] {
			exact = false
		}
		if info.Shape[0] < 0 || p.splittable {
			if batch >= 0 && s[0] != batch {
				return nil, fmt.Errorf("nn: %s: inputs have different batch sizes (%d and %d)", p.name, batch, s[0])
			}
			batch = s[0]
		}
	}
	if batch == 0 {
		return nil, fmt.Errorf("nn: %s: batch size must be positive, got 0", p.name)
	}
	if _, err := m.checkPlan(batch); err != nil {
		return nil, fmt.Errorf("nn: %s: %w", p.name, err)
	}
	if m.dev != nil {
		return m.runDevice(inputs, batch, !p.dynamic && !exact)
	}
	if !p.dynamic && !exact {
		return m.splitRun(inputs, batch)
	}
	if p.dynamic && batch >= splitMinBatch && p.isSeparable() {
		return m.splitRun(inputs, batch)
	}
	inst, err := m.instance(p.batchKey(batch))
	if err != nil {
		return nil, err
	}
	return inst.run(inputs)
}

// batchKey returns the key of the graph for batch size n: n for a model
// with a dynamic batch axis, 0 for a model of fixed shape.
func (p *program) batchKey(n int) int {
	if p.dynamic {
		return n
	}
	return 0
}

func infoNames(ts []TensorInfo) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %v", t.Name, t.Shape)
	}
	return s
}

// instance returns the graph built for batch size n, building it if needed.
func (m *Model) instance(n int) (*instance, error) {
	if inst, ok := m.insts[n]; ok {
		return inst, nil
	}
	inst, err := m.p.build(n)
	if err != nil {
		return nil, err
	}
	m.insts[n] = inst
	return inst, nil
}

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

// PlannedBytes returns the memory Run plans for a batch of batch images:
// the weights, the constants computed at load time, the activation buffers
// of the graph Run uses for that batch (or, when it runs the batch image
// by image, of each of its min(kernels.Threads(), batch) workers' graphs), and
// the batch's inputs and outputs. It builds the graphs needed without
// allocating their buffers, and fails as Run would when they cannot be
// built (for example a batch other than the fixed one of a model of fixed
// shape). LoadOptions.MaxBytes bounds it for every Run.
func (m *Model) PlannedBytes(batch int) (int64, error) {
	if batch < 1 {
		return 0, fmt.Errorf("nn: %s: batch size must be positive, got %d", m.p.name, batch)
	}
	pl, err := m.plan(batch)
	if err != nil {
		return 0, fmt.Errorf("nn: %s: %w", m.p.name, err)
	}
	return pl.total(), nil
}

// checkPlan plans the memory of a run of batch images (0 or less: the
// model's own batch, 1 unless it has a fixed one) and fails when it
// exceeds LoadOptions.MaxBytes.
func (m *Model) checkPlan(batch int) (memPlan, error) {
	pl, err := m.plan(batch)
	if err != nil {
		return pl, err
	}
	if lim := m.p.opt.MaxBytes; pl.total() > lim {
		return pl, limitError("a batch of %d needs %v, more than the limit of %s", pl.batch, pl, formatBytes(lim))
	}
	return pl, nil
}

// plan returns the memory plan of a run of batch images, following Run's
// choice between one graph for the batch and image-by-image workers.
func (m *Model) plan(batch int) (memPlan, error) {
	p := m.p
	fixed := p.inputs[0].Shape[0]
	if batch <= 0 {
		batch = max(fixed, 1)
	}
	split := false
	switch {
	case p.dynamic:
		split = batch >= splitMinBatch && p.isSeparable()
	case p.splittable:
		split = batch > 1
	case batch != fixed:
		return memPlan{}, fmt.Errorf("the model takes a fixed batch of %d, not %d", fixed, batch)
	}
	pl := memPlan{batch: batch, weights: p.weights, graphs: 1}
	if !split {
		inst, err := m.instance(p.batchKey(batch))
		if err != nil {
			return pl, err
		}
		pl.consts, pl.activations, pl.io = inst.constBytes, inst.bufBytes, inst.inBytes+inst.outBytes
		return pl, nil
	}
	// Each worker's graphs, one per group size (see splitRun).
	w := min(kernels.Threads(), batch)
	sizes := m.splitGroups(batch, w)
	pl.graphs = w * len(sizes)
	var one *instance
	images := 0 // per worker, in all its graphs
	for _, g := range sizes {
		images += g
		inst, err := m.instance(p.batchKey(g))
		if err != nil {
			return pl, err
		}
		pl.consts = addSat(pl.consts, mulSat(int64(w), inst.constBytes))
		pl.activations = addSat(pl.activations, mulSat(int64(w), inst.bufBytes))
		one = inst // the last, for 1 image
	}
	// The batch's inputs and concatenated outputs, each worker's copy of
	// its largest group's outputs, and its graphs' own inputs (groupInputs).
	pl.io = addSat(mulSat(int64(batch), one.inBytes+one.outBytes), mulSat(int64(w*sizes[0]), one.outBytes))
	pl.io = addSat(pl.io, mulSat(int64(w*images), one.inBytes))
	return pl, nil
}
