package nn

import "github.com/amt-dev/amt/nn/internal/shapes"

// Pad and Expand: copies that grow a value, by a border or by
// broadcasting.

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
	shape, err := shapes.Broadcast(x.shape, ts)
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
