package nn

import "slices"

// convAnyOp is Conv: 2-D (a depthwise one of stride 1 or 2 with
// depthwiseOp, the others with convOp), or 1-D (an input [N,C,L], as in
// ECA attention or audio front ends) run as a 2-D convolution of height 1.
func convAnyOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	switch len(x.shape) {
	case 4:
		if v, ok := depthwiseOp(b, a, ins); ok {
			return v
		}
		return convOp(b, a, ins)
	case 3:
	default:
		fail("only 1-D and 2-D convolution is supported (input %v)", x.shape)
	}
	w := constant(ins, 1, "W")
	if len(w.shape) != 3 {
		fail("1-D convolution: weight %v, want rank 3", w.shape)
	}
	// The same node with 2-D attributes; others are passed on unread, so
	// that an unknown one is still reported.
	n2 := *a.n
	n2.attrs = map[string]any{}
	for name, v := range a.n.attrs {
		switch name {
		case "kernel_shape", "strides", "dilations":
			iv := a.ints(name, nil)
			if len(iv) != 1 {
				fail("attribute %q %v: want 1 value for a 1-D convolution", name, iv)
			}
			n2.attrs[name] = []int64{1, iv[0]}
		case "pads":
			p := a.ints(name, nil)
			if len(p) != 2 {
				fail("attribute \"pads\" %v: want 2 values for a 1-D convolution", p)
			}
			n2.attrs[name] = []int64{0, p[0], 0, p[1]}
		case "group", "auto_pad":
			a.get(name)
			n2.attrs[name] = v
		default:
			n2.attrs[name] = v
		}
	}
	ins2 := slices.Clone(ins)
	ins2[0] = alias(x, []int{x.shape[0], x.shape[1], 1, x.shape[2]})
	ins2[1] = constVal(w.withShape([]int{w.shape[0], w.shape[1], 1, w.shape[2]}))
	v := convOp(b, newAttrs(&n2), ins2)
	// Back to 3-D, for the Conv's output and for what it absorbed.
	v3 := alias(v, []int{v.shape[0], v.shape[1], v.shape[3]})
	for name, e := range b.env {
		if e == v {
			b.env[name] = v3
		}
	}
	return v3
}
