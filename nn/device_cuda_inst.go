//go:build gpu

package nn

import (
	"errors"
	"fmt"
	"slices"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/cuda"
)

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
