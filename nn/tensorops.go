package nn

import (
	"fmt"
	"slices"

	"github.com/amt-dev/amt/nn/internal/shapes"
	"github.com/amt-dev/amt/nn/kernels"
)

// number is the element type of the tensors the engine handles: float32
// for data, int64 for shapes and indices folded at load time.
type number interface{ ~float32 | ~int64 }

// numel returns the number of elements of a tensor of shape s.
func numel(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// bstrides returns the strides with which a tensor of shape s is read when
// broadcast to shape out (0 along broadcast dimensions).
func bstrides(s []int, out []int) []int {
	st := make([]int, len(out))
	src := shapes.Strides(s)
	off := len(out) - len(s)
	for i := range s {
		if s[i] != 1 || out[off+i] == 1 {
			st[off+i] = src[i]
		}
	}
	return st
}

// bcast computes out = f(a, b) elementwise with numpy broadcasting;
// out has shape os = shapes.Broadcast(as, bs).
func bcast[T number](out []T, os []int, a []T, as []int, b []T, bs []int, f func(x, y T) T) {
	if len(out) == 0 {
		return
	}
	switch {
	case len(a) == len(out) && len(b) == len(out):
		for i := range out {
			out[i] = f(a[i], b[i])
		}
		return
	case len(a) == len(out) && len(b) == 1:
		y := b[0]
		for i := range out {
			out[i] = f(a[i], y)
		}
		return
	case len(a) == 1 && len(b) == len(out):
		x := a[0]
		for i := range out {
			out[i] = f(x, b[i])
		}
		return
	}
	nd := len(os)
	st, idx, off := bcastRowStart(os, 0, as, bs)
	inner := os[nd-1]
	ia, ib := st[0][nd-1], st[1][nd-1]
	for o := 0; o < len(out); o += inner {
		dst := out[o : o+inner]
		pa, pb := off[0], off[1]
		for j := range dst {
			dst[j] = f(a[pa], b[pb])
			pa += ia
			pb += ib
		}
		nextRow(idx, os, off, st...)
	}
}

// bcastRowStart prepares the reading of operands of shapes ss broadcast to
// shape os a row (of the last axis) at a time, from row r0 on: it returns
// their strides (bstrides), the index of row r0 over the axes before the
// last, and each operand's offset at that row, for nextRow to move on.
func bcastRowStart(os []int, r0 int, ss ...[]int) (st [][]int, idx, off []int) {
	nd := len(os)
	st = make([][]int, len(ss))
	for k, s := range ss {
		st[k] = bstrides(s, os)
	}
	idx = make([]int, nd)
	off = make([]int, len(ss))
	for d, r := nd-2, r0; d >= 0; d-- {
		idx[d] = r % os[d]
		r /= os[d]
		for k, s := range st {
			off[k] += idx[d] * s[d]
		}
	}
	return st, idx, off
}

// nextRow moves idx, the index over the axes before the last of a row of
// an output of shape os, to the next row (row-major), and with it each
// offset off[k] into an operand read with strides st[k].
func nextRow(idx, os, off []int, st ...[]int) {
	for d := len(os) - 2; d >= 0; d-- {
		idx[d]++
		for k, s := range st {
			off[k] += s[d]
		}
		if idx[d] < os[d] {
			return
		}
		for k, s := range st {
			off[k] -= s[d] * os[d]
		}
		idx[d] = 0
	}
}

// gatherAxes fills out, of shape (len(maps[0]), …, len(maps[k-1])), from
// in of shape is: out[i0,…,ik-1] = in[maps[0][i0],…,maps[k-1][ik-1]], or
// fill where any map entry is negative. It implements Slice, Pad and
// nearest-neighbour Resize.
func gatherAxes[T number](out, in []T, is []int, maps [][]int, fill T) {
	nd := len(is)
	if nd == 0 {
		out[0] = in[0]
		return
	}
	st := shapes.Strides(is)
	last := maps[nd-1]
	inner := len(last)
	if inner == 0 || len(out) == 0 {
		return
	}
	// lastRun ≥ 0: the last axis's map is a contiguous run of the input's
	// last axis starting there, copied row by row.
	lastRun := -1
	if st[nd-1] == 1 && last[0] >= 0 {
		lastRun = last[0]
		for j, m := range last {
			if m != lastRun+j {
				lastRun = -1
				break
			}
		}
	}
	idx := make([]int, nd)
	for o := 0; o < len(out); o += inner {
		base := 0
		valid := true
		for d := 0; d < nd-1; d++ {
			m := maps[d][idx[d]]
			if m < 0 {
				valid = false
				break
			}
			base += m * st[d]
		}
		dst := out[o : o+inner]
		if !valid {
			for j := range dst {
				dst[j] = fill
			}
		} else if lastRun >= 0 {
			copy(dst, in[base+lastRun:])
		} else {
			row := in[base:]
			ls := st[nd-1]
			for j, m := range last {
				if m < 0 {
					dst[j] = fill
				} else {
					dst[j] = row[m*ls]
				}
			}
		}
		for d := nd - 2; d >= 0; d-- {
			idx[d]++
			if idx[d] < len(maps[d]) {
				break
			}
			idx[d] = 0
		}
	}
}

// transpose permutes the axes of in (shape is) into out: output axis i is
// input axis perm[i]. Axes of size 1 are dropped and axes that stay
// neighbours merged first; what remains is a copy, a batch of 2-D
// transposes (done in cache-sized tiles: NCHW↔NHWC, [L,N,E]→[N,L,E]-like
// swaps with a contiguous inner run copied whole) or a general permutation.
func transpose[T number](out, in []T, is []int, perm []int) {
	ms, mp := mergeAxes(is, perm)
	switch {
	case len(ms) <= 1:
		copy(out, in)
		return
	case len(ms) == 2 && mp[0] == 1:
		transpose2D(out, in, 1, ms[0], ms[1], 1)
		return
	case len(ms) == 3 && mp[0] == 0 && mp[1] == 2 && mp[2] == 1:
		transpose2D(out, in, ms[0], ms[1], ms[2], 1)
		return
	case len(ms) == 3 && mp[0] == 1 && mp[1] == 0 && mp[2] == 2:
		transpose2D(out, in, 1, ms[0], ms[1], ms[2])
		return
	case len(ms) == 4 && mp[0] == 0 && mp[1] == 2 && mp[2] == 1 && mp[3] == 3:
		transpose2D(out, in, ms[0], ms[1], ms[2], ms[3])
		return
	}
	transposeGeneral(out, in, ms, mp)
}

// mergeAxes returns shape is and permutation perm with the axes of size 1
// dropped and the input axes that stay adjacent and in order in the output
// merged into one.
func mergeAxes(is, perm []int) (ms, mp []int) {
	// Input axes kept (size > 1), renumbered.
	keep := make([]int, len(is))
	n := 0
	for k, d := range is {
		keep[k] = -1
		if d != 1 {
			keep[k] = n
			n++
		}
	}
	var p []int
	for _, a := range perm {
		if keep[a] >= 0 {
			p = append(p, keep[a])
		}
	}
	var s []int
	for _, d := range is {
		if d != 1 {
			s = append(s, d)
		}
	}
	// Runs of consecutive input axes in the output order.
	var runs [][2]int // input axes [first, last] per run, in output order
	for k, a := range p {
		if k > 0 && a == runs[len(runs)-1][1]+1 {
			runs[len(runs)-1][1] = a
			continue
		}
		runs = append(runs, [2]int{a, a})
	}
	// Renumber the runs in input order.
	order := make([]int, len(runs))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(x, y int) int { return runs[x][0] - runs[y][0] })
	ms = make([]int, len(runs))
	for rank, k := range order {
		ms[rank] = numel(s[runs[k][0] : runs[k][1]+1])
	}
	mp = make([]int, len(runs))
	for rank, k := range order {
		mp[k] = rank
	}
	return ms, mp
}

