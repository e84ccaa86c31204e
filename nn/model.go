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
	"fmt"
	"slices"
	"sync"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/kernels"
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

// otherInput returns the input of n, a node of two inputs, that is not
// name: the second, unless it is name (then the first).
func (n *onode) otherInput(name string) string {
	if n.inputs[1] == name {
		return n.inputs[0]
	}
	return n.inputs[1]
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
