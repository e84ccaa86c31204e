package nn

import (
	"slices"

	"gorgonia.org/tensor"
)

// Concat: a copy that joins values along an axis, or, for Convs feeding
// only a channel Concat, no copy at all.

func concatOp(b *builder, a *attrs, ins []*value) *value {
	if len(ins) == 0 {
		fail("no inputs")
	}
	var vals []*value
	for k := range ins {
		vals = append(vals, need(ins, k, "input"))
	}
	r := len(vals[0].shape)
	ax, err := normAxis(a.int("axis", 0), r)
	if err != nil {
		fail("%v", err)
	}
	shape := slices.Clone(vals[0].shape)
	shapes := [][]int{vals[0].shape}
	allInt := true
	for _, v := range vals {
		if v.c == nil || !v.c.isInt {
			allInt = false
		}
	}
	for k, v := range vals[1:] {
		if len(v.shape) != r {
			fail("input %d has shape %v, input 0 has %v", k+1, v.shape, vals[0].shape)
		}
		for d := range v.shape {
			if d != ax && v.shape[d] != shape[d] {
				fail("input %d has shape %v, incompatible with %v along axis %d", k+1, v.shape, vals[0].shape, d)
			}
		}
		shape[ax] += v.shape[ax]
		shapes = append(shapes, v.shape)
	}
	b.checkShape(shape)
	if allInt {
		out := make([]int64, numel(shape))
		data := make([][]int64, len(vals))
		for k, v := range vals {
			data[k] = v.c.i
		}
		concat(out, data, shapes, ax)
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	if parts := b.zeroCopyParts(vals, ax); parts != nil {
		v := b.emit(shape, vals, func([]float32, [][]float32) {})
		v.op.parts = parts
		inner := numel(shape[ax+1:])
		off := 0
		for k, p := range parts {
			p.into, p.off, p.stride = v.op, off*inner, shape[ax]*inner
			off += vals[k].shape[ax]
		}
		return v
	}
	return b.onDevice(b.emit(shape, vals, func(out []float32, ins [][]float32) {
		concat(out, ins, shapes, ax)
	}), devConcat{shapes, ax})
}

// concatPerImage: Concat of batched values along another axis than the
// batch axis. A constant with one identical part per image (ViT's class
// token, expanded to the batch) counts as batched.
func concatPerImage(b *builder, a *attrs, ins, _ []*value) bool {
	for _, v := range ins {
		if v == nil || (!b.batched(v) && !b.samePerImage(v)) {
			return false
		}
	}
	return len(ins) > 0 && axisNot0(a.int("axis", 0), len(ins[0].shape))
}

// zeroCopyParts returns the producers of a Concat's inputs when they can
// write straight into the Concat's output: concatenation along axis 1 of
// distinct Conv outputs that nothing else uses.
func (b *builder) zeroCopyParts(vals []*value, ax int) []*gop {
	if ax != 1 {
		return nil
	}
	n := b.node()
	var parts []*gop
	for k, v := range vals {
		name := n.inputs[k]
		if v.op == nil || v.op.fnInto == nil || v.op.into != nil || !sameInts(v.shape, v.op.outShape) ||
			len(b.p.consumers[name]) != 1 || b.p.isOutput[name] || slices.Contains(parts, v.op) {
			return nil
		}
		for j, other := range n.inputs {
			if j != k && other == name {
				return nil
			}
		}
		parts = append(parts, v.op)
	}
	return parts
}

func sameInts(a []int, b tensor.Shape) bool { return slices.Equal(a, []int(b)) }