// transpose2D sets out[b, j, i, r] = in[b, i, j, r] for in of shape
// [nb, ni, nj, inner], in tiles; float32 matrices (inner 1) with
// kernels.Transpose (8×8 blocks in registers, split over the cores).
func transpose2D[T number](out, in []T, nb, ni, nj, inner int) {
	const tile = 16
	blk := ni * nj * inner
	if o, ok := any(out).([]float32); ok && inner == 1 {
		i := any(in).([]float32)
		for b := 0; b < nb; b++ {
			kernels.Transpose(o[b*blk:(b+1)*blk], i[b*blk:(b+1)*blk], ni, nj)
		}
		return
	}
	for b := 0; b < nb; b++ {
		src, dst := in[b*blk:(b+1)*blk], out[b*blk:(b+1)*blk]
		for i0 := 0; i0 < ni; i0 += tile {
			i1 := min(i0+tile, ni)
			for j0 := 0; j0 < nj; j0 += tile {
				j1 := min(j0+tile, nj)
				if inner == 1 {
					for j := j0; j < j1; j++ {
						row := dst[j*ni : (j+1)*ni]
						for i := i0; i < i1; i++ {
							row[i] = src[i*nj+j]
						}
					}
					continue
				}
				for j := j0; j < j1; j++ {
					for i := i0; i < i1; i++ {
						copy(dst[(j*ni+i)*inner:(j*ni+i+1)*inner], src[(i*nj+j)*inner:])
					}
				}
			}
		}
	}
}

