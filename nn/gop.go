package nn

import (
	"fmt"
	"hash"
	"hash/fnv"
	"slices"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/tape"
)

// tens is a tensor known at load time: an initializer, a Constant or a
// folded value. Exactly one of f and i holds its data.
type tens struct {
	shape []int
	f     []float32
	i     []int64
	isInt bool
}

func emptyTens(dims []int64) *tens {
	s := make([]int, len(dims))
	for k, d := range dims {
		s[k] = int(d)
	}
	return &tens{shape: s, f: []float32{}}
}

// ints returns the values of an integer (or integral float) tensor.
func (t *tens) ints() []int64 {
	if t.isInt {
		return t.i
	}
	out := make([]int64, len(t.f))
	for k, v := range t.f {
		out[k] = int64(v)
	}
	return out
}

// floats returns the values as float32.
func (t *tens) floats() []float32 {
	if !t.isInt {
		return t.f
	}
	out := make([]float32, len(t.i))
	for k, v := range t.i {
		out[k] = float32(v)
	}
	return out
}

func (t *tens) withShape(s []int) *tens {
	return &tens{shape: s, f: t.f, i: t.i, isInt: t.isInt}
}

// fromTensor converts a tensor decoded by onnx-go.
func fromTensor(t tensor.Tensor) (*tens, error) {
	shape := []int(t.Shape().Clone())
	if t.Shape().IsScalar() {
		shape = []int{}
	}
	out := &tens{shape: shape}
	switch d := t.Data().(type) {
	case []float32:
		out.f = slices.Clone(d)
	case float32:
		out.f = []float32{d}
	case []float64:
		out.f = make([]float32, len(d))
		for k, v := range d {
			out.f[k] = float32(v)
		}
	case float64:
		out.f = []float32{float32(d)}
	case []int64:
		out.i, out.isInt = slices.Clone(d), true
	case int64:
		out.i, out.isInt = []int64{d}, true
	case []int32:
		out.i, out.isInt = make([]int64, len(d)), true
		for k, v := range d {
			out.i[k] = int64(v)
		}
	case int32:
		out.i, out.isInt = []int64{int64(d)}, true
	case []bool:
		out.i, out.isInt = make([]int64, len(d)), true
		for k, v := range d {
			if v {
				out.i[k] = 1
			}
		}
	case bool:
		out.i, out.isInt = []int64{0}, true
		if d {
			out.i[0] = 1
		}
	default:
		return nil, fmt.Errorf("unsupported tensor data type %T", d)
	}
	n := len(out.f)
	if out.isInt {
		n = len(out.i)
	}
	if n != numel(shape) {
		return nil, fmt.Errorf("tensor of shape %v holds %d values", shape, n)
	}
	return out, nil
}

// gop is the Gorgonia op of one (possibly fused) ONNX node. It owns its
// output buffer, allocated once when the graph is built, so running the
// graph again allocates no tensors and cannot accumulate state: fn must
// overwrite every element of out.
type gop struct {
	id       int
	label    string
	inDims   []int // ranks of the Gorgonia children
	outShape tensor.Shape
	out      *tensor.Dense
	outData  []float32
	buf      *buffer // shared with ops whose lifetimes do not overlap
	srcs     []*gop  // producers of the runtime inputs (nil: graph input)
	// A Conv whose only consumer is a channel Concat writes straight into
	// its part of the Concat's output (zero-copy Concat): into is the
	// Concat, fnInto writes image b at dst[b·stride+off:].
	into        *gop
	off, stride int
	fnInto      func(dst []float32, off, stride int, ins [][]float32)
	parts       []*gop // for such a Concat: the ops writing into it
	// slots maps the logical inputs of fn: a non-nil const is passed as
	// is, otherwise the next Gorgonia child's data.
	slots [][]float32
	isRT  []bool
	ins   [][]float32
	fn    func(out []float32, ins [][]float32)
}

var _ gorgonia.Op = (*gop)(nil)

func (o *gop) Arity() int { return len(o.inDims) }

