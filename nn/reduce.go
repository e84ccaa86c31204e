package nn

import (
	"cmp"
	"math"
	"slices"
)

// Reductions: the Reduce* operators, ArgMax/ArgMin and TopK.

// reduceKind is what a Reduce* operator computes over the reduced axes.
type reduceKind int

const (
	rSum reduceKind = iota
	rMean
	rMax
	rMin
	rProd
	rL1
	rL2
	rSumSquare
	rLogSum
	rLogSumExp
)

// reduceOp returns the build function of a Reduce* operator; axesInput is
// the opset from which its axes are an input instead of an attribute (13
// for ReduceSum, 18 for the others).
func reduceOp(kind reduceKind, axesInput int64) buildFunc {
	return one(func(b *builder, a *attrs, ins []*value) *value {
		x := need(ins, 0, "data")
		red, noop := b.reduceAxes(a, ins, len(x.shape), axesInput)
		keep := a.int("keepdims", 1) != 0
		if noop {
			return x
		}
		var shape []int
		for k, d := range x.shape {
			switch {
			case !red[k]:
				shape = append(shape, d)
			case keep:
				shape = append(shape, 1)
			}
		}
		if x.c != nil && x.c.isInt {
			if kind != rSum && kind != rMax && kind != rMin && kind != rProd {
				fail("integer input is supported only by ReduceSum, ReduceMax, ReduceMin and ReduceProd")
			}
			return constVal(&tens{shape: shape, i: reduceInts(kind, x.c.i, x.shape, red), isInt: true})
		}
		if kind == rMean && keep && x.c == nil {
			// A layer normalisation written out starts here (norm.go).
			if v, out, ok := b.fuseLayerNorm(x, red); ok {
				b.env[out] = v
				return v
			}
		}
		for k, d := range x.shape {
			if red[k] && d == 0 && (kind == rMax || kind == rMin) {
				fail("%s over an empty axis", b.node().op)
			}
		}
		p := newReducePlan(x.shape, red)
		v := b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
			p.run(kind, out, ins[0])
		})
		if op, ok := map[reduceKind]string{rSum: "sum", rMean: "mean", rMax: "max"}[kind]; ok {
			b.onDevice(v, devReduce{op: op, perm: p.perm, inShape: p.shape, outer: p.outer, n: p.n, inner: p.inner})
		}
		return v
	})
}

// reduceAxes reads the reduced axes of a Reduce* node of a rank-r input
// (all of them when none are given) and whether the node is the identity
// (noop_with_empty_axes and no axes).
func (b *builder) reduceAxes(a *attrs, ins []*value, r int, axesInput int64) (red []bool, noop bool) {
	var axes []int64
	if b.p.opset >= axesInput {
		if opt(ins, 1) != nil {
			axes = constant(ins, 1, "axes").ints()
		}
		if len(axes) == 0 && a.int("noop_with_empty_axes", 0) != 0 {
			return nil, true
		}
	} else {
		axes = a.ints("axes", nil)
	}
	red = make([]bool, r)
	for _, ax := range axes {
		k, err := normAxis(ax, r)
		if err != nil {
			fail("%v", err)
		}
		red[k] = true
	}
	if len(axes) == 0 {
		for k := range red {
			red[k] = true
		}
	}
	return red, false
}

// reducePerImage: a reduction keeps images apart unless it reduces the
// batch axis.
func reducePerImage(axesInput int64) func(b *builder, a *attrs, ins, outs []*value) bool {
	return func(b *builder, a *attrs, ins, outs []*value) bool {
		if !batchedFirst(b, a, ins, outs) {
			return false
		}
		red, noop := b.reduceAxes(a, ins, len(ins[0].shape), axesInput)
		return noop || !red[0]
	}
}

// reducePlan is how a reduction over some axes of a tensor runs: over a
// block of contiguous axes, out[o, i] combines in[o, k, i] for k < n
// (row by row, so that the inner loop runs along memory); over axes that
// are not contiguous, on a copy of the input with the reduced axes moved
// last.
type reducePlan struct {
	outer, n, inner int
	perm            []int // nil, or the permutation into tmp
	shape           []int // of the input
	tmp             []float32
	acc             []float64
}

