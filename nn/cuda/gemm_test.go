//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/nn/kernels"
)

type gemmCase struct {
	m, n, k        int
	transA, transB bool
	alpha, beta    float32
	c              string // "": none, "y": C is Y (BLAS), "row": bias over rows, "col": bias over columns, "full": a separate matrix
	act            kernels.Activation
	batch          int
}

func (c gemmCase) String() string {
	return fmt.Sprintf("%dx%dx%d tA=%v tB=%v α=%g β=%g C=%q act=%d batch=%d", c.m, c.n, c.k, c.transA, c.transB, c.alpha, c.beta, c.c, c.act.Kind, c.batch)
}

func TestGemm(t *testing.T) {
	var cases []gemmCase
	for _, mnk := range [][3]int{{1, 1, 1}, {3, 5, 7}, {64, 64, 16}, {65, 130, 17}, {128, 31, 200}, {10, 1000, 512}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			cases = append(cases, gemmCase{m: mnk[0], n: mnk[1], k: mnk[2], transA: tr[0], transB: tr[1], alpha: 1})
		}
	}
	cases = append(cases,
		gemmCase{m: 33, n: 20, k: 9, alpha: 0.5, beta: 1, c: "y"},
		gemmCase{m: 33, n: 20, k: 9, alpha: 1, beta: -2, c: "y", transB: true},
		gemmCase{m: 60, n: 1000, k: 512, alpha: 1, beta: 1, c: "row", transB: true}, // ONNX Gemm: a classifier head
		gemmCase{m: 17, n: 40, k: 3, alpha: 2, beta: 0.5, c: "col", act: relu},
		gemmCase{m: 17, n: 40, k: 3, alpha: 1, beta: 1, c: "full", act: kernels.Activation{Kind: kernels.ActClip, Min: -1, Max: 1}},
		gemmCase{m: 7, n: 9, k: 0, alpha: 1, beta: 1, c: "y"},
		gemmCase{m: 5, n: 6, k: 70, alpha: 1, batch: 4},
		gemmCase{m: 20, n: 8, k: 33, alpha: 1, beta: 1, c: "row", batch: 3, transA: true},
	)
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(2, 1))
		for _, c := range cases {
			testGemm(t, d, r, c)
		}
	})
}

func testGemm(t *testing.T, d *Device, r *rand.Rand, c gemmCase) {
	batch := max(c.batch, 1)
	lda, ldb, ldy := c.k+2, c.n+1, c.n+3 // padded rows
	if c.transA {
		lda = c.m + 1
	}
	if c.transB {
		ldb = c.k + 3
	}
	rowsA, rowsB := c.m, c.k
	if c.transA {
		rowsA = c.k
	}
	if c.transB {
		rowsB = c.n
	}
	sa, sb, sy := rowsA*lda+5, rowsB*ldb+2, c.m*ldy+1
	a, b := randFloats(r, batch*sa), randFloats(r, batch*sb)
	y0 := randFloats(r, batch*sy)
	g := GemmArgs{TransA: c.transA, TransB: c.transB, M: c.m, N: c.n, K: c.k, Alpha: c.alpha, LDA: lda, LDB: ldb, LDY: ldy,
		Batch: c.batch, StrideA: sa, StrideB: sb, StrideY: sy, Act: c.act, Beta: c.beta}
	var cvals []float32
	var ldcRow, ldcCol, sc int
	switch c.c {
	case "y":
		cvals, ldcRow, ldcCol, sc = y0, ldy, 1, sy
	case "row":
		cvals, ldcRow, ldcCol, sc = randFloats(r, batch*c.n), 0, 1, c.n
	case "col":
		cvals, ldcRow, ldcCol, sc = randFloats(r, batch*c.m), 1, 0, c.m
	case "full":
		cvals, ldcRow, ldcCol, sc = randFloats(r, batch*c.m*c.n), c.n, 1, c.m*c.n
	}
	// Reference: nn/kernels' GEMM, then the C term and the activation.
	want := append([]float32(nil), y0...)
	for z := 0; z < batch; z++ {
		prod := make([]float32, c.m*c.n)
		kernels.Gemm(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a[z*sa:], lda, b[z*sb:], ldb, 0, prod, c.n)
		for i := 0; i < c.m; i++ {
			for j := 0; j < c.n; j++ {
				v := prod[i*c.n+j]
				if cvals != nil {
					v += c.beta * cvals[z*sc+i*ldcRow+j*ldcCol]
				}
				vs := []float32{v}
				c.act.Apply(vs)
				want[z*sy+i*ldy+j] = vs[0]
			}
		}
	}
	g.A, g.B = upload(t, d, a), upload(t, d, b)
	g.Y = upload(t, d, y0)
	switch c.c {
	case "y":
		g.C, g.LDCRow, g.LDCCol, g.StrideC = g.Y, ldy, 1, sy
	case "":
	default:
		g.C, g.LDCRow, g.LDCCol, g.StrideC = upload(t, d, cvals), ldcRow, ldcCol, sc
	}
	must(t, d.GemmEx(g))
	// Values outside the matrices (the padding) must be untouched.
	closeTo(t, c.String(), download(t, d, g.Y, len(want)), want, 1e-4)
}

