//go:build gpu

package cuda

import (
	"fmt"
	"slices"

	"github.com/amt-dev/amt/nn/kernels"
)

// MaxPool computes for each of planes planes of src (InH×InW) the maximum
// of every window into dst (OutH×OutW per plane), as kernels.MaxPool:
// padding never wins, a NaN in a window gives NaN.
func (d *Device) MaxPool(dst, src *Buffer, planes int, s kernels.PoolShape) error {
	return d.pool("MaxPool", kMaxPool2d, dst, src, planes, s, 0, 0, false)
}

// AvgPool computes windowed means (ONNX AveragePool without dilation):
// the sum of the window's values inside the input divided by their
// number, or, with countIncludePad, by the size of the window clipped to
// the input padded by PadTop/PadLeft and padBottom/padRight.
func (d *Device) AvgPool(dst, src *Buffer, planes int, s kernels.PoolShape, padBottom, padRight int, countIncludePad bool) error {
	if s.DilH != 1 || s.DilW != 1 {
		return fmt.Errorf("cuda: AvgPool: dilations %d×%d: only 1 is supported", s.DilH, s.DilW)
	}
	if padBottom < 0 || padRight < 0 {
		return fmt.Errorf("cuda: AvgPool: pads %d, %d must be non-negative", padBottom, padRight)
	}
	return d.pool("AvgPool", kAvgPool2d, dst, src, planes, s, padBottom, padRight, countIncludePad)
}

func (d *Device) pool(what string, k kernel, dst, src *Buffer, planes int, s kernels.PoolShape, pb, pr int, include bool) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("cuda: %s: %w", what, err)
	}
	isz, osz := s.InH*s.InW, s.OutH*s.OutW
	if planes < 0 || isz > maxElems || osz > maxElems || planes > 0 && (planes > maxElems/isz || planes > maxElems/osz) {
		return fmt.Errorf("cuda: %s: %d planes of %+v: out of range", what, planes, s)
	}
	if planes == 0 {
		return nil
	}
	if err := d.valid(what+" input", src, planes*isz); err != nil {
		return err
	}
	if err := d.valid(what+" output", dst, planes*osz); err != nil {
		return err
	}
	p := poolParams{
		X: src.ptr, Y: dst.ptr,
		Planes: int32(planes), IH: int32(s.InH), IW: int32(s.InW), OH: int32(s.OutH), OW: int32(s.OutW),
		KH: int32(s.KH), KW: int32(s.KW), StrideH: int32(s.StrideH), StrideW: int32(s.StrideW),
		PadTop: int32(s.PadTop), PadLeft: int32(s.PadLeft), PadBottom: int32(pb), PadRight: int32(pr),
		DilH: int32(s.DilH), DilW: int32(s.DilW), CountIncludePad: b32(include),
	}
	grid, block := blocks256(planes * osz)
	return launch(d, k, grid, block, &p)
}

// ReduceOp is a reduction of Reduce.
type ReduceOp int32

// Reductions (AMT_REDUCE_*).
const (
	ReduceSum  ReduceOp = 0
	ReduceMean ReduceOp = 1
	ReduceMax  ReduceOp = 2 // NaN wins, as Go's max
)

// Reduce reduces src, viewed as [outer, n, inner], over its middle axis
// into dst [outer, inner], summing in index order: GlobalAveragePool
// (inner 1), ReduceMean over contiguous axes.
func (d *Device) Reduce(op ReduceOp, dst, src *Buffer, outer, n, inner int) error {
	if op < ReduceSum || op > ReduceMax {
		return fmt.Errorf("cuda: Reduce: unknown operation %d", op)
	}
	if err := d.axisView("Reduce", dst, outer, 1, inner); err != nil {
		return err
	}
	if err := d.axisView("Reduce", src, outer, n, inner); err != nil {
		return err
	}
	if outer*inner == 0 {
		return nil
	}
	if n == 0 {
		return fmt.Errorf("cuda: Reduce: empty axis")
	}
	p := reduceParams{X: src.ptr, Y: dst.ptr, Outer: int32(outer), N: int32(n), Inner: int32(inner), Op: int32(op)}
	grid, block := blocks256(outer * inner)
	return launch(d, kReduceAxis, grid, block, &p)
}

// Softmax computes the softmax of src, viewed as [outer, n, inner], along
// its middle axis into dst (which may be src).
func (d *Device) Softmax(dst, src *Buffer, outer, n, inner int) error {
	if err := d.axisView("Softmax", src, outer, n, inner); err != nil {
		return err
	}
	if err := d.axisView("Softmax", dst, outer, n, inner); err != nil {
		return err
	}
	if outer*n*inner == 0 {
		return nil
	}
	p := softmaxParams{X: src.ptr, Y: dst.ptr, Outer: int32(outer), N: int32(n), Inner: int32(inner)}
	grid, block := blocks256(outer * inner)
	return launch(d, kSoftmaxAxis, grid, block, &p)
}

