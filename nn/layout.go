package nn

import (
	"slices"

	"github.com/amt-dev/amt/nn/internal/shapes"
)

// More operators that move or select elements (see transpose.go,
// concat.go, gather.go, slice.go and pad.go for the others): Tile,
// DepthToSpace, SpaceToDepth, ScatterND, and Size, which folds.

// tileOp is Tile: the input repeated repeats[k] times along each axis k.
func tileOp(b *builder, _ *attrs, ins []*value) *value {
	x, reps := need(ins, 0, "input"), constant(ins, 1, "repeats").ints()
	if len(reps) != len(x.shape) {
		fail("repeats %v: want %d values for rank %d", reps, len(x.shape), len(x.shape))
	}
	out := make([]int, len(reps))
	for k, d := range x.shape {
		if reps[k] < 0 {
			fail("negative repeat in %v", reps)
		}
		out[k] = d * int(min(reps[k], 1<<40))
	}
	b.checkShape(out)
	maps := make([][]int, len(x.shape))
	for k, d := range x.shape {
		maps[k] = make([]int, d*int(reps[k]))
		for i := range maps[k] {
			maps[k][i] = i % d
		}
	}
	return b.mapsOp(x, maps, 0)
}

// tilePerImage: Tile keeps images apart when it does not repeat the batch
// axis.
func tilePerImage(b *builder, a *attrs, ins, outs []*value) bool {
	return batchedFirst(b, a, ins, outs) && ins[1].c.ints()[0] == 1
}

// permuteOp emits x (shape xs) viewed as shape vs, transposed by perm, as
// a value of shape out: the reshape–transpose–reshape of DepthToSpace and
// SpaceToDepth.
func (b *builder) permuteOp(x *value, vs []int, perm []int, out []int) *value {
	if x.c != nil && x.c.isInt {
		o := make([]int64, numel(out))
		transpose(o, x.c.i, vs, perm)
		return constVal(&tens{shape: out, i: o, isInt: true})
	}
	return b.emit(out, []*value{x}, func(dst []float32, ins [][]float32) {
		transpose(dst, ins[0], vs, perm)
	})
}

// depthToSpaceOp is DepthToSpace ([N,C,H,W] → [N,C/b²,H·b,W·b]) in mode
// DCR (depth-column-row, the default) or CRD (PyTorch's PixelShuffle).
func depthToSpaceOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "input")
	bs := int(a.int("blocksize", 0))
	mode := a.str("mode", "DCR")
	if len(x.shape) != 4 {
		fail("input shape %v: want rank 4", x.shape)
	}
	n, c, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	if bs <= 0 || bs > c || c%(bs*bs) != 0 { // bs ≤ c: bs² cannot overflow
		fail("attribute \"blocksize\" = %d does not divide the %d channels into blocks", bs, c)
	}
	out := []int{n, c / (bs * bs), h * bs, w * bs}
	switch mode {
	case "DCR":
		return b.permuteOp(x, []int{n, bs, bs, c / (bs * bs), h, w}, []int{0, 3, 4, 1, 5, 2}, out)
	case "CRD":
		return b.permuteOp(x, []int{n, c / (bs * bs), bs, bs, h, w}, []int{0, 1, 4, 2, 5, 3}, out)
	}
	fail("attribute \"mode\" = %q: want DCR or CRD", mode)
	return nil
}

// spaceToDepthOp is SpaceToDepth ([N,C,H,W] → [N,C·b²,H/b,W/b]).
func spaceToDepthOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "input")
	bs := int(a.int("blocksize", 0))
	if len(x.shape) != 4 {
		fail("input shape %v: want rank 4", x.shape)
	}
	n, c, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	if bs <= 0 || h%bs != 0 || w%bs != 0 {
		fail("attribute \"blocksize\" = %d does not divide the spatial size %dx%d", bs, h, w)
	}
	return b.permuteOp(x, []int{n, c, h / bs, bs, w / bs, bs}, []int{0, 3, 5, 1, 2, 4}, []int{n, c * bs * bs, h / bs, w / bs})
}

// sizeOp is Size: the number of elements, folded.
func sizeOp(_ *builder, _ *attrs, ins []*value) *value {
	return constVal(&tens{shape: []int{}, i: []int64{int64(numel(need(ins, 0, "data").shape))}, isInt: true})
}

