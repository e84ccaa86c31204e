//go:build gpu

package nn

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/cuda"
)

// The cuda device: a model's graphs run on an NVIDIA GPU through package
// nn/cuda (see device.go for the seam). Each graph (one per batch size) is
// an instance: the ops' device operations in the builder's order, over
// device buffers planned as planMemory plans the CPU's (an op's output
// takes the smallest free buffer that fits; a buffer is free again after
// its value's last use; graph outputs keep theirs), with the weights and
// other constants uploaded when the instance is built. A run copies each
// graph input to the device once, queues every op on the device's stream
// and copies each graph output back once.

// cudaShared is an open GPU shared by a model and its clones; the last one
// to close it closes it.
type cudaShared struct {
	d    *cuda.Device
	mu   sync.Mutex
	refs int
}

func (s *cudaShared) retain() {
	s.mu.Lock()
	s.refs++
	s.mu.Unlock()
}

func (s *cudaShared) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refs--
	if s.refs == 0 {
		return s.d.Close()
	}
	return nil
}

// cudaAccel runs one Model on a GPU.
type cudaAccel struct {
	sh     *cudaShared
	logf   func(format string, args ...any)
	cpuOps []string           // operators kept on the CPU
	insts  map[int]*cudaInst  // by batch key
	split  map[int]*cudaSplit // by batch size, for models of fixed batch 1
	fb     []string           // ops running on the CPU, in order of discovery
	fbSeen map[string]bool
	// why says why each op in fb runs on the CPU: errNoDeviceOp (no
	// description, or one of a kind or size the GPU does not implement),
	// errCPUOp (LoadOptions.CPUOps), or the device's refusal of the
	// description's parameters.
	why    map[string]error
	closed bool
}

// cudaSplit holds a whole batch of inputs and outputs on the device for a
// model of fixed batch 1 that runs it image by image (nil for a constant
// output).
type cudaSplit struct{ in, out []*cuda.Buffer }

