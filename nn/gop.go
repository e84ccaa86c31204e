package nn

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

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
// reflection and boxes it: an allocation per op input per run, where a
// run is meant to allocate nothing.
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
