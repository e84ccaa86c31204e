package nn

import (
	"math"
	"slices"

	"gorgonia.org/tensor"
)

// Operators on shapes and layouts: aliases that view a value under another
// shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout), copies
// that move or select elements (Transpose, Concat, Gather, Slice, Split,
// Pad, Expand), and the operators computing values known at load time
// (Shape, Constant, ConstantOfShape, Range, Cast), which only fold.

func identityOp(_ *builder, _ *attrs, ins []*value) *value { return need(ins, 0, "input") }

// dropoutOp is Dropout at inference: the identity.
func dropoutOp(b *builder, a *attrs, ins []*value) *value {
	a.ignore("ratio", "seed", "is_test")
	if b.p.opset < 7 && a.int("is_test", 1) == 0 {
		fail("training mode (is_test=0) is not supported")
	}
	// Training mode drops nothing with a ratio of 0 (torchvision 0.14's
	// Swin exports its attention dropout so).
	if t := opt(ins, 2); t != nil && (t.c == nil || len(t.c.ints()) != 1 || t.c.ints()[0] != 0) {
		if r := opt(ins, 1); r == nil || r.c == nil || len(r.c.floats()) != 1 || r.c.floats()[0] != 0 {
			fail("training_mode must be a constant false (or the ratio a constant 0)")
		}
	}
	return need(ins, 0, "data")
}

func flattenOp(_ *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "input")
	ax := a.int("axis", 1)
	if ax < 0 {
		ax += int64(len(x.shape))
	}
	if ax < 0 || int(ax) > len(x.shape) {
		fail("axis %d out of range for shape %v", a.int("axis", 1), x.shape)
	}
	return alias(x, []int{numel(x.shape[:ax]), numel(x.shape[ax:])})
}

// flattenPerImage: Flatten keeps the batch axis unless its axis is 0.
func flattenPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	return batchedFirst(b, a, ins, outs) && a.int("axis", 1) != 0
}

func reshapeOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	var target []int64
	if b.p.opset < 5 {
		target = a.ints("shape", nil)
	} else {
		target = constant(ins, 1, "shape").ints()
	}
	s, err := reshapeShape(x.shape, target, a.int("allowzero", 0) != 0)
	if err != nil {
		fail("%v", err)
	}
	return alias(x, s)
}

// squeezeAxes returns the axes of Squeeze or Unsqueeze: an attribute before
// opset 13, an optional constant input since (nil when absent).
func squeezeAxes(b *builder, a *attrs, ins []*value) []int64 {
	if b.p.opset >= 13 {
		if t := opt(ins, 1); t != nil {
			return constant(ins, 1, "axes").ints()
		}
		return nil
	}
	return a.ints("axes", nil)
}

func squeezeOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	s, err := squeezeShape(x.shape, squeezeAxes(b, a, ins))
	if err != nil {
		fail("%v", err)
	}
	return alias(x, s)
}

func unsqueezeOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	axes := squeezeAxes(b, a, ins)
	if axes == nil {
		fail("axes are required")
	}
	s, err := unsqueezeShape(x.shape, axes)
	if err != nil {
		fail("%v", err)
	}
	return alias(x, s)
}

func shapeOp(_ *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	r := len(x.shape)
	start, end := int(a.int("start", 0)), int(a.int("end", int64(r)))
	if start < 0 {
		start += r
	}
	if end < 0 {
		end += r
	}
	start, end = max(0, min(start, r)), max(0, min(end, r))
	var s []int64
	for _, d := range x.shape[start:max(start, end)] {
		s = append(s, int64(d))
	}
	return constVal(&tens{shape: []int{len(s)}, i: s, isInt: true})
}

