package nn

import (
	"fmt"
	"slices"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/tape"
)

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