func (o *gop) Type() hm.Type {
	ts := make([]hm.Type, 0, len(o.inDims)+1)
	for _, d := range o.inDims {
		ts = append(ts, gorgonia.TensorType{Dims: d, Of: tensor.Float32})
	}
	ts = append(ts, gorgonia.TensorType{Dims: len(o.outShape), Of: tensor.Float32})
	return hm.NewFnType(ts...)
}

func (o *gop) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return o.outShape.Clone(), nil
}

func (o *gop) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	if len(vals) != len(o.inDims) {
		return nil, fmt.Errorf("%s: got %d inputs, want %d", o.label, len(vals), len(o.inDims))
	}
	for _, s := range o.srcs {
		if s != nil && s.buf.owner != s.ownerID() {
			return nil, fmt.Errorf("%s: internal error: the buffer of input %s was overwritten before use (execution order differs from the memory plan)", o.label, s.label)
		}
	}
	j := 0
	for k := range o.slots {
		if !o.isRT[k] {
			o.ins[k] = o.slots[k]
			continue
		}
		d, ok := float32Data(vals[j])
		if !ok {
			return nil, fmt.Errorf("%s: input %d is %T, want float32 data", o.label, k, vals[j].Data())
		}
		o.ins[k] = d
		j++
	}
	if o.into != nil {
		o.fnInto(o.into.outData, o.off, o.stride, o.ins)
	} else {
		o.fn(o.outData, o.ins)
	}
	o.buf.owner = o.ownerID()
	return o.out, nil
}

// float32Data returns the float32 values of v. For a *tensor.Dense of
// float32 it reads them without Data, which builds the slice by
// reflection and boxes it (76 ns and an allocation per call against 5 ns;
// ResNet-20 at batch 1 has 35 runtime inputs per run).
func float32Data(v gorgonia.Value) ([]float32, bool) {
	if t, ok := v.(*tensor.Dense); ok && t.Dtype() == tensor.Float32 && !t.IsScalar() {
		return t.Float32s(), true
	}
	d, ok := v.Data().([]float32)
	return d, ok
}

// ownerID is the id under which o's output is held in its buffer.
func (o *gop) ownerID() int {
	if o.into != nil {
		return o.into.id
	}
	return o.id
}

func (o *gop) ReturnsPtr() bool      { return false }
func (o *gop) CallsExtern() bool     { return false }
func (o *gop) OverwritesInput() int  { return -1 }
func (o *gop) WriteHash(h hash.Hash) { fmt.Fprintf(h, "amt.nn/%d/%s", o.id, o.label) }
func (o *gop) Hashcode() uint32 {
	h := fnv.New32a()
	o.WriteHash(h)
	return h.Sum32()
}
func (o *gop) String() string { return o.label }

// buffer is memory for op outputs: size float32 values, allocated (data)
// when the graph first runs; owner is the id of the op whose output it
// holds now.
type buffer struct {
	size  int
	data  []float32
	owner int
}

// planMemory gives every op an output buffer, reusing the buffers of
// values no longer needed, in the order the tape machine runs the ops
// (the reverse of gorgonia.Sort, as gorgonia.Compile does). keep holds ops
// whose outputs must survive the run (graph outputs). It returns the ops in
// execution order and the buffers, whose memory is not allocated yet (see
// instance.allocate).
func planMemory(g *gorgonia.ExprGraph, keep map[*gop]bool) ([]*gop, []*buffer, error) {
	sorted, err := gorgonia.Sort(g)
	if err != nil {
		return nil, nil, err
	}
	var order []*gop
	for i := len(sorted) - 1; i >= 0; i-- {
		if o, ok := sorted[i].Op().(*gop); ok {
			order = append(order, o)
		}
	}
	pos := make(map[*gop]int, len(order))
	for i, o := range order {
		pos[o] = i
	}
	last := make(map[*gop]int, len(order))
	for i, o := range order {
		last[o] = i
		for _, s := range o.srcs {
			if s != nil {
				if pos[s] >= i {
					return nil, nil, fmt.Errorf("internal: %s runs before its input %s", o.label, s.label)
				}
				last[s] = max(last[s], i)
			}
		}
	}
	var bufs, free []*buffer
	release := map[int][]*buffer{} // position after which buffers are free
	give := func(o *gop) {
		if b := allocate(o, &free); b != nil {
			bufs = append(bufs, b)
		}
	}
	for i, o := range order {
		free = append(free, release[i-1]...)
		if o.into != nil || (o.parts != nil && o.buf != nil) {
			// Part of a zero-copy Concat: allocated with its first member.
			t := o
			if o.into != nil {
				t = o.into
			}
			if t.buf == nil {
				if pos[t] <= i {
					return nil, nil, fmt.Errorf("internal: concat %s runs before its part %s", t.label, o.label)
				}
				give(t)
				if !keep[t] {
					release[last[t]] = append(release[last[t]], t.buf)
				}
			}
			if o.into != nil {
				// The part's value, never read as such: its consumer (the
				// Concat) reads the shared buffer.
				o.buf = t.buf
			}
			continue
		}
		give(o)
		if !keep[o] {
			release[last[o]] = append(release[last[o]], o.buf)
		}
	}
	return order, bufs, nil
}