func constantOfShapeOp(b *builder, a *attrs, ins []*value) *value {
	s := constant(ins, 0, "shape").ints()
	shape := make([]int, len(s))
	for k, d := range s {
		if d < 0 {
			fail("negative dimension in shape %v", s)
		}
		shape[k] = int(d)
	}
	v, hasValue := a.tensor("value")
	if hasValue && numel(v.shape) != 1 {
		fail("attribute \"value\" has shape %v, want one value", v.shape)
	}
	n := b.checkConst(shape, hasValue && v.isInt)
	if hasValue && v.isInt {
		t := &tens{shape: shape, i: make([]int64, n), isInt: true}
		for k := range t.i {
			t.i[k] = v.i[0]
		}
		return constVal(t)
	}
	t := &tens{shape: shape, f: make([]float32, n)}
	if hasValue {
		for k := range t.f {
			t.f[k] = v.f[0]
		}
	}
	return constVal(t)
}

func rangeOp(b *builder, _ *attrs, ins []*value) *value {
	st, li, de := constant(ins, 0, "start"), constant(ins, 1, "limit"), constant(ins, 2, "delta")
	for k, t := range []*tens{st, li, de} {
		if numel(t.shape) != 1 {
			fail("input %d has shape %v, want a scalar", k, t.shape)
		}
	}
	if st.isInt {
		s, l, d := st.ints()[0], li.ints()[0], de.ints()[0]
		if d == 0 {
			fail("delta is 0")
		}
		// The count, in uint64 arithmetic: l-s may overflow an int64.
		var cnt uint64
		switch {
		case d > 0 && l > s:
			cnt = (uint64(l)-uint64(s)-1)/uint64(d) + 1
		case d < 0 && l < s:
			cnt = (uint64(s)-uint64(l)-1)/uint64(-d) + 1
		}
		if cnt > uint64(b.p.opt.MaxElements) {
			b.overLimit("range(%d, %d, %d) has %d elements, more than the limit of %d per tensor", s, l, d, cnt, b.p.opt.MaxElements)
		}
		out := make([]int64, cnt)
		for k := range out {
			out[k] = s + int64(k)*d
		}
		return constVal(&tens{shape: []int{len(out)}, i: out, isInt: true})
	}
	s, l, d := st.floats()[0], li.floats()[0], de.floats()[0]
	if d == 0 {
		fail("delta is 0")
	}
	c := math.Ceil(float64((l - s) / d))
	if !(c <= float64(b.p.opt.MaxElements)) {
		b.overLimit("range(%g, %g, %g) has %g elements, more than the limit of %d per tensor", s, l, d, c, b.p.opt.MaxElements)
	}
	cnt := max(0, int(c))
	out := make([]float32, cnt)
	for k := range out {
		out[k] = s + float32(k)*d
	}
	return constVal(&tens{shape: []int{cnt}, f: out})
}

func constantOp(_ *builder, a *attrs, _ []*value) *value {
	if a.has("sparse_value") {
		a.get("sparse_value")
		fail("attribute \"sparse_value\" is not supported")
	}
	if t, ok := a.tensor("value"); ok {
		return constVal(t)
	}
	if a.has("value_float") {
		return constVal(&tens{shape: []int{}, f: []float32{a.float("value_float", 0)}})
	}
	if a.has("value_floats") {
		f := a.floats("value_floats", nil)
		return constVal(&tens{shape: []int{len(f)}, f: f})
	}
	if a.has("value_int") {
		return constVal(&tens{shape: []int{}, i: []int64{a.int("value_int", 0)}, isInt: true})
	}
	if a.has("value_ints") {
		v := a.ints("value_ints", nil)
		return constVal(&tens{shape: []int{len(v)}, i: v, isInt: true})
	}
	fail("no value attribute")
	return nil
}

// ONNX TensorProto data types handled by Cast.
const (
	dtFloat = 1
	dtInt32 = 6
	dtInt64 = 7
	dtBool  = 9
	dtDbl   = 11
)

func castOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "input")
	to := a.int("to", 0)
	a.ignore("saturate")
	toFloat := to == dtFloat || to == dtDbl
	toInt := to == dtInt32 || to == dtInt64 || to == dtBool
	if !toFloat && !toInt {
		fail("attribute \"to\" = %d: only float, double, int32, int64 and bool are supported", to)
	}
	if x.c == nil {
		if toFloat {
			return x
		}
		// Run-time integers are float32 values (exact up to 2**24):
		// truncated towards zero, or 0/1 for bool.
		return b.unaryOp(x, func(v float32) float32 {
			if to == dtBool {
				return b2f(v != 0)
			}
			return float32(math.Trunc(float64(v)))
		}, false)
	}
	if toFloat {
		return constVal(&tens{shape: x.shape, f: x.c.floats()})
	}
	v := x.c.ints()
	if to == dtBool {
		v = slices.Clone(v)
		for k := range v {
			if v[k] != 0 {
				v[k] = 1
			}
		}
	}
	return constVal(&tens{shape: x.shape, i: v, isInt: true})
}

func transposeOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	r := len(x.shape)
	perm64 := a.ints("perm", nil)
	perm := make([]int, r)
	if perm64 == nil {
		for k := range perm {
			perm[k] = r - 1 - k
		}
	} else {
		if len(perm64) != r {
			fail("attribute \"perm\" %v does not match rank %d", perm64, r)
		}
		seen := make([]bool, r)
		for k, p := range perm64 {
			if p < 0 || int(p) >= r || seen[p] {
				fail("attribute \"perm\" %v is not a permutation", perm64)
			}
			seen[p] = true
			perm[k] = int(p)
		}
	}
	shape := make([]int, r)
	for k, p := range perm {
		shape[k] = x.shape[p]
	}
	if x.c != nil && x.c.isInt {
		out := make([]int64, numel(shape))
		transpose(out, x.c.i, x.shape, perm)
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	xs := x.shape
	return b.onDevice(b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		transpose(out, ins[0], xs, perm)
	}), devTranspose{xs, perm})
}

// transposePerImage: Transpose keeps each image a block when it keeps the
// batch axis first.
func transposePerImage(b *builder, a *attrs, ins, outs []*value) bool {
	perm := a.ints("perm", nil)
	return batchedFirst(b, a, ins, outs) && (len(ins[0].shape) == 1 || (len(perm) > 0 && perm[0] == 0))
}

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

func gatherOp(b *builder, a *attrs, ins []*value) *value {
	x, idx := need(ins, 0, "data"), constant(ins, 1, "indices")
	r := len(x.shape)
	ax, err := normAxis(a.int("axis", 0), r)
	if err != nil {
		fail("%v", err)
	}
	raw := idx.ints()
	ids := make([]int, len(raw))
	for k, v := range raw {
		if v < 0 {
			v += int64(x.shape[ax])
		}
		if v < 0 || int(v) >= x.shape[ax] {
			fail("index %d out of range for axis %d of shape %v", raw[k], ax, x.shape)
		}
		ids[k] = int(v)
	}
	shape := append(append(slices.Clone(x.shape[:ax]), idx.shape...), x.shape[ax+1:]...)
	b.checkShape(shape)
	xs := x.shape
	if x.c != nil && x.c.isInt {
		out := make([]int64, numel(shape))
		gather(out, x.c.i, xs, ax, ids)
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	return b.onDevice(b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		gather(out, ins[0], xs, ax, ids)
	}), devTake{xs, ax, ids})
}

// mapsOp applies gatherAxes with per-axis maps (int or float input).
func (b *builder) mapsOp(x *value, maps [][]int, fill float32) *value {
	shape := make([]int, len(maps))
	for k, m := range maps {
		shape[k] = len(m)
	}
	b.checkShape(shape)
	xs := x.shape
	if x.c != nil && x.c.isInt {
		out := make([]int64, numel(shape))
		gatherAxes(out, x.c.i, xs, maps, int64(fill))
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	return b.onDevice(b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		gatherAxes(out, ins[0], xs, maps, fill)
	}), devGather{xs, maps, fill})
}

