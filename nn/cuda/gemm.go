//go:build gpu

package cuda

import (
	"fmt"

	"github.com/amt-dev/amt/nn/kernels"
)

// GemmArgs describes Batch matrix products
//
//	Y = act(Alpha·op(A)·op(B) + Beta·C)
//
// where op(X) is X, or Xᵀ when Trans is set; op(A) is M×K, op(B) K×N and
// Y M×N. Matrices are row-major with leading dimensions LDA, LDB, LDY as
// stored; C is read at C[i·LDCRow + j·LDCCol], so that it may be Y itself
// (LDCRow = LDY, LDCCol = 1), a row vector broadcast over the rows
// (LDCRow = 0, LDCCol = 1: ONNX Gemm's bias) or a column vector (1, 0).
// C nil or Beta 0 drops the term (C is then not read, even if NaN).
// Matrix z of a batch starts z·Stride values into each operand.
type GemmArgs struct {
	TransA, TransB bool
	M, N, K        int
	Alpha          float32
	A              *Buffer
	LDA            int
	B              *Buffer
	LDB            int
	Beta           float32
	C              *Buffer
	LDCRow, LDCCol int
	Y              *Buffer
	LDY            int
	Batch          int // 0 means 1
	StrideA        int
	StrideB        int
	StrideC        int
	StrideY        int
	Act            kernels.Activation
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C (BLAS sgemm, as
// kernels.Gemm): when beta is 0, C's old contents are ignored.
func (d *Device) Gemm(transA, transB bool, m, n, k int, alpha float32, a *Buffer, lda int, b *Buffer, ldb int, beta float32, c *Buffer, ldc int) error {
	g := GemmArgs{TransA: transA, TransB: transB, M: m, N: n, K: k, Alpha: alpha, A: a, LDA: lda, B: b, LDB: ldb, Y: c, LDY: ldc}
	if beta != 0 {
		g.Beta, g.C, g.LDCRow, g.LDCCol = beta, c, ldc, 1
	}
	return d.GemmEx(g)
}

// GemmEx computes the products g describes.
func (d *Device) GemmEx(g GemmArgs) error {
	batch := max(g.Batch, 1)
	switch {
	case g.M < 0 || g.N < 0 || g.K < 0 || g.Batch < 0:
		return fmt.Errorf("cuda: Gemm: negative size m=%d n=%d k=%d batch=%d", g.M, g.N, g.K, g.Batch)
	case g.M == 0 || g.N == 0:
		return nil
	case batch > 65535 || g.M > 65535*64:
		return fmt.Errorf("cuda: Gemm: %d matrices of %d rows are too many for one launch", batch, g.M)
	case g.StrideA < 0 || g.StrideB < 0 || g.StrideC < 0 || g.StrideY < 0 || g.LDCRow < 0 || g.LDCCol < 0:
		return fmt.Errorf("cuda: Gemm: negative stride")
	}
	switch g.Act.Kind {
	case kernels.ActNone, kernels.ActRelu, kernels.ActLeakyRelu, kernels.ActClip:
	default:
		return fmt.Errorf("cuda: Gemm: unknown activation kind %d", g.Act.Kind)
	}
	rowsA, colsA := g.M, g.K
	if g.TransA {
		rowsA, colsA = colsA, rowsA
	}
	rowsB, colsB := g.K, g.N
	if g.TransB {
		rowsB, colsB = colsB, rowsB
	}
	if err := d.checkMatrix("A", g.A, rowsA, colsA, g.LDA, 1, batch, g.StrideA); err != nil {
		return err
	}
	if err := d.checkMatrix("B", g.B, rowsB, colsB, g.LDB, 1, batch, g.StrideB); err != nil {
		return err
	}
	if err := d.checkMatrix("Y", g.Y, g.M, g.N, g.LDY, 1, batch, g.StrideY); err != nil {
		return err
	}
	if g.LDY < g.N {
		return fmt.Errorf("cuda: Gemm: leading dimension of Y is %d, want at least %d", g.LDY, g.N)
	}
	p := gemmParams{
		A: g.A.ptr, B: g.B.ptr, Y: g.Y.ptr,
		M: int32(g.M), N: int32(g.N), K: int32(g.K),
		TransA: b32(g.TransA), TransB: b32(g.TransB),
		LDA: int32(g.LDA), LDB: int32(g.LDB), LDY: int32(g.LDY),
		StrideA: int32(g.StrideA), StrideB: int32(g.StrideB), StrideY: int32(g.StrideY),
		Batch: int32(batch), Act: int32(g.Act.Kind),
		Alpha: g.Alpha, ActAlpha: g.Act.Alpha, Lo: g.Act.Min, Hi: g.Act.Max,
	}
	if g.C != nil && g.Beta != 0 {
		if err := d.checkMatrix("C", g.C, g.M, g.N, g.LDCRow, g.LDCCol, batch, g.StrideC); err != nil {
			return err
		}
		p.C, p.LDCRow, p.LDCCol, p.StrideC, p.Beta = g.C.ptr, int32(g.LDCRow), int32(g.LDCCol), int32(g.StrideC), g.Beta
	}
	grid := [3]uint32{uint32(ceilDiv(g.N, 64)), uint32(ceilDiv(g.M, 64)), uint32(batch)}
	return launch(d, kGemmTiled, grid, [3]uint32{256, 1, 1}, &p)
}

// checkMatrix checks that x holds batch rows×cols matrices read at
// x[z·stride + i·ld + j·colStride], with rows that do not overlap except
// for C, which may broadcast.
func (d *Device) checkMatrix(name string, x *Buffer, rows, cols, ld, colStride, batch, stride int) error {
	if rows == 0 || cols == 0 {
		return d.valid("Gemm "+name, x, 0)
	}
	if name != "C" && ld < cols {
		return fmt.Errorf("cuda: Gemm: leading dimension of %s is %d, want at least %d", name, ld, cols)
	}
	last := int64(batch-1)*int64(stride) + int64(rows-1)*int64(ld) + int64(cols-1)*int64(colStride)
	if last >= maxElems {
		return fmt.Errorf("cuda: Gemm: %s spans %d values, more than one launch can index", name, last+1)
	}
	return d.valid("Gemm "+name, x, int(last)+1)
}

func b32(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
