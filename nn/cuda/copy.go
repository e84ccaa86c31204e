//go:build gpu

package cuda

import (
	"fmt"
	"slices"

	"github.com/amt-dev/amt/nn/internal/shapes"
)

// Transpose permutes the axes of src (shape) into dst: output axis i is
// input axis perm[i].
func (d *Device) Transpose(dst, src *Buffer, shape, perm []int) error {
	r := len(shape)
	if len(perm) != r {
		return fmt.Errorf("cuda: Transpose: permutation %v of rank %d", perm, r)
	}
	seen := make([]bool, r)
	for _, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return fmt.Errorf("cuda: Transpose: %v is not a permutation", perm)
		}
		seen[p] = true
	}
	n, err := numel(shape)
	if err != nil {
		return fmt.Errorf("cuda: Transpose: %w", err)
	}
	if err := d.valid("Transpose", src, n); err != nil {
		return err
	}
	if err := d.valid("Transpose", dst, n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	st := shapes.Strides(shape)
	os, ps := make([]int, r), make([]int, r)
	for i, p := range perm {
		os[i], ps[i] = shape[p], st[p]
	}
	cs, cst := collapse(os, ps)
	if len(cs) > maxDims {
		return fmt.Errorf("cuda: Transpose: %v by %v needs %d axes, at most %d are supported", shape, perm, len(cs), maxDims)
	}
	p := permuteParams{X: src.ptr, Y: dst.ptr, N: int32(n), NDim: int32(len(cs))}
	for i := range cs {
		p.Shape[i], p.XStride[i] = int32(cs[i]), int32(cst[0][i])
	}
	grid, block := blocks256(n)
	return launch(d, kPermute, grid, block, &p)
}

// Copy2D copies a rows × cols block: dst[dstOff + r·dstStride + j] =
// src[srcOff + r·srcStride + j].
func (d *Device) Copy2D(dst *Buffer, dstOff, dstStride int, src *Buffer, srcOff, srcStride, rows, cols int) error {
	if rows < 0 || cols < 0 || dstOff < 0 || srcOff < 0 || dstStride < cols || srcStride < cols {
		return fmt.Errorf("cuda: Copy2D: %d×%d block at offsets %d, %d with strides %d, %d", rows, cols, dstOff, srcOff, dstStride, srcStride)
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	if int64(rows)*int64(cols) > maxElems || int64(rows-1)*int64(max(dstStride, srcStride))+int64(max(dstOff, srcOff)+cols) > maxElems {
		return fmt.Errorf("cuda: Copy2D: %d×%d block too large", rows, cols)
	}
	if err := d.valid("Copy2D source", src, srcOff+(rows-1)*srcStride+cols); err != nil {
		return err
	}
	if err := d.valid("Copy2D destination", dst, dstOff+(rows-1)*dstStride+cols); err != nil {
		return err
	}
	p := copy2dParams{X: src.ptr, Y: dst.ptr, Rows: int32(rows), Cols: int32(cols),
		XOff: int32(srcOff), XStride: int32(srcStride), YOff: int32(dstOff), YStride: int32(dstStride)}
	grid, block := blocks256(rows * cols)
	return launch(d, kCopy2d, grid, block, &p)
}

// Concat joins srcs (shapes) along axis into dst, one block copy each.
func (d *Device) Concat(dst *Buffer, srcs []*Buffer, shapes [][]int, axis int) error {
	if len(srcs) == 0 || len(srcs) != len(shapes) {
		return fmt.Errorf("cuda: Concat: %d inputs and %d shapes", len(srcs), len(shapes))
	}
	r := len(shapes[0])
	if axis < 0 || axis >= r {
		return fmt.Errorf("cuda: Concat: axis %d of rank %d", axis, r)
	}
	out := slices.Clone(shapes[0])
	for k, s := range shapes[1:] {
		if len(s) != r {
			return fmt.Errorf("cuda: Concat: input %d has shape %v, input 0 %v", k+1, s, shapes[0])
		}
		for i := range s {
			if i != axis && s[i] != out[i] {
				return fmt.Errorf("cuda: Concat: input %d has shape %v, incompatible with %v along axis %d", k+1, s, shapes[0], i)
			}
		}
		out[axis] += s[axis]
	}
	if _, err := numel(out); err != nil {
		return fmt.Errorf("cuda: Concat: %w", err)
	}
	outer, _ := numel(out[:axis])
	inner, _ := numel(out[axis+1:])
	off := 0
	for k, s := range shapes {
		blk := s[axis] * inner
		if err := d.Copy2D(dst, off, out[axis]*inner, srcs[k], 0, blk, outer, blk); err != nil {
			return err
		}
		off += blk
	}
	return nil
}