func identityMaps(shape []int) [][]int {
	maps := make([][]int, len(shape))
	for k, d := range shape {
		maps[k] = make([]int, d)
		for i := range maps[k] {
			maps[k][i] = i
		}
	}
	return maps
}

func sliceOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	r := len(x.shape)
	var starts, ends, axes, steps []int64
	if b.p.opset < 10 {
		starts, ends, axes = a.ints("starts", nil), a.ints("ends", nil), a.ints("axes", nil)
	} else {
		starts, ends = constant(ins, 1, "starts").ints(), constant(ins, 2, "ends").ints()
		if opt(ins, 3) != nil {
			axes = constant(ins, 3, "axes").ints()
		}
		if opt(ins, 4) != nil {
			steps = constant(ins, 4, "steps").ints()
		}
	}
	if len(starts) != len(ends) {
		fail("starts %v and ends %v differ in length", starts, ends)
	}
	if axes == nil {
		for k := range starts {
			axes = append(axes, int64(k))
		}
	}
	if steps == nil {
		steps = make([]int64, len(starts))
		for k := range steps {
			steps[k] = 1
		}
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		fail("starts, ends, axes and steps differ in length")
	}
	maps := identityMaps(x.shape)
	for k := range starts {
		ax, err := normAxis(axes[k], r)
		if err != nil {
			fail("%v", err)
		}
		d := int64(x.shape[ax])
		st, en, step := starts[k], ends[k], steps[k]
		if step == 0 {
			fail("step 0 on axis %d", ax)
		}
		if st < 0 {
			st += d
		}
		if en < 0 {
			en += d
		}
		if step > 0 {
			st, en = max(0, min(st, d)), max(0, min(en, d))
		} else {
			st, en = max(0, min(st, d-1)), max(-1, min(en, d-1))
		}
		// The count first, in uint64 arithmetic: st+step may overflow.
		var cnt uint64
		switch {
		case step > 0 && en > st:
			cnt = (uint64(en-st)-1)/uint64(step) + 1
		case step < 0 && st > en:
			cnt = (uint64(st-en)-1)/uint64(-step) + 1
		}
		m := make([]int, cnt)
		for i := range m {
			m[i] = int(st + int64(i)*step)
		}
		maps[ax] = m
	}
	return b.mapsOp(x, maps, 0)
}

func splitOp(b *builder, a *attrs, ins []*value) []*value {
	nout := len(b.node().outputs)
	x := need(ins, 0, "input")
	ax, err := normAxis(a.int("axis", 0), len(x.shape))
	if err != nil {
		fail("%v", err)
	}
	var split []int64
	if b.p.opset >= 13 {
		if opt(ins, 1) != nil {
			split = constant(ins, 1, "split").ints()
		}
		if b.p.opset >= 18 {
			if no := a.int("num_outputs", 0); no != 0 && int(no) != nout {
				fail("attribute \"num_outputs\" = %d but the node has %d outputs", no, nout)
			}
		}
	} else {
		split = a.ints("split", nil)
	}
	d := x.shape[ax]
	if nout == 0 {
		fail("no outputs")
	}
	if split == nil {
		per := (d + nout - 1) / nout
		for k := 0; k < nout; k++ {
			split = append(split, int64(min(per, d-k*per)))
		}
	}
	if len(split) != nout {
		fail("split %v has %d parts, the node has %d outputs", split, len(split), nout)
	}
	sum := int64(0)
	for _, s := range split {
		if s < 0 {
			fail("negative split size in %v", split)
		}
		if sum += min(s, int64(d)+1); sum > int64(d) {
			fail("split %v sums to more than the size %d of axis %d", split, d, ax)
		}
	}
	if sum != int64(d) {
		fail("split %v sums to %d, axis %d has size %d", split, sum, ax, d)
	}
	var outs []*value
	off := 0
	for _, s := range split {
		maps := identityMaps(x.shape)
		m := make([]int, s)
		for i := range m {
			m[i] = off + i
		}
		maps[ax] = m
		off += int(s)
		outs = append(outs, b.mapsOp(x, maps, 0))
	}
	return outs
}

func padOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	r := len(x.shape)
	mode := a.str("mode", "constant")
	var pads []int64
	var value float32
	switch {
	case b.p.opset < 2:
		pads, value = a.ints("paddings", nil), a.float("value", 0)
	case b.p.opset < 11:
		pads, value = a.ints("pads", nil), a.float("value", 0)
	default:
		pads = constant(ins, 1, "pads").ints()
		if opt(ins, 2) != nil {
			cv := constant(ins, 2, "constant_value")
			if len(cv.floats()) > 0 {
				value = cv.floats()[0]
			}
		}
		if opt(ins, 3) != nil {
			axes := constant(ins, 3, "axes").ints()
			if len(pads) != 2*len(axes) {
				fail("pads %v: want %d values for axes %v", pads, 2*len(axes), axes)
			}
			full := make([]int64, 2*r)
			for k, ax := range axes {
				a, err := normAxis(ax, r)
				if err != nil {
					fail("%v", err)
				}
				full[a], full[a+r] = pads[k], pads[k+len(axes)]
			}
			pads = full
		}
	}
	if len(pads) != 2*r {
		fail("pads %v: want %d values for rank %d", pads, 2*r, r)
	}
	shape := make([]int, r)
	for ax := range shape {
		lim := b.p.opt.MaxElements
		if pb, pe := pads[ax], pads[ax+r]; pb < -lim || pb > lim || pe < -lim || pe > lim {
			b.overLimit("pads %v: more than %d on axis %d", pads, lim, ax)
		}
		shape[ax] = x.shape[ax] + int(pads[ax]) + int(pads[ax+r])
		if shape[ax] < 0 {
			fail("pads %v make axis %d negative", pads, ax)
		}
		if mode != "constant" && x.shape[ax] == 0 && shape[ax] > 0 {
			fail("mode %q pads an empty axis %d", mode, ax)
		}
	}
	b.checkShape(shape)
	maps := make([][]int, r)
	for ax := 0; ax < r; ax++ {
		d := x.shape[ax]
		pb, n := int(pads[ax]), shape[ax]
		m := make([]int, n)
		for i := range m {
			s := i - pb
			if s < 0 || s >= d {
				switch mode {
				case "constant":
					s = -1
				case "edge":
					s = max(0, min(s, d-1))
				case "reflect":
					if d == 1 {
						s = 0
						break
					}
					// Reflection has period 2(d-1).
					period := 2 * (d - 1)
					if s = s % period; s < 0 {
						s += period
					}
					if s >= d {
						s = period - s
					}
				default:
					fail("attribute \"mode\" = %q: only constant, reflect and edge are supported", mode)
				}
			}
			m[i] = s
		}
		maps[ax] = m
	}
	return b.mapsOp(x, maps, value)
}

func expandOp(b *builder, _ *attrs, ins []*value) *value {
	x, target := need(ins, 0, "input"), constant(ins, 1, "shape").ints()
	ts := make([]int, len(target))
	for k, d := range target {
		ts[k] = int(d)
	}
	for _, d := range target {
		if d < 0 {
			fail("negative dimension in shape %v", target)
		}
	}
	shape, err := broadcastShape(x.shape, ts)
	if err != nil {
		fail("%v", err)
	}
	b.checkShape(shape)
	in := make([]int, len(shape))
	for k := range in {
		in[k] = 1
	}
	copy(in[len(shape)-len(x.shape):], x.shape)
	maps := make([][]int, len(shape))
	for k, d := range shape {
		maps[k] = make([]int, d)
		if in[k] != 1 {
			for i := range maps[k] {
				maps[k][i] = i
			}
		}
	}
	return b.mapsOp(alias(x, in), maps, 0)
}