// scatterNDOp is ScatterND with constant indices: a copy of data in which
// the slices the index tuples address are replaced by (reduction none), or
// combined with (add, mul, max, min), the slices of updates, in order.
func scatterNDOp(b *builder, a *attrs, ins []*value) *value {
	data, upd := need(ins, 0, "data"), need(ins, 2, "updates")
	idx := constant(ins, 1, "indices")
	red := a.str("reduction", "none")
	var f func(x, y float64) float64
	switch red {
	case "none":
		f = func(_, y float64) float64 { return y }
	case "add":
		f = func(x, y float64) float64 { return x + y }
	case "mul":
		f = func(x, y float64) float64 { return x * y }
	case "max":
		f = func(x, y float64) float64 { return max(x, y) }
	case "min":
		f = func(x, y float64) float64 { return min(x, y) }
	default:
		fail("attribute \"reduction\" = %q is not supported", red)
	}
	r, q := len(data.shape), len(idx.shape)
	if q == 0 {
		fail("indices must have rank ≥ 1")
	}
	k := idx.shape[q-1]
	if k > r {
		fail("indices address %d axes of a rank-%d tensor", k, r)
	}
	want := append(slices.Clone(idx.shape[:q-1]), data.shape[k:]...)
	if !slices.Equal(upd.shape, want) {
		fail("updates have shape %v, want %v", upd.shape, want)
	}
	slice := numel(data.shape[k:])
	st := shapes.Strides(data.shape)
	raw := idx.ints()
	offs := make([]int, len(raw)/max(k, 1))
	if k == 0 {
		offs = make([]int, numel(idx.shape[:q-1]))
	}
	for t := range offs {
		o := 0
		for j := 0; j < k; j++ {
			v := raw[t*k+j]
			if v < 0 {
				v += int64(data.shape[j])
			}
			if v < 0 || v >= int64(data.shape[j]) {
				fail("index %v out of range for shape %v", raw[t*k:(t+1)*k], data.shape)
			}
			o += int(v) * st[j]
		}
		offs[t] = o
	}
	if data.c != nil && upd.c != nil && (data.c.isInt || upd.c.isInt) {
		if !data.c.isInt || !upd.c.isInt {
			fail("data and updates differ in type (integer and float)")
		}
		out := slices.Clone(data.c.i)
		for t, o := range offs {
			for j, u := range upd.c.i[t*slice : (t+1)*slice] {
				out[o+j] = int64(f(float64(out[o+j]), float64(u)))
			}
		}
		return constVal(&tens{shape: data.shape, i: out, isInt: true})
	}
	return b.emit(data.shape, []*value{data, upd}, func(out []float32, ins [][]float32) {
		copy(out, ins[0])
		for t, o := range offs {
			for j, u := range ins[1][t*slice : (t+1)*slice] {
				out[o+j] = float32(f(float64(out[o+j]), float64(u)))
			}
		}
	})
}

// Per-image rules of the data-movement operators (pad.go, slice.go,
// gather.go, …).

// expandPerImage: Expand keeps images apart when the input is batched and
// of the output's rank (its batch axis then stays axis 0).
func expandPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	return batchedFirst(b, a, ins, outs) && len(ins[0].shape) == len(outs[0].shape)
}

// slicePerImage: Slice keeps images apart when it does not slice the
// batch axis: no entry for axis 0, or one with step 1 keeping its size
// (the output being batched, as builder.perImage checks).
func slicePerImage(b *builder, a *attrs, ins, outs []*value) bool {
	if !batchedFirst(b, a, ins, outs) {
		return false
	}
	r := len(ins[0].shape)
	var axes, steps []int64
	var n int
	if b.p.opset < 10 {
		axes, n = a.ints("axes", nil), len(a.ints("starts", nil))
	} else {
		n = len(ins[1].c.ints())
		if opt(ins, 3) != nil {
			axes = ins[3].c.ints()
		}
		if opt(ins, 4) != nil {
			steps = ins[4].c.ints()
		}
	}
	for k := 0; k < n; k++ {
		ax := int64(k)
		if axes != nil {
			ax = axes[k]
		}
		if ax == 0 || ax == int64(-r) {
			if steps != nil && steps[k] != 1 {
				return false
			}
		}
	}
	return true
}

// padPerImage: Pad keeps images apart when it pads nothing along the
// batch axis.
func padPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	if !batchedFirst(b, a, ins, outs) {
		return false
	}
	r := len(ins[0].shape)
	var pads []int64
	switch {
	case b.p.opset < 2:
		pads = a.ints("paddings", nil)
	case b.p.opset < 11:
		pads = a.ints("pads", nil)
	default:
		pads = ins[1].c.ints()
		if opt(ins, 3) != nil {
			for k, ax := range ins[3].c.ints() {
				if (ax == 0 || ax == int64(-r)) && (pads[k] != 0 || pads[k+len(pads)/2] != 0) {
					return false
				}
			}
			return true
		}
	}
	return len(pads) == 2*r && pads[0] == 0 && pads[r] == 0
}
