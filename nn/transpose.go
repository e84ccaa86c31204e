package nn

// Transpose: a copy that permutes the axes.

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
