//go:build gpu

package nn

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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
	return cuda.FreeAll(append(s.in, s.out...)...)
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
