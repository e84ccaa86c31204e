package nn

import (
	"slices"

	"github.com/amt-dev/amt/nn/internal/shapes"
	"github.com/amt-dev/amt/nn/kernels"
)

// Matrix products: Gemm and MatMul, on kernels.Gemm.

func gemmOp(b *builder, a *attrs, ins []*value) *value {
	x, y := need(ins, 0, "A"), need(ins, 1, "B")
	if b.p.opset < 7 {
		a.ignore("broadcast")
	}
	transA, transB := a.int("transA", 0) != 0, a.int("transB", 0) != 0
	alpha, beta := a.float("alpha", 1), a.float("beta", 1)
	if len(x.shape) != 2 || len(y.shape) != 2 {
		fail("inputs must be matrices, got %v and %v", x.shape, y.shape)
	}
	m, k := x.shape[0], x.shape[1]
	if transA {
		m, k = k, m
	}
	k2, n := y.shape[0], y.shape[1]
	if transB {
		k2, n = n, k2
	}
	if k != k2 {
		fail("inner dimensions differ: A %v (transA=%v), B %v (transB=%v)", x.shape, transA, y.shape, transB)
	}
	shape := []int{m, n}
	b.checkShape(shape)
	var cb []float32 // beta·C broadcast to [m, n]
	var cv *value
	if c := opt(ins, 2); c != nil && beta != 0 {
		if _, err := shapes.Broadcast(shape, c.shape); err != nil || len(c.shape) > 2 {
			fail("C %v cannot be broadcast to %v", c.shape, shape)
		}
		if c.c != nil {
			cb = make([]float32, m*n)
			cs := c.shape
			bcast(cb, shape, make([]float32, m*n), shape, c.c.floats(), cs, func(_, v float32) float32 { return beta * v })
		} else {
			cv = c
		}
	}
	if transB && y.c != nil && !y.c.isInt {
		// A transposed constant B (nn.Linear's weight) transposed once
		// here: the GEMM then reads its rows in place of gathering columns.
		t := make([]float32, k*n)
		transpose(t, y.c.f, y.shape, []int{1, 0})
		y, transB = constVal(&tens{shape: []int{k, n}, f: t}), false
	}
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	vals := []*value{x, y}
	var cs []int
	if cv != nil {
		vals = append(vals, cv)
		cs = cv.shape
	}
	return b.onDevice(b.emit(shape, vals, func(out []float32, ins [][]float32) {
		// β·C first, then the product accumulated onto it.
		switch {
		case cb != nil:
			copy(out, cb)
		case cv != nil:
			bcast(out, shape, out, shape, ins[2], cs, func(_, v float32) float32 { return beta * v })
		default:
			kernels.Gemm(transA, transB, m, n, k, alpha, ins[0], lda, ins[1], ldb, 0, out, n)
			return
		}
		kernels.Gemm(transA, transB, m, n, k, alpha, ins[0], lda, ins[1], ldb, 1, out, n)
	}), devGemm{transA: transA, transB: transB, m: m, n: n, k: k, lda: lda, ldb: ldb, alpha: alpha, c: cb, cShape: cs, beta: beta})
}

// gemmPerImage: a Gemm of a batch of rows (A not transposed) by constants,
// with a bias C that is the same for every row.
func gemmPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	ok := batchedFirst(b, a, ins, outs) && a.int("transA", 0) == 0
	for _, v := range ins[2:] {
		if v != nil && len(v.shape) == 2 && v.shape[0] != 1 {
			ok = false
		}
	}
	return ok
}

