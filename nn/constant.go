package nn

import (
	"math"
	"slices"
)

// Operators computing values known at load time (Shape, Constant,
// ConstantOfShape, Range, Cast): they only fold.

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