// axisView checks that b holds an [outer, n, inner] tensor.
func (d *Device) axisView(what string, b *Buffer, outer, n, inner int) error {
	if outer < 0 || n < 0 || inner < 0 {
		return fmt.Errorf("cuda: %s: negative size [%d, %d, %d]", what, outer, n, inner)
	}
	t, err := numel([]int{outer, n, inner})
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", what, err)
	}
	return d.valid(what, b, t)
}

// UnaryOp is an element-wise function of Unary (AMT_UNARY_*); alpha and
// beta are its attributes where it has any.
type UnaryOp int32

// Unary operations, with ONNX's semantics.
const (
	UnaryCopy        UnaryOp = 0
	UnaryRelu        UnaryOp = 1
	UnaryLeakyRelu   UnaryOp = 2 // slope alpha
	UnaryClip        UnaryOp = 3 // to [alpha, beta]
	UnarySigmoid     UnaryOp = 4
	UnaryTanh        UnaryOp = 5
	UnaryExp         UnaryOp = 6
	UnaryLog         UnaryOp = 7
	UnarySqrt        UnaryOp = 8
	UnaryNeg         UnaryOp = 9
	UnaryAbs         UnaryOp = 10
	UnaryFloor       UnaryOp = 11
	UnaryCeil        UnaryOp = 12
	UnaryReciprocal  UnaryOp = 13
	UnaryElu         UnaryOp = 14 // alpha
	UnaryHardSigmoid UnaryOp = 15 // max(0, min(1, alpha·x + beta))
	UnaryAffine      UnaryOp = 16 // alpha·x + beta
)

// Unary sets dst[i] = f(src[i]) for every value of src; dst has src's
// length and may be src.
func (d *Device) Unary(op UnaryOp, dst, src *Buffer, alpha, beta float32) error {
	if op < UnaryCopy || op > UnaryAffine {
		return fmt.Errorf("cuda: Unary: unknown operation %d", op)
	}
	if err := d.valid("Unary", src, 0); err != nil {
		return err
	}
	if err := d.valid("Unary", dst, src.n); err != nil {
		return err
	}
	if src.n == 0 {
		return nil
	}
	p := unaryParams{X: src.ptr, Y: dst.ptr, N: int32(src.n), Op: int32(op), Alpha: alpha, Beta: beta}
	grid, block := blocks256(src.n)
	return launch(d, kUnary, grid, block, &p)
}

// ChannelAffine sets dst[i] = src[i]·scale[c] + shift[c] where
// c = (i / inner) mod channels: a BatchNormalization over NC… tensors.
func (d *Device) ChannelAffine(dst, src, scale, shift *Buffer, channels, inner int) error {
	if channels <= 0 || inner <= 0 {
		return fmt.Errorf("cuda: ChannelAffine: %d channels of %d values", channels, inner)
	}
	if err := d.valid("ChannelAffine", src, 0); err != nil {
		return err
	}
	if src.n%(channels*inner) != 0 {
		return fmt.Errorf("cuda: ChannelAffine: %d values are not a whole number of %d channels × %d", src.n, channels, inner)
	}
	for _, b := range []*Buffer{scale, shift} {
		if err := d.valid("ChannelAffine", b, channels); err != nil {
			return err
		}
	}
	if err := d.valid("ChannelAffine", dst, src.n); err != nil {
		return err
	}
	p := affineParams{X: src.ptr, Scale: scale.ptr, Shift: shift.ptr, Y: dst.ptr, N: int32(src.n), C: int32(channels), Inner: int32(inner)}
	grid, block := blocks256(src.n)
	return launch(d, kChannelAffine, grid, block, &p)
}

// BinaryOp is an element-wise operation of Binary (AMT_BINARY_*).
type BinaryOp int32

// Binary operations.
const (
	BinaryAdd BinaryOp = 0
	BinarySub BinaryOp = 1
	BinaryMul BinaryOp = 2
	BinaryDiv BinaryOp = 3
	BinaryPow BinaryOp = 4
)

