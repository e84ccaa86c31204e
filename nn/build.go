package nn

import (
	"fmt"
	"slices"
	"sort"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/tape"
)

// The graph builder: it compiles the nodes of a program, in order, into a
// Gorgonia graph for one batch size. What each operator does is in the
// operator table (ops.go) and the files of the operator families
// (elementwise.go, binary.go, reshape.go, concat.go, gather.go, …, conv.go,
// gemm.go, reduce.go, resize.go); this file holds what they share: the
// values a name stands for, attribute access, inputs, errors, and emit,
// which turns a CPU function into a node of the graph or folds it when its
// inputs are known at load time.

// value is what a name in the graph holds while a graph is built: a
// value is what a name in the graph holds while a graph is built: a
// constant known at load time, or a runtime Gorgonia node. shape is the
// logical ONNX shape; aliases (Reshape, Flatten, Squeeze, …) share the node
// of their input under another shape.
type value struct {
	c     *tens
	n     *gorgonia.Node
	op    *gop // producer of n (nil for a graph input)
	shape []int
}

func constVal(t *tens) *value { return &value{c: t, shape: t.shape} }

// builder builds the graph of a program for one batch size.
type builder struct {
	p      *program
	batch  int
	g      *gorgonia.ExprGraph
	env    map[string]*value
	skip   map[int]bool
	nextID int
	idx    int // current node
	// separable: every node compiled so far computes each image from that
	// image alone (see perImage).
	separable bool
	// constBytes is the memory of the constants computed so far (see
	// checkOutputs).
	constBytes int64
	// maxElements is the limit on the elements of a tensor: MaxElements of
	// the LoadOptions per image of the batch.
	maxElements int64
	// ops are the runtime ops in the order emitted, with what each
	// computes for a device (see device.go).
	ops []*opRec
}

// buildError is the panic value used inside the builder; it is turned into
// an error naming the node.
type buildError struct{ err error }

// fail stops compiling the current node with an error.
func fail(format string, args ...any) {
	panic(buildError{fmt.Errorf(format, args...)})
}