func newReducePlan(shape []int, red []bool) *reducePlan {
	// Drop size-1 axes, which change nothing, then look for one block.
	first, last := -1, -1
	contiguous := true
	for k, d := range shape {
		if !red[k] || d == 1 {
			continue
		}
		if first < 0 {
			first = k
		} else if last < k-1 {
			for j := last + 1; j < k; j++ {
				if shape[j] != 1 {
					contiguous = false
				}
			}
		}
		last = k
	}
	p := &reducePlan{shape: shape}
	switch {
	case first < 0: // nothing reduced (or only size-1 axes)
		p.outer, p.n, p.inner = numel(shape), 1, 1
	case contiguous:
		p.outer, p.n, p.inner = numel(shape[:first]), numel(shape[first:last+1]), numel(shape[last+1:])
	default:
		for k := range shape {
			if !red[k] {
				p.perm = append(p.perm, k)
			}
		}
		n := 1
		for k, d := range shape {
			if red[k] {
				p.perm = append(p.perm, k)
				n *= d
			}
		}
		p.outer, p.n, p.inner = numel(shape)/max(n, 1), n, 1
		p.tmp = make([]float32, numel(shape))
	}
	p.acc = make([]float64, p.inner)
	return p
}

// run computes the reduction of in into out.
func (p *reducePlan) run(kind reduceKind, out, in []float32) {
	if p.perm != nil {
		transpose(p.tmp, in, p.shape, p.perm)
		in = p.tmp
	}
	n, inner := p.n, p.inner
	acc := p.acc
	for o := 0; o < p.outer; o++ {
		blk := in[o*n*inner : (o+1)*n*inner]
		dst := out[o*inner : (o+1)*inner]
		switch kind {
		case rMax, rMin:
			copy(dst, blk[:inner])
			for k := 1; k < n; k++ {
				row := blk[k*inner : (k+1)*inner]
				if kind == rMax {
					for i, v := range row {
						dst[i] = max(dst[i], v)
					}
				} else {
					for i, v := range row {
						dst[i] = min(dst[i], v)
					}
				}
			}
			continue
		case rLogSumExp:
			// Shift by the maximum so that exp cannot overflow.
			copy(dst, blk[:inner])
			for k := 1; k < n; k++ {
				for i, v := range blk[k*inner : (k+1)*inner] {
					dst[i] = max(dst[i], v)
				}
			}
			clear(acc)
			for k := 0; k < n; k++ {
				for i, v := range blk[k*inner : (k+1)*inner] {
					acc[i] += math.Exp(float64(v - dst[i]))
				}
			}
			for i := range dst {
				if !math.IsInf(float64(dst[i]), 0) {
					dst[i] += float32(math.Log(acc[i]))
				}
			}
			continue
		}
		init := 0.0
		if kind == rProd {
			init = 1
		}
		for i := range acc {
			acc[i] = init
		}
		if inner == 1 {
			acc[0] = reduceRow(kind, blk, init)
		} else {
			for k := 0; k < n; k++ {
				row := blk[k*inner : (k+1)*inner]
				switch kind {
				case rProd:
					for i, v := range row {
						acc[i] *= float64(v)
					}
				case rL1:
					for i, v := range row {
						acc[i] += math.Abs(float64(v))
					}
				case rL2, rSumSquare:
					for i, v := range row {
						acc[i] += float64(v) * float64(v)
					}
				default:
					for i, v := range row {
						acc[i] += float64(v)
					}
				}
			}
		}
		for i, s := range acc {
			switch kind {
			case rMean:
				s /= float64(n)
			case rL2:
				s = math.Sqrt(s)
			case rLogSum:
				s = math.Log(s)
			}
			dst[i] = float32(s)
		}
	}
}

// reduceRow combines the values of row, starting from init.
func reduceRow(kind reduceKind, row []float32, init float64) float64 {
	s := init
	switch kind {
	case rProd:
		for _, v := range row {
			s *= float64(v)
		}
	case rL1:
		for _, v := range row {
			s += math.Abs(float64(v))
		}
	case rL2, rSumSquare:
		for _, v := range row {
			s += float64(v) * float64(v)
		}
	default:
		for _, v := range row {
			s += float64(v)
		}
	}
	return s
}