// transposeGeneral is transpose for any permutation.
func transposeGeneral[T number](out, in []T, is []int, perm []int) {
	nd := len(is)
	if nd == 0 || len(out) == 0 {
		copy(out, in)
		return
	}
	st := shapes.Strides(is)
	os := make([]int, nd)
	ps := make([]int, nd)
	for i, p := range perm {
		os[i] = is[p]
		ps[i] = st[p]
	}
	inner, istr := os[nd-1], ps[nd-1]
	idx := make([]int, nd)
	off := []int{0}
	for o := 0; o < len(out); o += inner {
		p := off[0]
		for j := 0; j < inner; j++ {
			out[o+j] = in[p]
			p += istr
		}
		nextRow(idx, os, off, ps)
	}
}

// concat joins ins (shapes ss) along axis into out.
func concat[T number](out []T, ins [][]T, ss [][]int, axis int) {
	outer := numel(ss[0][:axis])
	o := 0
	for i := 0; i < outer; i++ {
		for k, in := range ins {
			blk := numel(ss[k][axis:])
			o += copy(out[o:o+blk], in[i*blk:(i+1)*blk])
		}
	}
}

// gather implements ONNX Gather along axis of data (shape ds) with
// non-negative, in-range indices idx.
func gather[T number](out, data []T, ds []int, axis int, idx []int) {
	outer := numel(ds[:axis])
	n := ds[axis]
	inner := numel(ds[axis+1:])
	o := 0
	for i := 0; i < outer; i++ {
		for _, j := range idx {
			o += copy(out[o:o+inner], data[(i*n+j)*inner:(i*n+j+1)*inner])
		}
	}
}

// normAxis resolves a possibly negative axis of a rank-r tensor.
func normAxis(axis int64, r int) (int, error) {
	a := int(axis)
	if a < 0 {
		a += r
	}
	if a < 0 || a >= r {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, r)
	}
	return a, nil
}

// squeezeShape removes the given axes (all size-1 axes when axes is nil).
func squeezeShape(s []int, axes []int64) ([]int, error) {
	drop := make([]bool, len(s))
	if axes == nil {
		for i, d := range s {
			drop[i] = d == 1
		}
	}
	for _, a := range axes {
		ax, err := normAxis(a, len(s))
		if err != nil {
			return nil, err
		}
		if s[ax] != 1 {
			return nil, fmt.Errorf("cannot squeeze axis %d of shape %v: size is %d, not 1", a, s, s[ax])
		}
		drop[ax] = true
	}
	var out []int
	for i, d := range s {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return out, nil
}

// unsqueezeShape inserts size-1 axes at the given positions of the output.
func unsqueezeShape(s []int, axes []int64) ([]int, error) {
	r := len(s) + len(axes)
	ins := make([]bool, r)
	for _, a := range axes {
		ax, err := normAxis(a, r)
		if err != nil {
			return nil, err
		}
		if ins[ax] {
			return nil, fmt.Errorf("axis %d repeated in %v", a, axes)
		}
		ins[ax] = true
	}
	out := make([]int, 0, r)
	j := 0
	for i := 0; i < r; i++ {
		if ins[i] {
			out = append(out, 1)
		} else {
			out = append(out, s[j])
			j++
		}
	}
	return out, nil
}

// reshapeShape resolves an ONNX Reshape target (0 copies the input
// dimension unless allowZero, -1 is inferred).
func reshapeShape(in []int, target []int64, allowZero bool) ([]int, error) {
	out := make([]int, len(target))
	infer := -1
	known := 1
	for i, t := range target {
		switch {
		case t == 0 && !allowZero:
			if i >= len(in) {
				return nil, fmt.Errorf("target %v copies dimension %d of input shape %v, which has none", target, i, in)
			}
			out[i] = in[i]
		case t == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("target %v has more than one -1", target)
			}
			infer = i
			continue
		case t < 0:
			return nil, fmt.Errorf("target %v has invalid dimension %d", target, t)
		default:
			out[i] = int(t)
		}
		known *= out[i]
	}
	total := numel(in)
	if infer >= 0 {
		if known == 0 || total%known != 0 {
			return nil, fmt.Errorf("cannot reshape %v (%d elements) to %v", in, total, target)
		}
		out[infer] = total / known
	}
	if numel(out) != total {
		return nil, fmt.Errorf("cannot reshape %v (%d elements) to %v (%d elements)", in, total, out, numel(out))
	}
	return out, nil
}
