package nn

import "slices"

// Gather and the per-axis index maps (gatherAxes) that Gather, Slice,
// Split, Pad, Expand, Resize and the layout operators copy through.

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