func (s *cudaSplit) free() error {
	var first error
	for _, b := range append(s.in, s.out...) {
		if b != nil {
			if err := b.Free(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func openCUDA(cfg cuda.Config, logf func(string, ...any), cpuOps []string) (accel, error) {
	d, err := cuda.Open(cfg)
	if err != nil {
		return nil, err
	}
	return newCUDAAccel(&cudaShared{d: d, refs: 1}, logf, cpuOps), nil
}

func newCUDAAccel(sh *cudaShared, logf func(string, ...any), cpuOps []string) *cudaAccel {
	return &cudaAccel{sh: sh, logf: logf, cpuOps: cpuOps, insts: map[int]*cudaInst{}, split: map[int]*cudaSplit{},
		fbSeen: map[string]bool{}, why: map[string]error{}}
}

func (a *cudaAccel) String() string { return "cuda: " + a.sh.d.String() }

func (a *cudaAccel) fallbacks() []string { return slices.Clone(a.fb) }

func (a *cudaAccel) clone() accel {
	a.sh.retain()
	return newCUDAAccel(a.sh, a.logf, a.cpuOps)
}

func (a *cudaAccel) close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, inst := range a.insts {
		keep(inst.free())
	}
	for _, s := range a.split {
		keep(s.free())
	}
	a.insts, a.split = nil, nil
	keep(a.sh.release())
	return first
}

func (a *cudaAccel) prepare(m *Model, key int) error {
	_, err := a.instance(m, key)
	return err
}

// instance returns the graph for a batch key, building it if needed.
func (a *cudaAccel) instance(m *Model, key int) (*cudaInst, error) {
	if a.closed {
		return nil, errors.New("the model was closed")
	}
	if inst, ok := a.insts[key]; ok {
		return inst, nil
	}
	inst, err := newCUDAInst(a.sh.d, m.p, key, a.cpuOps)
	if err != nil {
		return nil, err
	}
	var fresh []string
	for k, l := range inst.fallbacks {
		if !a.fbSeen[l] {
			a.fbSeen[l] = true
			a.why[l] = inst.why[k]
			a.fb = append(a.fb, l)
			fresh = append(fresh, l)
		}
	}
	if len(fresh) > 0 && a.logf != nil {
		a.logf("nn: %s: %d of the %d ops run on the CPU, with copies to and from the GPU: %s",
			m.p.name, len(inst.fallbacks), inst.ops, strings.Join(fresh, ", "))
	}
	a.insts[key] = inst
	return inst, nil
}

func (a *cudaAccel) run(m *Model, inputs []*tensor.Dense, batch int, split bool) ([]*tensor.Dense, error) {
	inst, err := a.instance(m, m.p.batchKey(batch))
	if err != nil {
		return nil, err
	}
	d := a.sh.d
	if !split {
		for k, t := range inputs {
			if err := d.Write(inst.in[k], t.Data().([]float32)); err != nil {
				return nil, fmt.Errorf("input %q: %w", m.p.inputs[k].Name, err)
			}
		}
		if err := inst.run(); err != nil {
			return nil, err
		}
		return inst.read(m.p, inst.outs, 1)
	}
	// A model of fixed batch 1: the whole batch goes to the device in one
	// copy per input and comes back in one per output; on the device, each
	// image is copied into the graph's input and its outputs out.
	s, err := a.splitBuffers(inst, batch)
	if err != nil {
		return nil, err
	}
	for k, t := range inputs {
		if err := d.Write(s.in[k], t.Data().([]float32)); err != nil {
			return nil, fmt.Errorf("input %q: %w", m.p.inputs[k].Name, err)
		}
	}
	outs := make([]cudaOut, len(inst.outs))
	for k, o := range inst.outs {
		if len(o.shape) == 0 || o.shape[0] != 1 {
			return nil, fmt.Errorf("cannot run the model image by image on %d images: output %q has shape %v, not [1,…]", batch, m.p.outputs[k].Name, o.shape)
		}
		outs[k] = cudaOut{c: o.c, shape: o.shape}
		if o.buf != nil {
			outs[k].buf = s.out[k]
		}
	}
	for i := 0; i < batch; i++ {
		for k, b := range inst.in {
			if err := d.Copy(b, s.in[k].Slice(i*b.Len(), b.Len())); err != nil {
				return nil, fmt.Errorf("image %d of %d: %w", i, batch, err)
			}
		}
		if err := inst.run(); err != nil {
			return nil, fmt.Errorf("image %d of %d: %w", i, batch, err)
		}
		for k, o := range inst.outs {
			if o.buf == nil {
				continue
			}
			n := o.buf.Len()
			if err := d.Copy(s.out[k].Slice(i*n, n), o.buf); err != nil {
				return nil, fmt.Errorf("image %d of %d: %w", i, batch, err)
			}
		}
	}
	return inst.read(m.p, outs, batch)
}

// splitBuffers returns the device buffers of a batch of n images for a
// model of fixed batch 1.
func (a *cudaAccel) splitBuffers(inst *cudaInst, n int) (*cudaSplit, error) {
	if s, ok := a.split[n]; ok {
		return s, nil
	}
	s := &cudaSplit{}
	alloc := func(per int) (*cuda.Buffer, error) {
		if per > 0 && n > (1<<31-1)/per {
			return nil, fmt.Errorf("%d images of %d values are too many for one buffer", n, per)
		}
		return a.sh.d.Alloc(max(1, n*per))
	}
	var err error
	for _, b := range inst.in {
		var x *cuda.Buffer
		if x, err = alloc(b.Len()); err != nil {
			break
		}
		s.in = append(s.in, x)
	}
	for _, o := range inst.outs {
		if err != nil {
			break
		}
		if o.buf == nil { // a constant, repeated on the host
			s.out = append(s.out, nil)
			continue
		}
		var x *cuda.Buffer
		if x, err = alloc(o.buf.Len()); err == nil {
			s.out = append(s.out, x)
		}
	}
	if err != nil {
		s.free()
		return nil, err
	}
	a.split[n] = s
	return s, nil
}

// cudaInst is a model's graph for one batch size on the GPU.
type cudaInst struct {
	d         *cuda.Device
	in        []*cuda.Buffer // graph inputs, in order
	steps     []cudaStep
	outs      []cudaOut
	owned     []interface{ Free() error }
	fallbacks []string // labels of the ops run on the CPU
	why       []error  // and why (see cudaAccel.why)
	ops       int      // number of runtime ops
}

// cudaStep is the device work of one op.
type cudaStep struct {
	label string
	run   func() error
}

// cudaOut is a graph output: a device buffer holding it, or a constant.
type cudaOut struct {
	buf   *cuda.Buffer
	c     []float32
	shape []int
}

// run queues every op.
func (ci *cudaInst) run() error {
	for _, s := range ci.steps {
		if err := s.run(); err != nil {
			return fmt.Errorf("%s: %w", s.label, err)
		}
	}
	return nil
}

// read copies the outputs to new host tensors, n images of each (constant
// outputs repeated).
func (ci *cudaInst) read(p *program, outs []cudaOut, n int) ([]*tensor.Dense, error) {
	res := make([]*tensor.Dense, len(outs))
	for k, o := range outs {
		shape := slices.Clone(o.shape)
		if n > 1 {
			shape[0] *= n
		}
		var data []float32
		if o.buf != nil {
			data = make([]float32, o.buf.Len())
			if err := ci.d.Read(data, o.buf); err != nil {
				return nil, fmt.Errorf("output %q: %w", p.outputs[k].Name, err)
			}
		} else {
			for range n {
				data = append(data, o.c...)
			}
		}
		res[k] = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
	}
	return res, nil
}

func (ci *cudaInst) free() error {
	var first error
	for i := len(ci.owned) - 1; i >= 0; i-- {
		if err := ci.owned[i].Free(); err != nil && first == nil {
			first = err
		}
	}
	ci.owned = nil
	return first
}

// alloc allocates a buffer of n values (at least one) owned by ci.
func (ci *cudaInst) alloc(n int) (*cuda.Buffer, error) {
	b, err := ci.d.Alloc(max(n, 1))
	if err != nil {
		return nil, err
	}
	ci.owned = append(ci.owned, b)
	return b.Slice(0, n), nil
}

// upload copies host values to a new buffer owned by ci.
func (ci *cudaInst) upload(x []float32) (*cuda.Buffer, error) {
	b, err := ci.alloc(len(x))
	if err != nil || len(x) == 0 {
		return b, err
	}
	return b, ci.d.Write(b, x)
}

// newCUDAInst compiles the program for a batch key and prepares its graph
// on d, the ops of cpuOps on the CPU.
func newCUDAInst(d *cuda.Device, p *program, key int, cpuOps []string) (_ *cudaInst, err error) {
	g, b, err := p.compile(key)
	if err != nil {
		return nil, err
	}
	ci := &cudaInst{d: d, ops: len(b.ops)}
	defer func() {
		if err != nil {
			ci.free()
		}
	}()
	inputOf := map[*gorgonia.Node]int{}
	for k, n := range g.inputs {
		buf, err := ci.alloc(n.Shape().TotalSize())
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", p.inputs[k].Name, err)
		}
		ci.in = append(ci.in, buf)
		inputOf[n] = k
	}

	// Lifetimes, in the order the ops were emitted (a topological order).
	// A Conv writing into a zero-copy Concat (into) writes the Concat's
	// buffer, which it allocates when it comes first.
	owner := func(o *gop) *gop {
		if o.into != nil {
			return o.into
		}
		return o
	}
	last := map[*gop]int{}
	for i, r := range b.ops {
		last[owner(r.op)] = i
		for _, v := range r.ins {
			if v != nil && v.c == nil && v.op != nil {
				last[owner(v.op)] = i
			}
		}
	}
	keep := map[*gop]bool{}
	for _, v := range g.outputs {
		if v.c == nil && v.op != nil {
			keep[owner(v.op)] = true
		}
	}
	var free []*cuda.Buffer
	release := map[int][]*cuda.Buffer{}
	bufs := map[*gop]*cuda.Buffer{}
	consts := map[*float32]*cuda.Buffer{}
	in := func(v *value) (*cuda.Buffer, error) {
		switch {
		case v == nil:
			return nil, nil
		case v.c != nil:
			x := v.c.floats()
			if len(x) > 0 {
				if b, ok := consts[&x[0]]; ok {
					return b, nil
				}
			}
			b, err := ci.upload(x)
			if err == nil && len(x) > 0 {
				consts[&x[0]] = b
			}
			return b, err
		case v.op == nil:
			return ci.in[inputOf[v.n]], nil
		}
		b := bufs[owner(v.op)]
		if b == nil {
			return nil, fmt.Errorf("internal: the input from %s has no buffer", v.op.label)
		}
		return b.Slice(0, numel(v.shape)), nil
	}
	for i, r := range b.ops {
		free = append(free, release[i-1]...)
		o := owner(r.op)
		if bufs[o] == nil {
			size := o.outShape.TotalSize()
			best := -1
			for k, f := range free {
				if f.Len() >= size && (best < 0 || f.Len() < free[best].Len()) {
					best = k
				}
			}
			var full *cuda.Buffer
			if best >= 0 {
				full = free[best]
				free = append(free[:best], free[best+1:]...)
			} else if full, err = ci.alloc(max(size, 1)); err != nil {
				return nil, fmt.Errorf("%s: %w", r.op.label, err)
			}
			bufs[o] = full.Slice(0, size)
			if !keep[o] {
				release[last[o]] = append(release[last[o]], full)
			}
		}
		if r.op.parts != nil {
			continue // a zero-copy Concat: its parts write its buffer
		}
		ins := make([]*cuda.Buffer, len(r.ins))
		for k, v := range r.ins {
			if ins[k], err = in(v); err != nil {
				return nil, fmt.Errorf("%s: input %d: %w", r.op.label, k, err)
			}
		}
		var run func() error
		derr := errCPUOp
		if !slices.Contains(cpuOps, r.optype) {
			run, derr = ci.deviceOp(r, ins, bufs[o])
		}
		var cerr *cuda.Error
		switch {
		case errors.As(derr, &cerr):
			return nil, fmt.Errorf("%s: %w", r.op.label, derr)
		case derr != nil:
			ci.fallbacks = append(ci.fallbacks, r.op.label)
			ci.why = append(ci.why, derr)
			run = ci.cpuOp(r, ins, bufs[o])
		}
		ci.steps = append(ci.steps, cudaStep{label: r.op.label, run: run})
	}
	for k, v := range g.outputs {
		shape := v.shape
		if len(shape) == 0 {
			shape = []int{1}
		}
		var out cudaOut
		switch {
		case v.c != nil:
			out = cudaOut{c: slices.Clone(v.c.floats())}
		case v.op == nil:
			out = cudaOut{buf: ci.in[inputOf[v.n]]}
		default:
			out = cudaOut{buf: bufs[owner(v.op)].Slice(0, numel(shape))}
		}
		if out.buf == nil && out.c == nil {
			return nil, fmt.Errorf("internal: output %q has no value", p.outputs[k].Name)
		}
		out.shape = slices.Clone(shape)
		ci.outs = append(ci.outs, out)
	}
	return ci, nil
}

// cpuOp runs op r on the CPU: its runtime inputs are copied to the host,
// its output back to out (for a part of a zero-copy Concat, image by image
// into its slot).
func (ci *cudaInst) cpuOp(r *opRec, ins []*cuda.Buffer, out *cuda.Buffer) func() error {
	o := r.op
	host := make([][]float32, len(r.ins))
	for k, v := range r.ins {
		switch {
		case v == nil:
		case v.c != nil:
			host[k] = o.slots[k]
		default:
			host[k] = make([]float32, numel(v.shape))
		}
	}
	res := make([]float32, o.outShape.TotalSize())
	return func() error {
		for k, v := range r.ins {
			if v != nil && v.c == nil {
				if err := ci.d.Read(host[k], ins[k]); err != nil {
					return err
				}
			}
		}
		o.fn(res, host)
		if o.into == nil {
			return ci.d.Write(out, res)
		}
		n := o.outShape[0]
		per := len(res) / n
		for i := range n {
			if err := ci.d.Write(out.Slice(i*o.stride+o.off, per), res[i*per:(i+1)*per]); err != nil {
				return err
			}
		}
		return nil
	}
}

// errNoDeviceOp marks an op that the GPU does not implement as described
// (it runs on the CPU instead), as opposed to a failure of the GPU;
// errCPUOp one kept on the CPU by LoadOptions.CPUOps.
var (
	errNoDeviceOp = errors.New("no GPU implementation")
	errCPUOp      = errors.New("kept on the CPU (LoadOptions.CPUOps)")
)

// The device's element-wise operators.
var (
	cudaUnary = map[string]cuda.UnaryOp{
		"Abs": cuda.UnaryAbs, "Ceil": cuda.UnaryCeil, "Clip": cuda.UnaryClip, "Elu": cuda.UnaryElu,
		"Exp": cuda.UnaryExp, "Floor": cuda.UnaryFloor, "HardSigmoid": cuda.UnaryHardSigmoid,
		"LeakyRelu": cuda.UnaryLeakyRelu, "Log": cuda.UnaryLog, "Neg": cuda.UnaryNeg,
		"Reciprocal": cuda.UnaryReciprocal, "Relu": cuda.UnaryRelu, "Sigmoid": cuda.UnarySigmoid,
		"Sqrt": cuda.UnarySqrt, "Tanh": cuda.UnaryTanh,
	}
	cudaBinary = map[string]cuda.BinaryOp{
		"Add": cuda.BinaryAdd, "Sub": cuda.BinarySub, "Mul": cuda.BinaryMul, "Div": cuda.BinaryDiv, "Pow": cuda.BinaryPow,
	}
	cudaReduce = map[string]cuda.ReduceOp{"sum": cuda.ReduceSum, "mean": cuda.ReduceMean, "max": cuda.ReduceMax}
)

// maxDeviceRank is the largest rank the device's broadcasting, transposing
// and gathering kernels take without merging axes (AMT_MAX_DIMS).
const maxDeviceRank = 6

// deviceOp prepares op r on the device, reading ins (its inputs' buffers)
// and writing out. An error that is not a *cuda.Error means the device
// does not implement the op as described: it then runs on the CPU.
func (ci *cudaInst) deviceOp(r *opRec, ins []*cuda.Buffer, out *cuda.Buffer) (func() error, error) {
	d := ci.d
	keep := func(f interface{ Free() error }) { ci.owned = append(ci.owned, f) }
	switch dv := r.dev.(type) {
	case devConv:
		c, err := d.NewConv(cuda.ConvSpec{Shape: dv.shape, Weight: dv.weight, Bias: dv.bias, Act: dv.act})
		if err != nil {
			return nil, err
		}
		keep(c)
		x, n := ins[0], dv.batch
		if dv.pool != nil {
			// The convolution into a buffer of its own, then the pooling.
			ps := *dv.pool
			if err := ps.Validate(); err != nil {
				return nil, err
			}
			tmp, err := ci.alloc(n * dv.shape.OutC * dv.shape.OutH() * dv.shape.OutW())
			if err != nil {
				return nil, err
			}
			return func() error {
				if err := c.Forward(tmp, x, n); err != nil {
					return err
				}
				return d.MaxPool(out, tmp, n*dv.shape.OutC, ps)
			}, nil
		}
		switch o := r.op; {
		case len(ins) > 1 && ins[1] != nil:
			res := ins[1]
			return func() error { return c.ForwardAdd(out, x, res, n) }, nil
		case o.into != nil:
			return func() error { return c.ForwardInto(out, o.off, o.stride, x, n) }, nil
		}
		return func() error { return c.Forward(out, x, n) }, nil

	case devAffine:
		scale, err := ci.upload(dv.scale)
		if err != nil {
			return nil, err
		}
		shift, err := ci.upload(dv.shift)
		if err != nil {
			return nil, err
		}
		return func() error { return d.ChannelAffine(out, ins[0], scale, shift, dv.channels, dv.inner) }, nil

	case devPool:
		if err := dv.shape.Validate(); err != nil {
			return nil, err
		}
		if dv.max {
			return func() error { return d.MaxPool(out, ins[0], dv.planes, dv.shape) }, nil
		}
		return func() error {
			return d.AvgPool(out, ins[0], dv.planes, dv.shape, dv.padBottom, dv.padRight, dv.countIncludePad)
		}, nil

	case devReduce:
		op, ok := cudaReduce[dv.op]
		if !ok || dv.n == 0 {
			return nil, errNoDeviceOp
		}
		x := ins[0]
		var pre func() error
		if dv.perm != nil && !isIdentity(dv.perm) {
			if len(dv.perm) > maxDeviceRank {
				return nil, errNoDeviceOp
			}
			tmp, err := ci.alloc(numel(dv.inShape))
			if err != nil {
				return nil, err
			}
			src := x
			pre = func() error { return d.Transpose(tmp, src, dv.inShape, dv.perm) }
			x = tmp
		}
		return func() error {
			if pre != nil {
				if err := pre(); err != nil {
					return err
				}
			}
			return d.Reduce(op, out, x, dv.outer, dv.n, dv.inner)
		}, nil

	case devUnary:
		x := ins[0]
		if dv.op == "HardSwish" { // x·HardSigmoid(x) with alpha 1/6, beta 1/2
			shape := []int{x.Len()}
			return func() error {
				if err := d.Unary(cuda.UnaryHardSigmoid, out, x, float32(1.0/6), 0.5); err != nil {
					return err
				}
				return d.Binary(cuda.BinaryMul, out, x, shape, out, shape)
			}, nil
		}
		op, ok := cudaUnary[dv.op]
		if !ok {
			return nil, errNoDeviceOp
		}
		return func() error { return d.Unary(op, out, x, dv.alpha, dv.beta) }, nil

	case devBinary:
		op, ok := cudaBinary[dv.op]
		if !ok || max(len(dv.a), len(dv.b)) > maxDeviceRank {
			return nil, errNoDeviceOp
		}
		return func() error { return d.Binary(op, out, ins[0], dv.a, ins[1], dv.b) }, nil

	case devSoftmax:
		return func() error { return d.Softmax(out, ins[0], dv.outer, dv.n, dv.inner) }, nil

	case devTranspose:
		if len(dv.shape) > maxDeviceRank {
			return nil, errNoDeviceOp
		}
		return func() error { return d.Transpose(out, ins[0], dv.shape, dv.perm) }, nil

	case devConcat:
		return func() error { return d.Concat(out, ins, dv.shapes, dv.axis) }, nil

	case devGather:
		return ci.gather(ins[0], out, dv.shape, dv.maps, dv.fill)

	case devTake:
		maps := identityMaps(dv.shape)
		maps[dv.axis] = dv.ids
		return ci.gather(ins[0], out, dv.shape, maps, 0)

	case devResize:
		taps := func(ts []linearTap) []cuda.Tap {
			out := make([]cuda.Tap, len(ts))
			for i, t := range ts {
				out[i] = cuda.Tap{I0: t.i0, I1: t.i1, W0: t.w0, W1: t.w1}
			}
			return out
		}
		rs, err := d.NewResizeLinear(dv.planes, dv.ih, dv.iw, taps(dv.ys), taps(dv.xs))
		if err != nil {
			return nil, err
		}
		keep(rs)
		return func() error { return rs.Run(out, ins[0]) }, nil

	case devGemm:
		if dv.m > 65535*64 {
			return nil, errNoDeviceOp
		}
		g := cuda.GemmArgs{TransA: dv.transA, TransB: dv.transB, M: dv.m, N: dv.n, K: dv.k, Alpha: dv.alpha,
			A: ins[0], LDA: dv.lda, B: ins[1], LDB: dv.ldb, Y: out, LDY: dv.n}
		switch {
		case dv.c != nil:
			c, err := ci.upload(dv.c)
			if err != nil {
				return nil, err
			}
			g.C, g.Beta, g.LDCRow, g.LDCCol = c, 1, dv.n, 1
		case len(ins) > 2 && ins[2] != nil:
			// C of rank ≤ 2 broadcast to m×n: as [rows, cols].
			s := append(make([]int, 2-len(dv.cShape)), dv.cShape...)
			for k := range s[:2-len(dv.cShape)] {
				s[k] = 1
			}
			g.C, g.Beta = ins[2], dv.beta
			if s[0] != 1 {
				g.LDCRow = s[1]
			}
			if s[1] != 1 {
				g.LDCCol = 1
			}
		}
		return func() error { return d.GemmEx(g) }, nil

	case devMatMul:
		nb := len(dv.offA)
		if dv.m > 65535*64 {
			return nil, errNoDeviceOp
		}
		mn := dv.m * dv.n
		g := cuda.GemmArgs{M: dv.m, N: dv.n, K: dv.k, Alpha: 1, A: ins[0], LDA: dv.k, B: ins[1], LDB: dv.n, Y: out, LDY: dv.n}
		// The bias and the residual are the C term: the residual (with the
		// bias added first, as the CPU does) one matrix each, the bias one
		// row for all.
		var pre func() error
		var bias *cuda.Buffer
		if dv.bias != nil {
			var err error
			if bias, err = ci.upload(dv.bias); err != nil {
				return nil, err
			}
		}
		var c *cuda.Buffer
		stride := mn
		switch {
		case dv.res && bias != nil:
			res, shape := ins[2], []int{nb * dv.m, dv.n}
			pre = func() error { return d.Binary(cuda.BinaryAdd, out, res, shape, bias, []int{dv.n}) }
			c = out
		case dv.res:
			c = ins[2]
		case bias != nil:
			c, stride = bias, 0
		}
		if c != nil {
			g.C, g.Beta, g.LDCCol = c, 1, 1
			if stride != 0 {
				g.LDCRow = dv.n
			}
		}
		sa, oka := progression(dv.offA)
		sb, okb := progression(dv.offB)
		var run func() error
		if oka && okb && nb <= 65535 {
			g.Batch, g.StrideA, g.StrideB, g.StrideY, g.StrideC = nb, sa, sb, mn, stride
			run = func() error { return d.GemmEx(g) }
		} else {
			run = func() error {
				for i := range nb {
					gi := g
					gi.A = ins[0].Slice(dv.offA[i], dv.m*dv.k)
					gi.B = ins[1].Slice(dv.offB[i], dv.k*dv.n)
					gi.Y = out.Slice(i*mn, mn)
					if c != nil && stride != 0 {
						gi.C = c.Slice(i*mn, mn)
					}
					if err := d.GemmEx(gi); err != nil {
						return err
					}
				}
				return nil
			}
		}
		if pre == nil {
			return run, nil
		}
		return func() error {
			if err := pre(); err != nil {
				return err
			}
			return run()
		}, nil
	}
	return nil, errNoDeviceOp
}

// gather prepares an index-map gather.
func (ci *cudaInst) gather(x, out *cuda.Buffer, shape []int, maps [][]int, fill float32) (func() error, error) {
	if len(shape) == 0 || len(shape) > maxDeviceRank {
		return nil, errNoDeviceOp
	}
	g, err := ci.d.NewGather(shape, maps, fill)
	if err != nil {
		return nil, err
	}
	ci.owned = append(ci.owned, g)
	return func() error { return g.Run(out, x) }, nil
}

// progression returns s when offs[i] = i·s for every i.
func progression(offs []int) (int, bool) {
	if len(offs) == 0 || offs[0] != 0 {
		return 0, false
	}
	s := 0
	if len(offs) > 1 {
		s = offs[1]
	}
	for i, o := range offs {
		if o != i*s {
			return 0, false
		}
	}
	return s, s >= 0
}