// Binary sets dst = a op b with numpy broadcasting of shapes aShape and
// bShape; dst holds the broadcast shape and may be a or b when it has
// that operand's shape.
func (d *Device) Binary(op BinaryOp, dst, a *Buffer, aShape []int, b *Buffer, bShape []int) error {
	if op < BinaryAdd || op > BinaryPow {
		return fmt.Errorf("cuda: Binary: unknown operation %d", op)
	}
	shape, err := broadcastShape(aShape, bShape)
	if err != nil {
		return fmt.Errorf("cuda: Binary: %w", err)
	}
	n, err := numel(shape)
	if err != nil {
		return fmt.Errorf("cuda: Binary: %w", err)
	}
	na, _ := numel(aShape)
	nb, _ := numel(bShape)
	for _, v := range []struct {
		b *Buffer
		n int
	}{{a, na}, {b, nb}, {dst, n}} {
		if err := d.valid("Binary", v.b, v.n); err != nil {
			return err
		}
	}
	if n == 0 {
		return nil
	}
	cs, st := collapse(shape, bstrides(aShape, shape), bstrides(bShape, shape))
	if len(cs) > maxDims {
		return fmt.Errorf("cuda: Binary: shapes %v and %v: broadcasting needs %d axes, at most %d are supported", aShape, bShape, len(cs), maxDims)
	}
	p := binaryParams{A: a.ptr, B: b.ptr, Y: dst.ptr, N: int32(n), NDim: int32(len(cs)), Op: int32(op)}
	for i := range cs {
		p.Shape[i], p.AStride[i], p.BStride[i] = int32(cs[i]), int32(st[0][i]), int32(st[1][i])
	}
	grid, block := blocks256(n)
	return launch(d, kBinary, grid, block, &p)
}

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
	st := stridesOf(shape)
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

// Gather is an index-map gather prepared on the device (nn's gatherAxes):
// out[i0,…] = in[maps[0][i0],…], or the fill value where any map entry is
// negative. It implements Slice, Pad, Split, Expand, Gather and
// nearest-neighbour Resize.
type Gather struct {
	d         *Device
	maps      *Buffer
	p         gatherParams
	inN, outN int
}

// NewGather validates maps against the input shape and uploads them.
func (d *Device) NewGather(inShape []int, maps [][]int, fill float32) (*Gather, error) {
	r := len(inShape)
	if len(maps) != r || r == 0 || r > maxDims {
		return nil, fmt.Errorf("cuda: NewGather: %d maps for input shape %v (rank 1 to %d)", len(maps), inShape, maxDims)
	}
	inN, err := numel(inShape)
	if err != nil {
		return nil, fmt.Errorf("cuda: NewGather: %w", err)
	}
	out := make([]int, r)
	var flat []int32
	g := &Gather{d: d, inN: inN, p: gatherParams{NDim: int32(r), Fill: fill}}
	st := stridesOf(inShape)
	for k, m := range maps {
		out[k] = len(m)
		g.p.Shape[k], g.p.XStride[k], g.p.MapOff[k] = int32(len(m)), int32(st[k]), int32(len(flat))
		for i, v := range m {
			if v >= inShape[k] {
				return nil, fmt.Errorf("cuda: NewGather: map %d entry %d is %d, axis has %d values", k, i, v, inShape[k])
			}
			flat = append(flat, int32(max(v, -1)))
		}
		if len(flat) > maxElems {
			return nil, fmt.Errorf("cuda: NewGather: maps too long")
		}
	}
	if g.outN, err = numel(out); err != nil {
		return nil, fmt.Errorf("cuda: NewGather: %w", err)
	}
	g.p.N = int32(g.outN)
	if len(flat) > 0 {
		if g.maps, err = d.UploadInt32(flat); err != nil {
			return nil, err
		}
		g.p.Maps = g.maps.ptr
	}
	return g, nil
}

// Run gathers src (the input shape) into dst (the maps' lengths).
func (g *Gather) Run(dst, src *Buffer) error {
	if err := g.d.valid("Gather input", src, g.inN); err != nil {
		return err
	}
	if err := g.d.valid("Gather output", dst, g.outN); err != nil {
		return err
	}
	if g.outN == 0 {
		return nil
	}
	p := g.p
	p.X, p.Y = src.ptr, dst.ptr
	grid, block := blocks256(g.outN)
	return launch(g.d, kGatherAxes, grid, block, &p)
}

// Free releases the maps.
func (g *Gather) Free() error {
	if g.maps == nil {
		return nil
	}
	return g.maps.Free()
}

// Tap is one output row's (or column's) linear interpolation: input
// indices I0, I1 with weights W0, W1 (nn/resize.go computes them).
type Tap struct {
	I0, I1 int
	W0, W1 float32
}

// Resize is a bilinear resize prepared on the device.
type Resize struct {
	d              *Device
	yi, yw, xi, xw *Buffer
	planes, ih, iw int
	oh, ow         int
}

