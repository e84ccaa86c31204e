package nn

// Slice and Split: copies that select a part of a value.

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
