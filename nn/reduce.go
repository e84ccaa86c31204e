package nn

// Reductions.

func reduceMeanOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	r := len(x.shape)
	var axes []int64
	if b.p.opset >= 18 {
		if opt(ins, 1) != nil {
			axes = constant(ins, 1, "axes").ints()
		}
		if a.int("noop_with_empty_axes", 0) != 0 && len(axes) == 0 {
			return x
		}
	} else {
		axes = a.ints("axes", nil)
	}
	keep := a.int("keepdims", 1) != 0
	red := make([]bool, r)
	if len(axes) == 0 {
		for k := range red {
			red[k] = true
		}
	}
	for _, ax := range axes {
		k, err := normAxis(ax, r)
		if err != nil {
			fail("%v", err)
		}
		red[k] = true
	}
	// Move reduced axes last, then average contiguous blocks.
	var perm []int
	for k := 0; k < r; k++ {
		if !red[k] {
			perm = append(perm, k)
		}
	}
	cnt := 1
	for k := 0; k < r; k++ {
		if red[k] {
			perm = append(perm, k)
			cnt *= x.shape[k]
		}
	}
	var shape []int
	for k := 0; k < r; k++ {
		switch {
		case !red[k]:
			shape = append(shape, x.shape[k])
		case keep:
			shape = append(shape, 1)
		}
	}
	xs := x.shape
	tmp := make([]float32, numel(xs))
	return b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		transpose(tmp, ins[0], xs, perm)
		for o := range out {
			var s float32
			for _, v := range tmp[o*cnt : (o+1)*cnt] {
				s += v
			}
			out[o] = s / float32(cnt)
		}
	})
}