// NewResizeLinear prepares the bilinear resize of planes ih×iw planes to
// len(ys)×len(xs), output row y reading input rows ys[y].I0 and ys[y].I1
// (columns likewise); each output is computed as nn/resize.go does.
func (d *Device) NewResizeLinear(planes, ih, iw int, ys, xs []Tap) (*Resize, error) {
	oh, ow := len(ys), len(xs)
	if planes <= 0 || ih <= 0 || iw <= 0 || oh == 0 || ow == 0 {
		return nil, fmt.Errorf("cuda: NewResizeLinear: %d planes %d×%d to %d×%d", planes, ih, iw, oh, ow)
	}
	if _, err := numel([]int{planes, max(ih, oh), max(iw, ow)}); err != nil {
		return nil, fmt.Errorf("cuda: NewResizeLinear: %w", err)
	}
	split := func(taps []Tap, in int, what string) ([]int32, []float32, error) {
		idx, w := make([]int32, 2*len(taps)), make([]float32, 2*len(taps))
		for i, t := range taps {
			if t.I0 < 0 || t.I0 >= in || t.I1 < 0 || t.I1 >= in {
				return nil, nil, fmt.Errorf("cuda: NewResizeLinear: %s tap %d reads %d and %d of %d", what, i, t.I0, t.I1, in)
			}
			idx[2*i], idx[2*i+1], w[2*i], w[2*i+1] = int32(t.I0), int32(t.I1), t.W0, t.W1
		}
		return idx, w, nil
	}
	yi, yw, err := split(ys, ih, "row")
	if err != nil {
		return nil, err
	}
	xi, xw, err := split(xs, iw, "column")
	if err != nil {
		return nil, err
	}
	r := &Resize{d: d, planes: planes, ih: ih, iw: iw, oh: oh, ow: ow}
	if r.yi, err = d.UploadInt32(yi); err == nil {
		if r.yw, err = d.Upload(yw); err == nil {
			if r.xi, err = d.UploadInt32(xi); err == nil {
				r.xw, err = d.Upload(xw)
			}
		}
	}
	if err != nil {
		r.Free()
		return nil, err
	}
	return r, nil
}

// Run resizes src into dst.
func (r *Resize) Run(dst, src *Buffer) error {
	if err := r.d.valid("Resize input", src, r.planes*r.ih*r.iw); err != nil {
		return err
	}
	if err := r.d.valid("Resize output", dst, r.planes*r.oh*r.ow); err != nil {
		return err
	}
	p := resizeParams{X: src.ptr, YIdx: r.yi.ptr, YW: r.yw.ptr, XIdx: r.xi.ptr, XW: r.xw.ptr, Y: dst.ptr,
		Planes: int32(r.planes), IH: int32(r.ih), IW: int32(r.iw), OH: int32(r.oh), OW: int32(r.ow)}
	grid, block := blocks256(r.planes * r.oh * r.ow)
	return launch(r.d, kResizeLinear, grid, block, &p)
}

// Free releases the taps.
func (r *Resize) Free() error {
	var first error
	for _, b := range []*Buffer{r.yi, r.yw, r.xi, r.xw} {
		if b != nil {
			if err := b.Free(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// numel returns the number of elements of shape, or an error when a
// dimension is negative or the count exceeds what the kernels index.
func numel(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d > 0 && n > maxElems/d {
			return 0, fmt.Errorf("shape %v has more than %d elements", shape, maxElems)
		}
		n *= d
	}
	return n, nil
}

// stridesOf returns the row-major strides of shape.
func stridesOf(s []int) []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// broadcastShape returns the numpy broadcast of shapes a and b.
func broadcastShape(a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range out {
		da, db := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v cannot be broadcast (dimension %d: %d vs %d)", a, b, i, da, db)
		}
	}
	return out, nil
}

// bstrides returns the strides with which a tensor of shape s is read when
// broadcast to shape out (0 along broadcast axes).
func bstrides(s, out []int) []int {
	st := make([]int, len(out))
	src := stridesOf(s)
	off := len(out) - len(s)
	for i := range s {
		if s[i] != 1 {
			st[off+i] = src[i]
		}
	}
	return st
}

// collapse drops size-1 axes and merges adjacent axes along which every
// stride set is contiguous (the outer stride is the inner stride times
// the inner size), so that the kernels decompose as few axes as possible.
// A shape with no axis left becomes [1].
func collapse(shape []int, strides ...[]int) ([]int, [][]int) {
	var cs []int
	cst := make([][]int, len(strides))
	for i, n := range shape {
		if n == 1 {
			continue
		}
		if k := len(cs) - 1; k >= 0 {
			merge := true
			for j, s := range strides {
				if cst[j][k] != s[i]*n {
					merge = false
					break
				}
			}
			if merge {
				cs[k] *= n
				for j, s := range strides {
					cst[j][k] = s[i]
				}
				continue
			}
		}
		cs = append(cs, n)
		for j, s := range strides {
			cst[j] = append(cst[j], s[i])
		}
	}
	if len(cs) == 0 {
		cs = []int{1}
		for j := range cst {
			cst[j] = []int{0}
		}
	}
	return cs, cst
}
