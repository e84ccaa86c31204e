package nn

// Aliases: operators that view a value under another shape without
// copying it (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout).

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