// allocate gives o the smallest free buffer that fits, or a new one, which
// it returns.
func allocate(o *gop, free *[]*buffer) (created *buffer) {
	size := o.outShape.TotalSize()
	best := -1
	for k, b := range *free {
		if b.size >= size && (best < 0 || b.size < (*free)[best].size) {
			best = k
		}
	}
	if best >= 0 {
		o.buf = (*free)[best]
		*free = append((*free)[:best], (*free)[best+1:]...)
		return nil
	}
	o.buf = &buffer{size: size, owner: -1}
	return o.buf
}

// instance is the graph of a model built for one batch size.
type instance struct {
	p       *program
	g       *gorgonia.ExprGraph
	vm      gorgonia.VM
	tape    *tape.Runner // runs vm
	inputs  []*gorgonia.Node
	outputs []*value
	// separable: built for more than one image, and every op computes each
	// image from that image alone, so the batch may run image by image.
	separable bool
	// ops in execution order and their buffers, allocated on the first
	// run (allocated).
	ops       []*gop
	bufs      []*buffer
	allocated bool
	// Planned memory: constants computed while building, op output
	// buffers, and the batch's inputs and outputs, in bytes.
	constBytes, bufBytes, inBytes, outBytes int64
	// own: the inputs splitRun copies a group of images into (see
	// groupInputs), allocated on first use.
	own []*tensor.Dense
}

// allocate allocates the planned buffers and points the ops' outputs at
// them.
func (inst *instance) allocate() {
	if inst.allocated {
		return
	}
	for _, b := range inst.bufs {
		b.data = make([]float32, b.size)
	}
	for _, o := range inst.ops {
		if o.into == nil {
			o.outData = o.buf.data[:o.outShape.TotalSize()]
			o.out = tensor.New(tensor.WithShape(o.outShape...), tensor.WithBacking(o.outData))
		}
	}
	for _, o := range inst.ops {
		if o.into != nil {
			o.outData, o.out = nil, o.into.out
		}
	}
	inst.allocated = true
}

func (inst *instance) run(inputs []*tensor.Dense) (res []*tensor.Dense, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("nn: %s: run: internal error: %v", inst.p.name, r)
		}
	}()
	defer inst.vm.Reset()
	inst.allocate()
	for i, n := range inst.inputs {
		if err := gorgonia.Let(n, inputs[i]); err != nil {
			return nil, fmt.Errorf("nn: %s: input %q: %w", inst.p.name, inst.p.inputs[i].Name, err)
		}
	}
	if err := inst.tape.Run(); err != nil {
		return nil, fmt.Errorf("nn: %s: run: %w", inst.p.name, err)
	}
	res = make([]*tensor.Dense, len(inst.outputs))
	for k, v := range inst.outputs {
		var data []float32
		if v.c != nil {
			data = slices.Clone(v.c.floats())
		} else {
			src, ok := v.n.Value().Data().([]float32)
			if !ok {
				return nil, fmt.Errorf("nn: %s: output %q has no float32 value", inst.p.name, inst.p.outputs[k].Name)
			}
			data = slices.Clone(src)
		}
		shape := v.shape
		if len(shape) == 0 {
			shape = []int{1}
		}
		res[k] = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
	}
	return res, nil
}