// attempt runs f and reports whether it completed; a failure (fail) in f
// makes it report false instead of failing the node. The fusion decisions
// use it to ask whether a later node could be compiled into the current
// one.
func attempt(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isFail := r.(buildError); !isFail {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

func (p *program) build(batch int) (*instance, error) {
	inst, b, err := p.compile(batch)
	if err != nil {
		return nil, err
	}
	keep := map[*gop]bool{}
	for _, v := range inst.outputs {
		if v.op != nil {
			keep[v.op] = true
		}
	}
	if inst.ops, inst.bufs, err = planMemory(b.g, keep); err != nil {
		return nil, fmt.Errorf("memory plan: %w", err)
	}
	inst.recordMemory(b)
	inst.vm = gorgonia.NewTapeMachine(b.g)
	inst.tape = tape.New(inst.vm)
	return inst, nil
}

// compile compiles the program's nodes for a batch size into a graph
// whose ops have no buffers yet (build plans them for the CPU, a device
// its own; see device.go), returning the builder too for the ops it
// emitted.
func (p *program) compile(batch int) (*instance, *builder, error) {
	b := &builder{p: p, batch: batch, g: gorgonia.NewGraph(), env: map[string]*value{}, skip: map[int]bool{}, separable: true,
		maxElements: mulSat(p.opt.MaxElements, int64(max(batch, 1)))}
	for name, c := range p.consts {
		b.env[name] = constVal(c)
	}
	inst := &instance{p: p, g: b.g}
	for _, in := range p.inputs {
		shape := slices.Clone(in.Shape)
		if shape[0] < 0 {
			shape[0] = batch
		}
		if shape[0] < 0 {
			return nil, nil, fmt.Errorf("internal: no batch size for input %q", in.Name)
		}
		if _, ok := checkedNumel(shape, b.maxElements); !ok {
			return nil, nil, limitError("input %q of shape %v has more than %d elements, the limit per tensor", in.Name, shape, b.maxElements)
		}
		n := gorgonia.NewTensor(b.g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(in.Name))
		b.env[in.Name] = &value{n: n, shape: shape}
		inst.inputs = append(inst.inputs, n)
	}
	for i := range p.nodes {
		if b.skip[i] {
			continue
		}
		b.idx = i
		if err := b.compileNode(i); err != nil {
			return nil, nil, err
		}
	}
	for k, out := range p.outputs {
		v, ok := b.env[out.Name]
		if !ok {
			return nil, nil, fmt.Errorf("graph output %q is not produced by any node", out.Name)
		}
		if v.c != nil && v.c.isInt {
			return nil, nil, fmt.Errorf("graph output %q is an integer tensor; only float32 outputs are supported", out.Name)
		}
		if !fits(out.Shape, v.shape) {
			// Not declared, or declared wrongly (ONNX Runtime only warns):
			// callers size their buffers from Outputs.
			s := slices.Clone(v.shape)
			if p.dynamic && len(s) > 0 && s[0] == batch {
				s[0] = -1
			}
			p.outputs[k].Shape = s
		}
		inst.outputs = append(inst.outputs, v)
		if v.c != nil || len(v.shape) == 0 || v.shape[0] != batch {
			b.separable = false
		}
	}
	inst.separable = b.separable && batch > 1
	for _, in := range p.inputs {
		if in.Shape[0] >= 0 {
			inst.separable = false
		}
	}
	return inst, b, nil
}

// compileNode compiles node i with its operator's build function, binding
// its outputs in b.env.
func (b *builder) compileNode(i int) (err error) {
	n := &b.p.nodes[i]
	defer func() {
		if r := recover(); r != nil {
			if be, ok := r.(buildError); ok {
				err = fmt.Errorf("node %q (%s, opset %d): %w", n.name, n.op, b.p.opset, be.err)
				return
			}
			err = fmt.Errorf("node %q (%s, opset %d): internal error: %v", n.name, n.op, b.p.opset, r)
		}
	}()
	ins := make([]*value, len(n.inputs))
	for k, name := range n.inputs {
		if name == "" {
			continue
		}
		v, ok := b.env[name]
		if !ok {
			fail("input %q is not produced by an earlier node, an initializer or a graph input", name)
		}
		ins[k] = v
	}
	def, ok := opTable[n.op]
	if !ok {
		fail("unsupported operator %s", n.op) // reported for all nodes at load time (checkOps)
	}
	a := newAttrs(n)
	outs := def.build(b, a, ins)
	a.checkUnused()
	b.checkOutputs(ins, outs)
	if b.separable && !b.perImage(def, a, ins, outs) {
		b.separable = false
	}
	for k, name := range n.outputs {
		if name == "" {
			continue
		}
		if k >= len(outs) || outs[k] == nil {
			if len(b.p.consumers[name]) > 0 || b.p.isOutput[name] {
				fail("output %d (%q) is not supported", k, name)
			}
			continue
		}
		b.env[name] = outs[k]
	}
	return nil
}

// attrs gives typed access to a node's attributes and records which were
// read, so that an attribute the engine does not implement is an error.
type attrs struct {
	n    *onode
	used map[string]bool
}

func newAttrs(n *onode) *attrs { return &attrs{n: n, used: map[string]bool{}} }

func (a *attrs) has(name string) bool { _, ok := a.n.attrs[name]; return ok }

func (a *attrs) get(name string) (any, bool) {
	v, ok := a.n.attrs[name]
	a.used[name] = true
	return v, ok
}

func (a *attrs) int(name string, def int64) int64 { return attrOf(a, name, def, "an int") }

func (a *attrs) ints(name string, def []int64) []int64 { return attrOf(a, name, def, "ints") }

func (a *attrs) float(name string, def float32) float32 { return attrOf(a, name, def, "a float") }

func (a *attrs) floats(name string, def []float32) []float32 { return attrOf(a, name, def, "floats") }

func (a *attrs) str(name, def string) string { return attrOf(a, name, def, "a string") }

// attrOf returns attribute name as a T, or def when the node does not have
// it; an attribute of another type is an error saying it should be want.
func attrOf[T any](a *attrs, name string, def T, want string) T {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	x, ok := v.(T)
	if !ok {
		fail("attribute %q is %T, want %s", name, v, want)
	}
	return x
}

func (a *attrs) tensor(name string) (*tens, bool) {
	v, ok := a.get(name)
	if !ok {
		return nil, false
	}
	if dims, ok := a.n.emptyAttrs[name]; ok {
		return emptyTens(dims), true
	}
	t, ok := v.(tensor.Tensor)
	if !ok {
		fail("attribute %q is %T, want a tensor", name, v)
	}
	c, err := fromTensor(t)
	if err != nil {
		fail("attribute %q: %v", name, err)
	}
	return c, true
}

// ignore marks attributes that do not affect inference.
func (a *attrs) ignore(names ...string) {
	for _, n := range names {
		a.used[n] = true
	}
}

func (a *attrs) checkUnused() {
	var bad []string
	for name := range a.n.attrs {
		if !a.used[name] {
			bad = append(bad, name)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		fail("unsupported attribute %q", bad[0])
	}
}

// emit creates the runtime op computing fn, or folds it when all inputs
// are constants. ins may hold nil for omitted optional inputs.
func (b *builder) emit(shape []int, ins []*value, fn func(out []float32, ins [][]float32)) *value {
	b.checkShape(shape)
	n := b.node()
	allConst := true
	for _, v := range ins {
		if v != nil && v.c == nil {
			allConst = false
		}
	}
	if allConst {
		data := make([]float32, b.checkConst(shape, false))
		cins := make([][]float32, len(ins))
		for k, v := range ins {
			if v != nil {
				cins[k] = v.c.floats()
			}
		}
		fn(data, cins)
		return constVal(&tens{shape: shape, f: data})
	}
	if numel(shape) == 0 {
		fail("output of shape %v has no elements; values computed at run time must have some", shape)
	}
	b.nextID++
	o := &gop{id: b.nextID, label: fmt.Sprintf("%s(%s)", n.op, n.name), fn: fn}
	o.slots = make([][]float32, len(ins))
	o.isRT = make([]bool, len(ins))
	o.ins = make([][]float32, len(ins))
	var children []*gorgonia.Node
	for k, v := range ins {
		switch {
		case v == nil:
		case v.c != nil:
			o.slots[k] = v.c.floats()
		default:
			o.isRT[k] = true
			children = append(children, v.n)
			o.inDims = append(o.inDims, v.n.Dims())
			o.srcs = append(o.srcs, v.op)
		}
	}
	gs := shape
	if len(gs) == 0 {
		gs = []int{1}
	}
	o.outShape = tensor.Shape(slices.Clone(gs)) // buffers: see planMemory
	node, err := gorgonia.ApplyOp(o, children...)
	if err != nil {
		fail("gorgonia: %v", err)
	}
	b.ops = append(b.ops, &opRec{op: o, optype: n.op, ins: ins})
	return &value{n: node, op: o, shape: shape}
}

// alias returns v under another shape with the same data.
func alias(v *value, shape []int) *value {
	if numel(shape) != numel(v.shape) {
		fail("internal: alias %v as %v", v.shape, shape)
	}
	if v.c != nil {
		return constVal(v.c.withShape(shape))
	}
	return &value{n: v.n, op: v.op, shape: shape}
}

// need returns input k, failing when it is missing.
func need(ins []*value, k int, what string) *value {
	if k >= len(ins) || ins[k] == nil {
		fail("missing input %d (%s)", k, what)
	}
	return ins[k]
}

// opt returns input k or nil.
func opt(ins []*value, k int) *value {
	if k >= len(ins) {
		return nil
	}
	return ins[k]
}

// constant returns input k, which must be known at load time.
func constant(ins []*value, k int, what string) *tens {
	v := need(ins, k, what)
	if v.c == nil {
		fail("input %d (%s) must be a constant (an initializer or computable at load time)", k, what)
	}
	return v.c
}

// scalar returns the value of input k, which must be a constant holding
// one value.
func scalar(ins []*value, k int, what string) float32 {
	f := constant(ins, k, what).floats()
	if len(f) != 1 {
		fail("input %d (%s) has %d values, want a scalar", k, what, len(f))
	}
	return f[0]
}

// node returns the node being compiled.
func (b *builder) node() *onode { return &b.p.nodes[b.idx] }

// consumer returns the single node consuming name as its first input, or
// -1 when name has other uses or is a graph output.
func (b *builder) consumer(name string) int {
	cs := b.p.consumers[name]
	if len(cs) != 1 || b.p.isOutput[name] {
		return -1
	}
	j := cs[0]
	n := &b.p.nodes[j]
	if j <= b.idx || len(n.inputs) == 0 || n.inputs[0] != name {
		return -1
	}
	for _, in := range n.inputs[1:] {
		if in == name {
			return -1
		}
	}
	return j
}