func matmulOp(b *builder, _ *attrs, ins []*value) *value {
	x, y := need(ins, 0, "A"), need(ins, 1, "B")
	as, bs := slices.Clone(x.shape), slices.Clone(y.shape)
	if len(as) == 0 || len(bs) == 0 {
		fail("MatMul of a scalar")
	}
	vecA, vecB := len(as) == 1, len(bs) == 1
	if vecA {
		as = []int{1, as[0]}
	}
	if vecB {
		bs = []int{bs[0], 1}
	}
	m, k, k2, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-2], bs[len(bs)-1]
	if k != k2 {
		fail("inner dimensions differ: %v × %v", x.shape, y.shape)
	}
	batch, err := shapes.Broadcast(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		fail("%v", err)
	}
	var outShape []int
	outShape = append(outShape, batch...)
	if !vecA {
		outShape = append(outShape, m)
	}
	if !vecB {
		outShape = append(outShape, n)
	}
	b.checkShape(outShape)
	nb := numel(batch)
	// A B shared by all of A's matrices (a weight: rank 2, or batch axes
	// all 1), with A not broadcast: one product over all of A's rows.
	rows, calls := m, nb
	if numel(bs[:len(bs)-2]) == 1 && numel(as[:len(as)-2]) == nb {
		rows, calls = nb*m, 1
	}
	// Offsets of the batch matrices of A and B (broadcast batch axes).
	offA, offB := make([]int, nb), make([]int, nb)
	if len(batch) > 0 {
		aBatch, bBatch := as[:len(as)-2], bs[:len(bs)-2]
		sa, sb := bstrides(aBatch, batch), bstrides(bBatch, batch)
		idx := make([]int, len(batch))
		for i := 0; i < nb; i++ {
			for d := range batch {
				offA[i] += idx[d] * sa[d]
				offB[i] += idx[d] * sb[d]
			}
			offA[i] *= m * k
			offB[i] *= k * n
			for d := len(batch) - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < batch[d] {
					break
				}
				idx[d] = 0
			}
		}
	}
	// A bias (and a residual) added after the product: accumulated onto
	// an output first set to them.
	f := b.fuseMatMulAdd(outShape, n, y.c != nil)
	if f.scale != nil {
		// A per-column scale after the product (and the bias): folded
		// into a scaled copy of the constant B.
		sc := slices.Clone(y.c.floats())
		for r := 0; r < len(sc); r += n {
			for j, g := range f.scale {
				sc[r+j] *= g
			}
		}
		y = constVal(&tens{shape: y.shape, f: sc})
	}
	vals := []*value{x, y}
	if f.res != nil {
		vals = append(vals, f.res)
	}
	bias := f.bias
	v := b.emit(outShape, vals, func(out []float32, ins [][]float32) {
		beta := float32(0)
		switch {
		case f.res != nil:
			copy(out, ins[2])
			if bias != nil {
				for r := 0; r < len(out); r += n {
					for j, c := range bias {
						out[r+j] += c
					}
				}
			}
			beta = 1
		case bias != nil:
			for r := 0; r < len(out); r += n {
				copy(out[r:r+n], bias)
			}
			beta = 1
		}
		for i := 0; i < calls; i++ {
			kernels.Gemm(false, false, rows, n, k, 1, ins[0][offA[i]:], k, ins[1][offB[i]:], n, beta, out[i*rows*n:], n)
		}
	})
	b.onDevice(v, devMatMul{m: rows, n: n, k: k, offA: offA[:calls], offB: offB[:calls], bias: bias, res: f.res != nil})
	if f.out != b.node().outputs[0] {
		b.env[f.out] = v
	}
	return v
}

// matmulFusion is what a MatMul absorbs of the nodes after it, in this
// order: the Add of a bias (nn.Linear on more than two axes exports as
// MatMul and Add), the Mul by a per-column scale (ConvNeXt's and timm's
// layer scale; only with a constant B) and the Add of a residual.
type matmulFusion struct {
	bias  []float32 // n values, or nil
	scale []float32 // n values, or nil (bias already scaled)
	res   *value    // a run-time value of the output's shape, or nil
	out   string    // output of the last node absorbed
}

// fuseMatMulAdd decides which nodes after the MatMul being built (output
// shape, n columns; constB: its B is a constant) it absorbs, and marks them
// as compiled.
func (b *builder) fuseMatMulAdd(shape []int, n int, constB bool) matmulFusion {
	f := matmulFusion{out: b.node().outputs[0]}
	m := b.pattern()
	// row returns the values of the constant other if it is one row of n
	// values broadcast over the output.
	row := func(other string) []float32 {
		c := m.constant(other)
		if c != nil && !c.isInt && len(c.f) == n && len(c.shape) <= len(shape) && (len(c.shape) == 0 || c.shape[len(c.shape)-1] == n) {
			return c.f
		}
		return nil
	}
	if j, other := b.addAfter(f.out, "Add"); j >= 0 {
		if f.bias = row(other); f.bias != nil {
			f.out = b.p.nodes[j].outputs[0]
			b.skip[j] = true
		}
	}
	if j, other := b.addAfter(f.out, "Mul"); j >= 0 && constB {
		if f.scale = row(other); f.scale != nil {
			f.out = b.p.nodes[j].outputs[0]
			b.skip[j] = true
			if f.bias != nil {
				f.bias = slices.Clone(f.bias)
				for k := range f.bias {
					f.bias[k] *= f.scale[k]
				}
			}
		}
	}
	if j, other := b.addAfter(f.out, "Add"); j >= 0 {
		if v, ok := b.env[other]; ok && v.c == nil && v.n != nil && slices.Equal(v.shape, shape) {
			f.res = v
			f.out = b.p.nodes[j].outputs[0]
			b.skip[j] = true
		}
	}
	return f
}

// addAfter returns the node of operator op (Add or Mul) that is the only
// user of the value name (which is not a graph output), with name as one
// operand, and the other operand; -1 if there is none.
func (b *builder) addAfter(name, op string) (int, string) {
	cs := b.p.consumers[name]
	if len(cs) != 1 || b.p.isOutput[name] || cs[0] <= b.idx {
		return -1, ""
	}
	j := cs[0]
	n := &b.p.nodes[j]
	if n.op != op || len(n.inputs) != 2 || len(n.outputs) != 1 || len(n.attrs) != 0 || n.inputs[0] == n.inputs[1] {
		return -1, ""
	}
	if n.inputs[0] == name {
		return j, n.inputs[1]
	}
	return j, n.inputs[0]
}

// matmulPerImage: a MatMul of a batch of matrices or rows by a constant
// matrix, or of two batched stacks of matrices of the same rank (attention:
// queries by keys, weights by values).
func matmulPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	if len(ins) != 2 || ins[0] == nil || ins[1] == nil {
		return false
	}
	x, y := ins[0], ins[1]
	if b.batched(x) && b.batched(y) {
		return len(x.shape) >= 3 && len(x.shape) == len(y.shape)
	}
	return batchedFirst(b, a, ins, outs) && len(x.shape) >= 2 && len(y.shape) == 2
}