// reduceInts folds a reduction of an integer constant (shape arithmetic).
func reduceInts(kind reduceKind, in []int64, shape []int, red []bool) []int64 {
	// Output index of every input element: its coordinates over the kept
	// axes.
	n := 1
	for k, d := range shape {
		if !red[k] {
			n *= d
		}
	}
	out := make([]int64, n)
	seen := make([]bool, n)
	idx := make([]int, len(shape))
	for _, v := range in {
		o := 0
		for k, d := range shape {
			if !red[k] {
				o = o*d + idx[k]
			}
		}
		switch {
		case !seen[o]:
			out[o], seen[o] = v, true
		case kind == rSum:
			out[o] += v
		case kind == rProd:
			out[o] *= v
		case kind == rMax:
			out[o] = max(out[o], v)
		case kind == rMin:
			out[o] = min(out[o], v)
		}
		for k := len(shape) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	if kind == rProd {
		for o := range out {
			if !seen[o] {
				out[o] = 1
			}
		}
	}
	return out
}

// argOp returns the build function of ArgMax (isMax) or ArgMin. The
// indices are a float32 tensor at run time (exact up to 2**24).
func argOp(isMax bool) buildFunc {
	return one(func(b *builder, a *attrs, ins []*value) *value {
		x := need(ins, 0, "data")
		ax, err := normAxis(a.int("axis", 0), len(x.shape))
		if err != nil {
			fail("%v", err)
		}
		keep := a.int("keepdims", 1) != 0
		last := a.int("select_last_index", 0) != 0
		if x.shape[ax] == 0 {
			fail("axis %d of shape %v is empty", ax, x.shape)
		}
		shape := slices.Clone(x.shape)
		if keep {
			shape[ax] = 1
		} else {
			shape = slices.Delete(shape, ax, ax+1)
		}
		outer, n, inner := numel(x.shape[:ax]), x.shape[ax], numel(x.shape[ax+1:])
		better := func(v, best float32) bool {
			if isMax {
				return v > best || (last && v == best)
			}
			return v < best || (last && v == best)
		}
		arg := func(out, in []float32) {
			for o := 0; o < outer; o++ {
				for i := 0; i < inner; i++ {
					base := o*n*inner + i
					best, at := in[base], 0
					for k := 1; k < n; k++ {
						if v := in[base+k*inner]; better(v, best) {
							best, at = v, k
						}
					}
					out[o*inner+i] = float32(at)
				}
			}
		}
		if x.c != nil {
			f := make([]float32, numel(shape))
			arg(f, x.c.floats())
			return constVal(&tens{shape: shape, i: (&tens{f: f}).ints(), isInt: true})
		}
		return b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) { arg(out, ins[0]) })
	})
}

// axisPerImage is the per-image rule of the operators working along one
// axis (attribute axis, default def): input 0 is batched and the axis is
// not the batch axis.
func axisPerImage(def int64) func(b *builder, a *attrs, ins, outs []*value) bool {
	return func(b *builder, a *attrs, ins, outs []*value) bool {
		return batchedFirst(b, a, ins, outs) && axisNot0(a.int("axis", def), len(ins[0].shape))
	}
}

// topKOp is TopK (k an input since opset 10): the k largest (or smallest)
// values along an axis, sorted, with their indices (float32 at run time);
// equal values in order of their index, as ONNX Runtime returns them.
func topKOp(b *builder, a *attrs, ins []*value) []*value {
	x := need(ins, 0, "X")
	r := len(x.shape)
	ax, err := normAxis(a.int("axis", -1), r)
	if err != nil {
		fail("%v", err)
	}
	var k int64
	if b.p.opset < 10 {
		k = a.int("k", 0)
	} else {
		kv := constant(ins, 1, "K").ints()
		if len(kv) != 1 {
			fail("K has %d values, want 1", len(kv))
		}
		k = kv[0]
	}
	largest := a.int("largest", 1) != 0
	if a.int("sorted", 1) == 0 {
		a.ignore("sorted") // any order is allowed; this one is sorted
	}
	n := x.shape[ax]
	if k < 0 || k > int64(n) {
		fail("K = %d out of range for axis %d of shape %v", k, ax, x.shape)
	}
	shape := slices.Clone(x.shape)
	shape[ax] = int(k)
	outer, inner := numel(x.shape[:ax]), numel(x.shape[ax+1:])
	kk := int(k)
	order := make([]int, n)
	top := func(vals, idx, in []float32) {
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				base := o*n*inner + i
				for j := range order {
					order[j] = j
				}
				slices.SortFunc(order, func(p, q int) int {
					vp, vq := in[base+p*inner], in[base+q*inner]
					c := cmp.Compare(vp, vq)
					if largest {
						c = -c
					}
					if c == 0 {
						c = cmp.Compare(p, q)
					}
					return c
				})
				for j, p := range order[:kk] {
					at := o*kk*inner + j*inner + i
					vals[at], idx[at] = in[base+p*inner], float32(p)
				}
			}
		}
	}
	if x.c != nil {
		vals, idx := make([]float32, numel(shape)), make([]float32, numel(shape))
		top(vals, idx, x.c.floats())
		return []*value{constVal(&tens{shape: shape, f: vals}), constVal(&tens{shape: shape, i: (&tens{f: idx}).ints(), isInt: true})}
	}
	// One run-time op per output in use (each sorts; k and the rows are
	// small in classifier heads).
	outs := make([]*value, 2)
	for j, name := range b.node().outputs {
		if j >= 2 || name == "" || (len(b.p.consumers[name]) == 0 && !b.p.isOutput[name]) {
			continue
		}
		scratch := make([]float32, numel(shape))
		j := j
		outs[j] = b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
			if j == 0 {
				top(out, scratch, ins[0])
			} else {
				top(scratch, out, ins[0])
			}
		})
	}
	return outs
}