// TestGemmBLAS checks the BLAS entry point: beta 0 ignores C, even NaN.
func TestGemmBLAS(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(2, 2))
		m, n, k := 9, 70, 40
		a, b := randFloats(r, m*k), randFloats(r, k*n)
		want := make([]float32, m*n)
		kernels.Gemm(false, false, m, n, k, 1, a, k, b, n, 0, want, n)
		cb := upload(t, d, make([]float32, m*n))
		must(t, d.Fill(cb, float32(math.NaN())))
		must(t, d.Gemm(false, false, m, n, k, 1, upload(t, d, a), k, upload(t, d, b), n, 0, cb, n))
		closeTo(t, "beta 0 over NaN", download(t, d, cb, m*n), want, 1e-4)
		// beta 1 accumulates: C = A·B + C.
		for i := range want {
			want[i] *= 2
		}
		must(t, d.Gemm(false, false, m, n, k, 1, upload(t, d, a), k, upload(t, d, b), n, 1, cb, n))
		closeTo(t, "beta 1", download(t, d, cb, m*n), want, 1e-4)
	})
}

func TestGemmErrors(t *testing.T) {
	d, _ := openFake(t, "")
	a, b, y := alloc(t, d, 12), alloc(t, d, 12), alloc(t, d, 12)
	for _, c := range []struct {
		name string
		g    GemmArgs
	}{
		{"negative size", GemmArgs{M: -1, N: 3, K: 4, A: a, B: b, Y: y, LDA: 4, LDB: 3, LDY: 3}},
		{"A too short", GemmArgs{M: 4, N: 3, K: 4, A: a, B: b, Y: y, LDA: 4, LDB: 3, LDY: 3}},
		{"small leading dimension", GemmArgs{M: 3, N: 3, K: 4, A: a, B: b, Y: y, LDA: 3, LDB: 3, LDY: 3}},
		{"Y too short", GemmArgs{M: 3, N: 4, K: 3, A: a, B: b, Y: y, LDA: 3, LDB: 4, LDY: 4, Batch: 2, StrideY: 12}},
		{"nil B", GemmArgs{M: 3, N: 3, K: 4, A: a, Y: y, LDA: 4, LDB: 3, LDY: 3}},
		{"C too short", GemmArgs{M: 3, N: 3, K: 4, A: a, B: b, Y: y, LDA: 4, LDB: 3, LDY: 3, Beta: 1, C: a.Slice(0, 2), LDCRow: 0, LDCCol: 1}},
		{"unknown activation", GemmArgs{M: 3, N: 3, K: 4, A: a, B: b, Y: y, LDA: 4, LDB: 3, LDY: 3, Act: kernels.Activation{Kind: 7}}},
	} {
		if err := d.GemmEx(c.g); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
