package nn

import (
	"slices"

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
		if _, err := broadcastShape(shape, c.shape); err != nil || len(c.shape) > 2 {
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
	return b.emit(shape, vals, func(out []float32, ins [][]float32) {
		kernels.Gemm(transA, transB, m, n, k, alpha, ins[0], lda, ins[1], ldb, 0, out, n)
		switch {
		case cb != nil:
			for i := range out {
				out[i] += cb[i]
			}
		case cv != nil:
			bcast(out, shape, out, shape, ins[2], cs, func(o, v float32) float32 { return o + beta*v })
		}
	})
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
	batch, err := broadcastShape(as[:len(as)-2], bs[:len(bs)-2])
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
	return b.emit(outShape, []*value{x, y}, func(out []float32, ins [][]float32) {
		for i := 0; i < nb; i++ {
			kernels.Gemm(false, false, m, n, k, 1, ins[0][offA[i]:], k, ins[1][offB[i]:], n, 0, out[i*m*n:], n)
		}
	})
}

// matmulPerImage: a MatMul of a batch of matrices or rows by a constant
// matrix.
func matmulPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	return batchedFirst(b, a, ins, outs) && len(ins[0].shape) >= 2 && len(ins) == 2 && len(ins[1].shape) == 2
}
