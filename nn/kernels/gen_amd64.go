//go:build ignore

// gen_amd64 writes the generated amd64 assembly of package kernels:
//
//	go generate ./nn/kernels   (or: go run gen_amd64.go)
//
// gemm_avx512_amd64.s: the AVX-512 GEMM micro-kernels, one per tile shape
// R×16V, R ∈ {4, 8} rows and V ∈ {1, 2, 3} vectors of 16 columns, with the
// semantics of kernelGo: a depth loop of rank-1 updates (the accumulator
// of every element sees the products in depth order, one FMA each, exactly
// as the AVX2 kernel: the two give bit-identical results), then the
// epilogue (accumulate C, bias, activation) and a store of the first rows
// rows, the last vector masked by K1.
//
// winograd_amd64.s: the Winograd F(2×2, 3×3) input and output transforms
// of one row of tiles, for AVX-512 (16 tiles per step) and AVX2 (8), with
// the semantics of winoInputGo and winoOutputGo (the same additions in the
// same order: bit-identical results).
//
// gemv_amd64.s: sgemvFMA, a GEMM of one column of B (a matrix–vector
// product) over packed A panels, for the narrow column panels left over at
// the right of a GEMM, with the semantics of the micro-kernels (each
// element the same chain of FMAs in depth order, the same epilogue
// instructions): bit-identical to computing the column in a tile.
//
// The code is generated because the variants differ only in register
// counts and vector widths.
package main

import (
	"bytes"
	"fmt"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// aPrefetch is how far ahead (bytes) the AVX-512 micro-kernels prefetch
// their packed A panels, one 64-byte line per 4 depth steps (the 16 bytes
// a panel advances per step). Inside a model the weights of a layer come
// from memory rather than cache (the layers before evicted them), and a
// tile's sweep down a column panel reads them once: measured on a Zen 4
// VM (interleaved, medians), yolov3-tiny on one core 43.8 → 41.1 ms and
// SqueezeNet b1 on two 3.84 → 3.39 ms; SqueezeNet b60 within the noise.
const aPrefetch = 1024

// Register plan: accumulators Z0..Z(R·V−1) (row r, vector v in
// Z(r·V+v)), B vectors Z24-Z26, broadcasts Z27/Z28, epilogue temporaries
// Z29-Z31.
func acc(r, v, nv int) string { return fmt.Sprintf("Z%d", r*nv+v) }

func kernel(rows, nv int, tiles bool) {
	name := fmt.Sprintf("sgemmKernel%dx%dAVX512", rows, 16*nv)
	if tiles {
		name = fmt.Sprintf("sgemmTiles%dx%dAVX512", rows, 16*nv)
	}
	p("")
	if tiles {
		// Frame: 0(SP) k, 8(SP) boff, 16(SP) the current tile's bias, 24(SP) tiles left.
		p("// func %s(k int, a *float32, aStride int, b *float32, boff *int, c *float32, ldc int, ep *epilogue, rows int, mask uint64, pf int, tiles int)", name)
		p("TEXT ·%s(SB), NOSPLIT, $32-96", name)
	} else {
		p("// func %s(k int, a *float32, aStride int, b *float32, boff *int, c *float32, ldc int, ep *epilogue, rows int, mask uint64, pf int)", name)
		p("TEXT ·%s(SB), NOSPLIT, $0-88", name)
	}
	p("\tMOVQ k+0(FP), CX")
	p("\tMOVQ a+8(FP), SI")
	p("\tMOVQ aStride+16(FP), R11")
	p("\tMOVQ b+24(FP), DI")
	p("\tMOVQ boff+32(FP), R8")
	p("\tMOVQ c+40(FP), DX")
	p("\tMOVQ ldc+48(FP), R9")
	p("\tMOVQ ep+56(FP), R10")
	p("\tMOVQ rows+64(FP), R12")
	p("\tMOVQ mask+72(FP), AX")
	p("\tKMOVW AX, K1")
	p("\tMOVQ pf+80(FP), R13")
	p("\tSHLQ $2, R9")
	p("\tSHLQ $2, R11")
	p("\tADDQ SI, R11 // second panel of A (rows 4-7)")
	p("\tADDQ DI, R13 // prefetch base: b + pf bytes")
	if tiles {
		p("\tMOVQ CX, 0(SP)")
		p("\tMOVQ R8, 8(SP)")
		p("\tMOVQ 8(R10), AX")
		p("\tMOVQ AX, 16(SP)")
		p("\tMOVQ tiles+88(FP), AX")
		p("\tMOVQ AX, 24(SP)")
		p("tile:")
		p("\tMOVQ 0(SP), CX")
		p("\tMOVQ 8(SP), R8")
	}
	for r := 0; r < rows; r++ {
		for v := 0; v < nv; v++ {
			a := acc(r, v, nv)
			p("\tVPXORD %s, %s, %s", a, a, a)
		}
	}
	p("\tMOVQ CX, BX")
	p("\tSHRQ $2, BX")
	p("\tANDQ $3, CX")
	p("\tTESTQ BX, BX")
	p("\tJEQ tail")
	p("loop4:")
	for u := 0; u < 4; u++ {
		step(rows, nv)
	}
	// A's panels aPrefetch bytes ahead, a cache line per 4 steps (see
	// aPrefetch).
	p("\tPREFETCHT0 %d(SI)", aPrefetch)
	if rows > 4 {
		p("\tPREFETCHT0 %d(R11)", aPrefetch)
	}
	p("\tDECQ BX")
	p("\tJNE loop4")
	p("tail:")
	p("\tTESTQ CX, CX")
	p("\tJEQ epi")
	p("loop1:")
	step(rows, nv)
	p("\tDECQ CX")
	p("\tJNE loop1")
	p("epi:")
	p("\tMOVQ 0(R10), AX")
	// Accumulate: acc = acc + C (the same operation as the AVX2 kernel's
	// VADDPS mem, acc; addition commutes bit for bit).
	p("\tTESTQ $1, AX")
	p("\tJEQ nobeta")
	p("\tMOVQ DX, BX")
	for r := 0; r < rows; r++ {
		if r > 0 {
			p("\tCMPQ R12, $%d", r)
			p("\tJLE nobeta")
			p("\tADDQ R9, BX")
		}
		for v := 0; v < nv; v++ {
			a := acc(r, v, nv)
			if v == nv-1 {
				p("\tVADDPS %d(BX), %s, K1, %s", 64*v, a, a)
			} else {
				p("\tVADDPS %d(BX), %s, %s", 64*v, a, a)
			}
		}
	}
	p("nobeta:")
	p("\tTESTQ $2, AX")
	p("\tJEQ nobias")
	if tiles {
		p("\tMOVQ 16(SP), BX")
	} else {
		p("\tMOVQ 8(R10), BX")
	}
	for r := 0; r < rows; r++ {
		p("\tVBROADCASTSS %d(BX), Z29", 4*r)
		for v := 0; v < nv; v++ {
			a := acc(r, v, nv)
			p("\tVADDPS Z29, %s, %s", a, a)
		}
	}
	p("nobias:")
	var accs []string
	all(rows, nv, func(a string) { accs = append(accs, a) })
	actEpilogue(accs, "VPXORD", "Z29", "Z30", "Z31", "")
	p("\tMOVQ DX, BX")
	for r := 0; r < rows; r++ {
		if r > 0 {
			p("\tCMPQ R12, $%d", r)
			p("\tJLE done")
			p("\tADDQ R9, BX")
		}
		for v := 0; v < nv; v++ {
			a := acc(r, v, nv)
			if v == nv-1 {
				p("\tVMOVUPS %s, K1, %d(BX)", a, 64*v)
			} else {
				p("\tVMOVUPS %s, %d(BX)", a, 64*v)
			}
		}
	}
	p("done:")
	if tiles {
		// Next tile: 8 rows down in C, 8 values on in the bias; A's next
		// two panels follow the current second one.
		p("\tLEAQ (DX)(R9*8), DX")
		p("\tADDQ $32, 16(SP)")
		p("\tMOVQ R11, AX")
		p("\tSUBQ SI, AX")
		p("\tMOVQ R11, SI")
		p("\tADDQ AX, R11")
		p("\tDECQ 24(SP)")
		p("\tJNE tile")
	}
	p("\tVZEROUPPER")
	p("\tRET")
}

// all emits f for every accumulator.
func all(rows, nv int, f func(a string)) {
	for r := 0; r < rows; r++ {
		for v := 0; v < nv; v++ {
			f(acc(r, v, nv))
		}
	}
}

// step emits one rank-1 update: B row p (boff[p]) times A column p.
func step(rows, nv int) {
	p("\tMOVQ (R8), AX")
	for v := 0; v < nv; v++ {
		p("\tVMOVUPS %d(DI)(AX*4), Z%d", 64*v, 24+v)
	}
	p("\tPREFETCHT0 (R13)(AX*4)")
	for r := 0; r < rows; r++ {
		base := "SI"
		if r >= 4 {
			base = "R11"
		}
		bc := 27 + r%2
		p("\tVBROADCASTSS %d(%s), Z%d", 4*(r%4), base, bc)
		for v := 0; v < nv; v++ {
			p("\tVFMADD231PS Z%d, Z%d, %s", 24+v, bc, acc(r, v, nv))
		}
	}
	p("\tADDQ $16, SI")
	if rows > 4 {
		p("\tADDQ $16, R11")
	}
	p("\tADDQ $8, R8")
}

func main() {
	gemmFile()
	write("gemm_avx512_amd64.s")
	winogradFile()
	write("winograd_amd64.s")
	poolFile()
	write("pool_amd64.s")
	gemvFile()
	write("gemv_amd64.s")
}

func write(name string) {
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out.Reset()
}

func gemmFile() {
	p("// Code generated by gen_amd64.go; DO NOT EDIT.")
	p("")
	p("//go:build amd64 && !noasm")
	p("")
	p("#include \"textflag.h\"")
	p("")
	p("// The AVX-512 GEMM micro-kernels (see gen_amd64.go and kernelGo): an")
	p("// R×16V tile of C = a·b, a packed in 4-row panels (rows 4-7 in the panel")
	p("// aStride values further), row p of b at b[boff[p]:]; then the epilogue")
	p("// and a store of the first rows rows, the last vector under mask.")
	p("// Step p also prefetches the byte pf past b[boff[p]] (the next panel), and")
	p("// every fourth step A's panels %d bytes ahead.", aPrefetch)
	for _, rows := range []int{4, 8} {
		for nv := 1; nv <= 3; nv++ {
			kernel(rows, nv, false)
		}
	}
	for nv := 1; nv <= 3; nv++ {
		kernel(8, nv, true)
	}
	for nv := 1; nv <= 3; nv++ {
		avx2Tiles(nv, false)
		avx2Tiles(nv, true)
	}
}

// avx2Tiles emits the AVX2 set's micro-kernels for tiles full 4-row tiles
// one below the other (the packed A panels are contiguous, C and the bias
// advance by 4 rows), so that a column panel of B is swept in one call: a
// 4×8V tile, V ∈ {1, 2, 3} vectors of 8 columns (4×24 also computes the
// set's single tiles of fewer rows, in a buffer: see gemmAVX2), and for
// panels whose width is no multiple of 8 the same with the last vector of
// C loaded and stored under the mask at *mask (VMASKMOVPS: nothing outside
// the tile is read or written), so that the right-hand panel of a GEMM is
// computed in place at its width rather than as a whole 4×24 tile in a
// buffer. Every element gets the same operations in the same order
// whatever the tile (bit-identical results). Registers: accumulators from
// Y4 (row r, vector v in Y(4+V·r+v)), B in Y0…Y(V−1), broadcasts in Y3,
// then the mask in Y3 for the epilogue; frame: 0(SP) the bias of the
// current tile, 8(SP) k.
func avx2Tiles(nv int, masked bool) {
	name := fmt.Sprintf("sgemmTiles4x%dAVX2", 8*nv)
	if masked {
		name = fmt.Sprintf("sgemmTiles4x%dMaskAVX2", 8*nv)
	}
	acc := func(r, v int) string { return fmt.Sprintf("Y%d", 4+nv*r+v) }
	p("")
	p("// func %s(k int, a, b *float32, boff *int, c *float32, ldc int, ep *epilogue, tiles int, pf int, mask *int32)", name)
	p("TEXT ·%s(SB), NOSPLIT, $16-80", name)
	p("\tMOVQ k+0(FP), AX")
	p("\tMOVQ AX, 8(SP)")
	p("\tMOVQ a+8(FP), SI")
	p("\tMOVQ b+16(FP), DI")
	p("\tMOVQ boff+24(FP), R12")
	p("\tMOVQ c+32(FP), DX")
	p("\tMOVQ ldc+40(FP), R9")
	p("\tSHLQ $2, R9")
	p("\tMOVQ ep+48(FP), R10")
	p("\tMOVQ 8(R10), AX")
	p("\tMOVQ AX, 0(SP)")
	p("\tMOVQ tiles+56(FP), R11")
	p("\tMOVQ pf+64(FP), R13")
	p("\tADDQ DI, R13")
	if masked {
		p("\tMOVQ mask+72(FP), R14")
	}
	p("\tTESTQ R11, R11")
	p("\tJLE done")
	p("tile:")
	for r := 0; r < 4; r++ {
		for v := 0; v < nv; v++ {
			a := acc(r, v)
			p("\tVXORPS %s, %s, %s", a, a, a)
		}
	}
	p("\tMOVQ R12, R8")
	p("\tMOVQ 8(SP), CX")
	p("\tMOVQ CX, BX")
	p("\tSHRQ $2, BX")
	p("\tANDQ $3, CX")
	p("\tTESTQ BX, BX")
	p("\tJEQ tail")
	p("loop4:")
	for u := 0; u < 4; u++ {
		avx2Step(nv, acc)
	}
	p("\tDECQ BX")
	p("\tJNE loop4")
	p("tail:")
	p("\tTESTQ CX, CX")
	p("\tJEQ epi")
	p("loop1:")
	avx2Step(nv, acc)
	p("\tDECQ CX")
	p("\tJNE loop1")
	p("epi:")
	last := func(v int) bool { return masked && v == nv-1 }
	if masked {
		p("\tVMOVDQU (R14), Y3")
	}
	p("\tMOVQ 0(R10), AX")
	p("\tTESTQ $1, AX")
	p("\tJEQ nobeta")
	p("\tMOVQ DX, BX")
	for r := 0; r < 4; r++ {
		if r > 0 {
			p("\tADDQ R9, BX")
		}
		for v := 0; v < nv; v++ {
			a := acc(r, v)
			if last(v) {
				p("\tVMASKMOVPS %d(BX), Y3, Y0", 32*v)
				p("\tVADDPS Y0, %s, %s", a, a)
			} else {
				p("\tVADDPS %d(BX), %s, %s", 32*v, a, a)
			}
		}
	}
	p("nobeta:")
	p("\tTESTQ $2, AX")
	p("\tJEQ nobias")
	p("\tMOVQ 0(SP), BX")
	for r := 0; r < 4; r++ {
		p("\tVBROADCASTSS %d(BX), Y0", 4*r)
		for v := 0; v < nv; v++ {
			a := acc(r, v)
			p("\tVADDPS Y0, %s, %s", a, a)
		}
	}
	p("nobias:")
	var accs []string
	for r := 0; r < 4; r++ {
		for v := 0; v < nv; v++ {
			accs = append(accs, acc(r, v))
		}
	}
	actEpilogue(accs, "VXORPS", "Y0", "Y1", "Y2", "")
	p("\tMOVQ DX, BX")
	for r := 0; r < 4; r++ {
		if r > 0 {
			p("\tADDQ R9, BX")
		}
		for v := 0; v < nv; v++ {
			if last(v) {
				p("\tVMASKMOVPS %s, Y3, %d(BX)", acc(r, v), 32*v)
			} else {
				p("\tVMOVUPS %s, %d(BX)", acc(r, v), 32*v)
			}
		}
	}
	// Next tile: A has advanced by 4k values already; C by 4 rows, the
	// bias by 4 values.
	p("\tLEAQ (DX)(R9*4), DX")
	p("\tADDQ $16, 0(SP)")
	p("\tDECQ R11")
	p("\tJNE tile")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// avx2Step emits one rank-1 update of avx2Tiles (as kernel_amd64.s's STEP,
// plus the prefetch of the next panel's row). A masked tile reads its
// last B vector whole: the panel has 24 readable columns (see
// gemmTilesAVX2), and the columns past the tile only reach lanes that are
// never stored.
func avx2Step(nv int, acc func(r, v int) string) {
	p("\tMOVQ (R8), AX")
	for v := 0; v < nv; v++ {
		p("\tVMOVUPS %d(DI)(AX*4), Y%d", 32*v, v)
	}
	p("\tPREFETCHT0 (R13)(AX*4)")
	for r := 0; r < 4; r++ {
		p("\tVBROADCASTSS %d(SI), Y3", 4*r)
		for v := 0; v < nv; v++ {
			p("\tVFMADD231PS Y%d, Y3, %s", v, acc(r, v))
		}
	}
	p("\tADDQ $16, SI")
	p("\tADDQ $8, R8")
}

// winogradFile emits the Winograd transforms and the deinterleaving copy.
func winogradFile() {
	p("// Code generated by gen_amd64.go; DO NOT EDIT.")
	p("")
	p("//go:build amd64 && !noasm")
	p("")
	p("#include \"textflag.h\"")
	p("")
	p("// Winograd F(2×2, 3×3) transforms of rows of tiles (see winograd.go:")
	p("// winoInputGo and winoOutputGo are the specification; these compute the")
	p("// same sums in the same order), and the even/odd split of the padding copy.")
	// Interleave indices for VPERMI2PS: lo = a0 b0 a1 b1 … a7 b7, hi = a8 b8 … a15 b15.
	for i := 0; i < 16; i++ {
		p("DATA winoIlv<>+%d(SB)/4, $%d", 4*i, i/2+16*(i%2))
	}
	for i := 0; i < 16; i++ {
		p("DATA winoIlv<>+%d(SB)/4, $%d", 64+4*i, 8+i/2+16*(i%2))
	}
	// Deinterleave indices: even 0, 2, …, 30; odd 1, 3, …, 31.
	for i := 0; i < 16; i++ {
		p("DATA winoIlv<>+%d(SB)/4, $%d", 128+4*i, 2*i)
	}
	for i := 0; i < 16; i++ {
		p("DATA winoIlv<>+%d(SB)/4, $%d", 192+4*i, 2*i+1)
	}
	p("GLOBL winoIlv<>(SB), RODATA|NOPTR, $256")
	// AVX2 masks: 8 × -1 then 8 × 0; the mask for c lanes starts at (8-c)·4.
	for i := 0; i < 16; i++ {
		v := "$0xffffffff"
		if i >= 8 {
			v = "$0"
		}
		p("DATA winoMask<>+%d(SB)/4, %s", 4*i, v)
	}
	p("GLOBL winoMask<>(SB), RODATA|NOPTR, $64")
	winoInput(16)
	winoInput(8)
	winoInputRows(16, 4)
	winoInputRows(16, 8)
	winoInputRows(8, 4)
	winoOutput(16)
	winoOutput(8)
	winoOutputRows(16, 4)
	winoOutputRows(16, 8)
	winoOutputRows(8, 4)
	deinterleave(16)
	deinterleave(8)
}

// winoT returns the Bᵀ row combination of the transform: t_i = a op b.
var winoT = [4]struct {
	a, b int
	op   string
}{{0, 2, "SUB"}, {1, 2, "ADD"}, {2, 1, "SUB"}, {1, 3, "SUB"}}

// vop emits dst = a op b (op ADD or SUB) on vector registers.
func vop(op, a, b, dst string) { p("\tV%sPS %s, %s, %s", op, b, a, dst) }

// isaName returns the function suffix and register prefix of a width.
func isaName(w int) (name, z string) {
	if w == 16 {
		return "AVX512", "Z"
	}
	return "AVX2", "Y"
}

// winoInput emits the input transform of tileRows rows of n tiles, w tiles
// per step. Frame: 0(SP) the V row of the current tile row, 8(SP) its
// first padded row.
//
// AVX-512: d[i][j] in Z(4i+j), t[i][j] in Z(16+4i+j), then V[4i+b] back in
// Z(4i+b). AVX2 (16 registers): per row i of Bᵀ d, the two padded rows it
// combines in Y0-Y3 and Y4-Y7, t in Y8-Y11, V[4i..4i+3] in Y12-Y15.
func winoInput(w int) {
	name, z := isaName(w)
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	p("")
	p("// func winoInput%s(v *float32, vStride int, src *float32, hw int, n int, tileRows int)", name)
	p("TEXT ·winoInput%s(SB), NOSPLIT, $16-48", name)
	p("\tMOVQ vStride+8(FP), R8")
	p("\tSHLQ $2, R8")
	p("\tMOVQ hw+24(FP), R9")
	p("\tSHLQ $2, R9")
	p("\tMOVQ v+0(FP), AX")
	p("\tMOVQ AX, 0(SP)")
	p("\tMOVQ src+16(FP), AX")
	p("\tMOVQ AX, 8(SP)")
	p("\tMOVQ n+32(FP), DX")
	p("\tMOVQ tileRows+40(FP), R13")
	p("\tTESTQ DX, DX")
	p("\tJLE done")
	p("\tTESTQ R13, R13")
	p("\tJLE done")
	p("row:")
	p("\tMOVQ 0(SP), DI")
	p("\tMOVQ 8(SP), SI")
	p("\tMOVQ DX, CX")
	p("\tLEAQ (SI)(R9*2), R10")
	p("\tLEAQ (R10)(R9*2), R11")
	p("\tLEAQ (R11)(R9*2), R12")
	p("loop:")
	rows := []string{"SI", "R10", "R11", "R12"}
	load := func(r string, base int) {
		p("\tVMOVUPS (%s), %s", r, v(base))
		p("\tVMOVUPS (%s)(R9*1), %s", r, v(base+1))
		p("\tVMOVUPS 4(%s), %s", r, v(base+2))
		p("\tVMOVUPS 4(%s)(R9*1), %s", r, v(base+3))
	}
	winoInputStep(w, rows, load)
	for _, r := range append(rows, "DI") {
		p("\tADDQ $%d, %s", 4*w, r)
	}
	p("\tSUBQ $%d, CX", w)
	p("\tJGT loop")
	// Next tile row: n values further in V, two padded rows (4hw) further in src.
	p("\tLEAQ (DX*4), AX")
	p("\tADDQ AX, 0(SP)")
	p("\tLEAQ (R9*4), AX")
	p("\tADDQ AX, 8(SP)")
	p("\tDECQ R13")
	p("\tJGT row")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// winoInputStep emits the transform of one step of winoInput(w) and
// winoInputRows(w, n) from the padded rows held in rows, whose 4 vectors
// (even, odd, even and odd one tile further) load(r, base) loads into
// registers base…base+3, and its stores to V (DI, row stride R8).
func winoInputStep(w int, rows []string, load func(r string, base int)) {
	_, z := isaName(w)
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	if w == 16 {
		for i, r := range rows {
			load(r, 4*i)
		}
		for i, t := range winoT {
			for j := 0; j < 4; j++ {
				vop(t.op, v(4*t.a+j), v(4*t.b+j), v(16+4*i+j))
			}
		}
		for i := 0; i < 4; i++ {
			for b, t := range winoT {
				vop(t.op, v(16+4*i+t.a), v(16+4*i+t.b), v(4*i+b))
			}
		}
		p("\tMOVQ DI, BX")
		for x := 0; x < 16; x++ {
			if x > 0 {
				p("\tADDQ R8, BX")
			}
			p("\tVMOVUPS %s, (BX)", v(x))
		}
	} else {
		p("\tMOVQ DI, BX")
		for i, t := range winoT {
			load(rows[t.a], 0)
			load(rows[t.b], 4)
			for j := 0; j < 4; j++ {
				vop(t.op, v(j), v(4+j), v(8+j))
			}
			for b, u := range winoT {
				vop(u.op, v(8+u.a), v(8+u.b), v(12+b))
			}
			for b := 0; b < 4; b++ {
				if i > 0 || b > 0 {
					p("\tADDQ R8, BX")
				}
				p("\tVMOVUPS %s, (BX)", v(12+b))
			}
		}
	}
}

// winoInputRows emits the input transform of rows of n tiles, n = 4 or 8
// (AVX-512, w = 16) or 4 (AVX2, w = 8), w/n tile rows per step (a step's w
// tiles are consecutive in V), steps steps: winoInput(w)'s arithmetic on
// vectors whose lane groups of n come from successive tile rows, loaded by
// inserts, instead of w lanes of which n are used. Registers as in
// winoInput(w); SI, R10–R12 the step's first four padded rows, AX, R14
// and R15 the same rows of its later tile rows (two padded rows, 4hw
// values, apart).
func winoInputRows(w, n int) {
	name, z := isaName(w)
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	per := w / n
	p("")
	p("// func winoInputRows%d%s(v *float32, vStride int, src *float32, hw int, steps int)", n, name)
	p("TEXT ·winoInputRows%d%s(SB), NOSPLIT, $0-40", n, name)
	p("\tMOVQ vStride+8(FP), R8")
	p("\tSHLQ $2, R8")
	p("\tMOVQ hw+24(FP), R9")
	p("\tSHLQ $2, R9")
	p("\tMOVQ v+0(FP), DI")
	p("\tMOVQ src+16(FP), SI")
	p("\tMOVQ steps+32(FP), CX")
	p("\tTESTQ CX, CX")
	p("\tJLE done")
	p("\tLEAQ (SI)(R9*2), R10")
	p("\tLEAQ (R10)(R9*2), R11")
	p("\tLEAQ (R11)(R9*2), R12")
	p("loop:")
	half, ins := "Y", "VINSERTF32X8"
	switch {
	case w == 8:
		half, ins = "X", "VINSERTF128"
	case n == 4:
		half, ins = "X", "VINSERTF32X4"
	}
	later := []string{"AX", "R14", "R15"}
	rows := []string{"SI", "R10", "R11", "R12"}
	// load loads the 4 vectors of padded row r (even, odd, even and odd
	// one tile further) into registers base…base+3.
	load := func(r string, base int) {
		// Tile row g of the step reads this padded row 2g rows further.
		for g := 1; g < per; g++ {
			switch g {
			case 1:
				p("\tLEAQ (%s)(R9*4), %s", r, later[0])
			case 2:
				p("\tLEAQ (%s)(R9*8), %s", r, later[1])
			case 3:
				p("\tLEAQ (%s)(R9*4), %s", later[1], later[2])
			}
		}
		for j, off := range []string{"(%s)", "(%s)(R9*1)", "4(%s)", "4(%s)(R9*1)"} {
			p("\tVMOVUPS "+off+", %s%d", r, half, base+j)
			for g := 1; g < per; g++ {
				p("\t%s $%d, "+off+", %s, %s", ins, g, later[g-1], v(base+j), v(base+j))
			}
		}
	}
	winoInputStep(w, rows, load)
	p("\tADDQ $%d, DI", 4*w)
	// Next step: w/n tile rows, 2w/n padded rows (4hw·w/n values) further.
	for _, r := range rows {
		for k := 0; k < per/2; k++ {
			p("\tLEAQ (%s)(R9*8), %s", r, r)
		}
	}
	p("\tDECQ CX")
	p("\tJGT loop")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// winoOutput emits the output transform of tileRows rows of n tiles of
// one output channel, w tiles per step: the 16 values M[ξ] of each tile,
// the 2×2 outputs Aᵀ M A plus the bias, then for each of the (up to) 2
// output rows the even and odd columns interleaved into 2w columns, the
// residual added, the activation, and a store limited to the row's
// columns. Frame: 0(SP) dst, 8(SP) m, 16(SP) res of the current tile row,
// 24(SP) output rows left, 32(SP) tile rows left.
//
// Registers: column j of M loads into V0-V3 (rows i = 0..3 of the 4×4 tile,
// ξ = 4i+j), t0j = (m0j+m1j)+m2j in V(4+j), t1j = (m1j−m2j)−m3j in V(8+j);
// output row r: even = ((tr0+tr1)+tr2)+b and odd = ((tr1−tr2)−tr3)+b in
// V0/V1, interleaved into V2/V3; b in V12; V13 temporary. Column masks:
// K1/K2 (AVX-512), V14/V15 from winoMask (AVX2).
func winoOutput(w int) {
	name, z := isaName(w)
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	p("")
	p("// func winoOutput%s(dst *float32, dstStride int, outRows int, m *float32, mStride int, n int, cols int, ep *winoEpilogue, res *float32, tileRows int)", name)
	p("TEXT ·winoOutput%s(SB), NOSPLIT, $40-80", name)
	p("\tMOVQ dstStride+8(FP), R8")
	p("\tSHLQ $2, R8")
	p("\tMOVQ mStride+32(FP), R9")
	p("\tSHLQ $2, R9")
	p("\tLEAQ (R9)(R9*2), R13 // 3·mStride")
	p("\tMOVQ ep+56(FP), R10")
	p("\tVBROADCASTSS 8(R10), %s", v(12))
	p("\tMOVQ dst+0(FP), AX")
	p("\tMOVQ AX, 0(SP)")
	p("\tMOVQ m+24(FP), AX")
	p("\tMOVQ AX, 8(SP)")
	p("\tMOVQ res+64(FP), AX")
	p("\tMOVQ AX, 16(SP)")
	p("\tMOVQ outRows+16(FP), AX")
	p("\tMOVQ AX, 24(SP)")
	p("\tMOVQ tileRows+72(FP), AX")
	p("\tMOVQ AX, 32(SP)")
	p("\tTESTQ AX, AX")
	p("\tJLE done")
	p("\tMOVQ n+40(FP), AX")
	p("\tTESTQ AX, AX")
	p("\tJLE done")
	p("row:")
	p("\tMOVQ 0(SP), DI")
	p("\tMOVQ 8(SP), SI")
	p("\tMOVQ 16(SP), R11")
	p("\tMOVQ 24(SP), R12 // output rows left: this tile row writes min(2, R12)")
	p("\tMOVQ n+40(FP), CX")
	p("\tMOVQ cols+48(FP), DX")
	p("loop:")
	if w == 16 {
		winoOutputStep(w, true)
	} else {
		// Plain loads and stores while 16 columns remain (VMASKMOVPS is
		// slow on some CPUs), masked ones for the last step.
		p("\tCMPQ DX, $16")
		p("\tJLT tail")
		winoOutputStep(w, false)
		p("\tJMP next")
		p("tail:")
		winoOutputStep(w, true)
	}
	p("next:")
	p("\tADDQ $%d, SI", 4*w)
	p("\tADDQ $%d, DI", 8*w)
	p("\tTESTQ R11, R11")
	p("\tJEQ nores")
	p("\tADDQ $%d, R11", 8*w)
	p("nores:")
	p("\tSUBQ $%d, DX", 2*w)
	p("\tSUBQ $%d, CX", w)
	p("\tJGT loop")
	// Next tile row: two output rows further in dst and res, n tiles in M.
	p("\tLEAQ (R8*2), AX")
	p("\tADDQ AX, 0(SP)")
	p("\tCMPQ 16(SP), $0")
	p("\tJEQ nores2")
	p("\tADDQ AX, 16(SP)")
	p("nores2:")
	p("\tMOVQ n+40(FP), AX")
	p("\tSHLQ $2, AX")
	p("\tADDQ AX, 8(SP)")
	p("\tSUBQ $2, 24(SP)")
	p("\tDECQ 32(SP)")
	p("\tJGT row")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// winoOutputStep emits one step of winoOutput (w tiles), its loads of the
// residual and stores masked to the remaining columns or not.
func winoOutputStep(w int, masked bool) {
	_, z := isaName(w)
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	sfx := "f"
	if masked {
		sfx = "m"
	}
	if w == 16 && masked {
		for k, kr := range []string{"K1", "K2"} {
			p("\tMOVQ DX, AX")
			if k == 1 {
				p("\tSUBQ $16, AX")
			}
			p("\tXORQ BX, BX")
			p("\tCMPQ AX, $0")
			p("\tCMOVQLT BX, AX")
			p("\tMOVQ $16, BX")
			p("\tCMPQ AX, BX")
			p("\tCMOVQGT BX, AX")
			p("\tMOVQ $0xffff, BX")
			p("\tBZHIQ AX, BX, AX")
			p("\tKMOVW AX, %s", kr)
		}
	}
	winoOutputCols(z)
	for r := 0; r < 2; r++ {
		if r == 1 {
			p("\tCMPQ R12, $2")
			p("\tJLT next")
		}
		winoOutputRow(z, r)
		winoInterleave(w)
		if w == 8 {
			for k := 0; masked && k < 2; k++ {
				p("\tMOVQ DX, AX")
				if k == 1 {
					p("\tSUBQ $8, AX")
				}
				p("\tXORQ BX, BX")
				p("\tCMPQ AX, $0")
				p("\tCMOVQLT BX, AX")
				p("\tMOVQ $8, BX")
				p("\tCMPQ AX, BX")
				p("\tCMOVQGT BX, AX")
				p("\tNEGQ AX")
				p("\tLEAQ winoMask<>+32(SB), BX")
				p("\tVMOVDQU (BX)(AX*4), %s", v(14+k))
			}
		}
		p("\tTESTQ R11, R11")
		p("\tJEQ nores%d%s", r, sfx)
		if r == 0 {
			p("\tMOVQ R11, BX")
		} else {
			p("\tLEAQ (R11)(R8*1), BX")
		}
		if w == 16 {
			p("\tVMOVUPS.Z (BX), K1, Z13")
			p("\tVADDPS Z13, Z2, Z2")
			p("\tVMOVUPS.Z 64(BX), K2, Z13")
			p("\tVADDPS Z13, Z3, Z3")
		} else if masked {
			p("\tVMASKMOVPS (BX), Y14, Y13")
			p("\tVADDPS Y13, Y2, Y2")
			p("\tVMASKMOVPS 32(BX), Y15, Y13")
			p("\tVADDPS Y13, Y3, Y3")
		} else {
			p("\tVADDPS (BX), Y2, Y2")
			p("\tVADDPS 32(BX), Y3, Y3")
		}
		p("nores%d%s:", r, sfx)
		winoOutputAct(z, fmt.Sprintf("%d%s", r, sfx))
		if r == 0 {
			p("\tMOVQ DI, BX")
		} else {
			p("\tLEAQ (DI)(R8*1), BX")
		}
		if w == 16 {
			p("\tVMOVUPS Z2, K1, (BX)")
			p("\tVMOVUPS Z3, K2, 64(BX)")
		} else if masked {
			p("\tVMASKMOVPS Y2, Y14, (BX)")
			p("\tVMASKMOVPS Y3, Y15, 32(BX)")
		} else {
			p("\tVMOVUPS Y2, (BX)")
			p("\tVMOVUPS Y3, 32(BX)")
		}
	}
}

// winoOutputCols emits the column pass of the output transform of one
// step: column j of M (ξ = j + 4i at SI + ξ·mStride) into V0–V3, then
// t0j = (m0j+m1j)+m2j into V(4+j) and t1j = (m1j−m2j)−m3j into V(8+j).
func winoOutputCols(z string) {
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	for j := 0; j < 4; j++ {
		// ξ = j (row 0) is at SI + j·mStride; rows i add 4i·mStride.
		switch j {
		case 0:
			p("\tMOVQ SI, BX")
		case 1:
			p("\tLEAQ (SI)(R9*1), BX")
		case 2:
			p("\tLEAQ (SI)(R9*2), BX")
		case 3:
			p("\tLEAQ (SI)(R13*1), BX")
		}
		for i := 0; i < 4; i++ {
			if i > 0 {
				p("\tLEAQ (BX)(R9*4), BX")
			}
			p("\tVMOVUPS (BX), %s", v(i))
		}
		vop("ADD", v(0), v(1), v(4+j))
		vop("ADD", v(4+j), v(2), v(4+j))
		vop("SUB", v(1), v(2), v(8+j))
		vop("SUB", v(8+j), v(3), v(8+j))
	}
}

// winoOutputRow emits output row r of the step before interleaving: the
// even columns ((tr0+tr1)+tr2)+b into V0, the odd ((tr1−tr2)−tr3)+b into
// V1 (b in V12).
func winoOutputRow(z string, r int) {
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	t := func(j int) string { return v(4 + 4*r + j) }
	vop("ADD", t(0), t(1), v(0))
	vop("ADD", v(0), t(2), v(0))
	vop("ADD", v(0), v(12), v(0))
	vop("SUB", t(1), t(2), v(1))
	vop("SUB", v(1), t(3), v(1))
	vop("ADD", v(1), v(12), v(1))
}

// winoInterleave emits the interleaving of the even (V0) and odd (V1)
// columns of an output row into its first w columns (V2) and the next w
// (V3).
func winoInterleave(w int) {
	if w == 16 {
		p("\tVMOVDQU32 winoIlv<>+0(SB), Z2")
		p("\tVPERMI2PS Z1, Z0, Z2")
		p("\tVMOVDQU32 winoIlv<>+64(SB), Z3")
		p("\tVPERMI2PS Z1, Z0, Z3")
		return
	}
	p("\tVUNPCKLPS Y1, Y0, Y13")
	p("\tVUNPCKHPS Y1, Y0, Y14")
	p("\tVPERM2F128 $0x20, Y14, Y13, Y2")
	p("\tVPERM2F128 $0x31, Y14, Y13, Y3")
}

// winoOutputAct emits the activation of the output transform on V2 and V3
// (z the register prefix), as the GEMM epilogue (operand order included):
// the flags and bounds of the winoEpilogue at R10, AX and V0, V1, V13
// clobbered; sfx makes its labels unique.
func winoOutputAct(z, sfx string) {
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	p("\tMOVQ 0(R10), AX")
	p("\tTESTQ $4, AX")
	p("\tJEQ nolo%s", sfx)
	p("\tVBROADCASTSS 12(R10), %s", v(13))
	p("\tVMAXPS %s, %s, %s", v(2), v(13), v(2))
	p("\tVMAXPS %s, %s, %s", v(3), v(13), v(3))
	p("nolo%s:", sfx)
	p("\tTESTQ $8, AX")
	p("\tJEQ nohi%s", sfx)
	p("\tVBROADCASTSS 16(R10), %s", v(13))
	p("\tVMINPS %s, %s, %s", v(2), v(13), v(2))
	p("\tVMINPS %s, %s, %s", v(3), v(13), v(3))
	p("nohi%s:", sfx)
	p("\tTESTQ $16, AX")
	p("\tJEQ noleaky%s", sfx)
	p("\tVXORPS %s, %s, %s", v(13), v(13), v(13))
	for _, x := range []int{2, 3} {
		p("\tVMINPS %s, %s, %s", v(13), v(x), v(0))
		p("\tVMAXPS %s, %s, %s", v(x), v(13), v(x))
		p("\tVBROADCASTSS 20(R10), %s", v(1))
		p("\tVFMADD231PS %s, %s, %s", v(0), v(1), v(x))
	}
	p("noleaky%s:", sfx)
}

// winoOutputRows emits the output transform of rows of n tiles, n = 4 or
// 8 (AVX-512, w = 16) or 4 (AVX2, w = 8), w/n tile rows per step, steps
// steps, every output row and column written (2n columns, 2 rows per tile
// row): winoOutput(w)'s arithmetic on vectors whose lane groups of n come
// from successive tile rows (their w tiles consecutive in M), each
// interleaved output row (2w columns: V2, then V3) stored, and the
// residual loaded, whole (two tile rows per step) or by halves (four) to
// and from its own row.
func winoOutputRows(w, n int) {
	name, z := isaName(w)
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	per := w / n
	p("")
	p("// func winoOutputRows%d%s(dst *float32, dstStride int, m *float32, mStride int, ep *winoEpilogue, res *float32, steps int)", n, name)
	p("TEXT ·winoOutputRows%d%s(SB), NOSPLIT, $0-56", n, name)
	p("\tMOVQ dstStride+8(FP), R8")
	p("\tSHLQ $2, R8")
	p("\tMOVQ mStride+24(FP), R9")
	p("\tSHLQ $2, R9")
	p("\tLEAQ (R9)(R9*2), R13 // 3·mStride")
	p("\tMOVQ ep+32(FP), R10")
	p("\tVBROADCASTSS 8(R10), %s", v(12))
	p("\tMOVQ dst+0(FP), DI")
	p("\tMOVQ m+16(FP), SI")
	p("\tMOVQ res+40(FP), R11")
	p("\tMOVQ steps+48(FP), CX")
	p("\tTESTQ CX, CX")
	p("\tJLE done")
	p("loop:")
	winoOutputCols(z)
	for r := 0; r < 2; r++ {
		winoOutputRow(z, r)
		winoInterleave(w)
		// V2 holds output row r of the step's first tile row (and the
		// second's, four per step), V3 of the next: rows r, r+2 (r+4,
		// r+6) from BX.
		p("\tTESTQ R11, R11")
		p("\tJEQ nores%d", r)
		if r == 0 {
			p("\tMOVQ R11, BX")
		} else {
			p("\tLEAQ (R11)(R8*1), BX")
		}
		if per == 2 {
			p("\tVADDPS (BX), %s, %s", v(2), v(2))
			p("\tVADDPS (BX)(R8*2), %s, %s", v(3), v(3))
		} else {
			p("\tLEAQ (BX)(R8*4), R14")
			p("\tVMOVUPS (BX), Y13")
			p("\tVINSERTF32X8 $1, (BX)(R8*2), Z13, Z13")
			p("\tVADDPS Z13, Z2, Z2")
			p("\tVMOVUPS (R14), Y13")
			p("\tVINSERTF32X8 $1, (R14)(R8*2), Z13, Z13")
			p("\tVADDPS Z13, Z3, Z3")
		}
		p("nores%d:", r)
		winoOutputAct(z, fmt.Sprint(r))
		if r == 0 {
			p("\tMOVQ DI, BX")
		} else {
			p("\tLEAQ (DI)(R8*1), BX")
		}
		if per == 2 {
			p("\tVMOVUPS %s, (BX)", v(2))
			p("\tVMOVUPS %s, (BX)(R8*2)", v(3))
		} else {
			p("\tLEAQ (BX)(R8*4), R14")
			p("\tVMOVUPS Y2, (BX)")
			p("\tVEXTRACTF32X8 $1, Z2, (BX)(R8*2)")
			p("\tVMOVUPS Y3, (R14)")
			p("\tVEXTRACTF32X8 $1, Z3, (R14)(R8*2)")
		}
	}
	// Next step: w tiles in M, 2w/n output rows in dst and res.
	p("\tADDQ $%d, SI", 4*w)
	p("\tLEAQ (R8)(R8*1), AX")
	p("\tIMULQ $%d, AX", per)
	p("\tADDQ AX, DI")
	p("\tTESTQ R11, R11")
	p("\tJEQ nores")
	p("\tADDQ AX, R11")
	p("nores:")
	p("\tDECQ CX")
	p("\tJGT loop")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// deinterleave emits a copy of rows rows of 2n (+1 when odd is 1) values
// splitting even and odd positions: w pairs per step, then the remaining
// pairs (AVX-512: in one masked step; AVX2: two at a time), then the odd
// last value (to a).
func deinterleave(w int) {
	name, z := isaName(w)
	v := func(i int) string { return fmt.Sprintf("%s%d", z, i) }
	p("")
	p("// func deinterleave%s(a, b, src *float32, n, rows, srcStride, dstStride, odd int)", name)
	p("TEXT ·deinterleave%s(SB), NOSPLIT, $0-64", name)
	p("\tMOVQ a+0(FP), R8")
	p("\tMOVQ b+8(FP), R9")
	p("\tMOVQ src+16(FP), R10")
	p("\tMOVQ n+24(FP), R11")
	p("\tMOVQ rows+32(FP), R12")
	p("\tMOVQ srcStride+40(FP), R13")
	p("\tSHLQ $2, R13")
	p("\tMOVQ dstStride+48(FP), AX")
	p("\tSHLQ $2, AX")
	p("\tMOVQ odd+56(FP), BX")
	p("\tTESTQ R12, R12")
	p("\tJLE done")
	if w == 16 {
		p("\tVMOVDQU32 winoIlv<>+128(SB), Z30")
		p("\tVMOVDQU32 winoIlv<>+192(SB), Z31")
	}
	p("row:")
	p("\tMOVQ R8, DI")
	p("\tMOVQ R9, DX")
	p("\tMOVQ R10, SI")
	p("\tMOVQ R11, CX")
	p("\tCMPQ CX, $%d", w)
	p("\tJLT pairs")
	p("loop:")
	p("\tVMOVUPS (SI), %s", v(0))
	p("\tVMOVUPS %d(SI), %s", 4*w, v(1))
	if w == 16 {
		p("\tVMOVAPS Z30, Z2")
		p("\tVPERMI2PS Z1, Z0, Z2")
		p("\tVMOVAPS Z31, Z3")
		p("\tVPERMI2PS Z1, Z0, Z3")
	} else {
		p("\tVSHUFPS $0x88, Y1, Y0, Y2")
		p("\tVPERMPD $0xd8, Y2, Y2")
		p("\tVSHUFPS $0xdd, Y1, Y0, Y3")
		p("\tVPERMPD $0xd8, Y3, Y3")
	}
	p("\tVMOVUPS %s, (DI)", v(2))
	p("\tVMOVUPS %s, (DX)", v(3))
	p("\tADDQ $%d, SI", 8*w)
	p("\tADDQ $%d, DI", 4*w)
	p("\tADDQ $%d, DX", 4*w)
	p("\tSUBQ $%d, CX", w)
	p("\tCMPQ CX, $%d", w)
	p("\tJGE loop")
	p("pairs:")
	p("\tTESTQ CX, CX")
	p("\tJEQ last")
	if w == 16 {
		// The 1–15 remaining pairs in one masked step: K2 and K3 the
		// 2·CX values read (masked-off lanes do not fault), K1 the CX
		// written to each half.
		p("\tMOVQ $1, R14")
		p("\tSHLQ CX, R14")
		p("\tDECQ R14")
		p("\tKMOVW R14, K1")
		p("\tMOVQ $1, R14")
		p("\tSHLQ CX, R14")
		p("\tSHLQ CX, R14")
		p("\tDECQ R14")
		p("\tKMOVW R14, K2")
		p("\tSHRQ $16, R14")
		p("\tKMOVW R14, K3")
		p("\tVMOVUPS.Z (SI), K2, Z0")
		p("\tVMOVUPS.Z 64(SI), K3, Z1")
		p("\tVMOVAPS Z30, Z2")
		p("\tVPERMI2PS Z1, Z0, Z2")
		p("\tVMOVAPS Z31, Z3")
		p("\tVPERMI2PS Z1, Z0, Z3")
		p("\tVMOVUPS Z2, K1, (DI)")
		p("\tVMOVUPS Z3, K1, (DX)")
		p("\tLEAQ (SI)(CX*8), SI")
		p("\tLEAQ (DI)(CX*4), DI")
		p("\tJMP last")
	} else {
		// Two pairs at a time in the low 128 bits (VMASKMOVPS, which
		// would take all 1–7 at once, is slower than the scalar loop on
		// AMD Zen 4), the last one alone.
		p("\tCMPQ CX, $2")
		p("\tJLT one")
		p("\tVMOVUPS (SI), X0")
		p("\tVSHUFPS $0x88, X0, X0, X2")
		p("\tVSHUFPS $0xdd, X0, X0, X3")
		p("\tVMOVLPS X2, (DI)")
		p("\tVMOVLPS X3, (DX)")
		p("\tADDQ $16, SI")
		p("\tADDQ $8, DI")
		p("\tADDQ $8, DX")
		p("\tSUBQ $2, CX")
		p("\tJMP pairs")
		p("one:")
	}
	p("\tVMOVSS (SI), X4")
	p("\tVMOVSS X4, (DI)")
	p("\tVMOVSS 4(SI), X4")
	p("\tVMOVSS X4, (DX)")
	p("\tADDQ $8, SI")
	p("\tADDQ $4, DI")
	p("\tADDQ $4, DX")
	p("\tDECQ CX")
	p("\tJMP pairs")
	p("last:")
	p("\tTESTQ BX, BX")
	p("\tJEQ next")
	p("\tVMOVSS (SI), X4")
	p("\tVMOVSS X4, (DI)")
	p("next:")
	p("\tADDQ R13, R10")
	p("\tADDQ AX, R8")
	p("\tADDQ AX, R9")
	p("\tDECQ R12")
	p("\tJGT row")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// poolFile emits the stride-2 max pooling kernels: k×k windows (k = 2 or
// 3) over rows rows of n outputs, in one pass (see maxPoolS2Go).
func poolFile() {
	p("// Code generated by gen_amd64.go; DO NOT EDIT.")
	p("")
	p("//go:build amd64 && !noasm")
	p("")
	p("#include \"textflag.h\"")
	p("")
	p("// Max pooling with k×k windows (k = 2, 3) and stride 2 (see maxPoolS2Go):")
	p("// the window's rows are reduced first (vertical maxima of 2n+k−2 columns),")
	p("// then even and odd columns are separated and combined. A NaN in a window")
	p("// gives NaN.")
	for i := 0; i < 16; i++ {
		p("DATA poolIdx<>+%d(SB)/4, $%d", 4*i, 2*i)
	}
	for i := 0; i < 16; i++ {
		p("DATA poolIdx<>+%d(SB)/4, $%d", 64+4*i, 2*i+1)
	}
	p("GLOBL poolIdx<>(SB), RODATA|NOPTR, $128")
	for i := 0; i < 16; i++ {
		v := "$0xffffffff"
		if i >= 8 {
			v = "$0"
		}
		p("DATA poolMask<>+%d(SB)/4, %s", 4*i, v)
	}
	p("GLOBL poolMask<>(SB), RODATA|NOPTR, $64")
	for _, k := range []int{2, 3} {
		pool512(k)
		pool2(k)
	}
}

const poolHeader = `	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ inW+16(FP), R8
	SHLQ $2, R8
	MOVQ outW+24(FP), R9
	SHLQ $2, R9
	MOVQ rows+32(FP), R10
	MOVQ n+40(FP), R11
	TESTQ R10, R10
	JLE done
	TESTQ R11, R11
	JLE done`

// clampMask emits reg = min(max(AX − sub, 0), w) (clobbers BX); AX keeps
// its value.
func clampTo(dst string, sub, w int) {
	p("\tMOVQ AX, %s", dst)
	if sub > 0 {
		p("\tSUBQ $%d, %s", sub, dst)
	}
	p("\tXORQ BX, BX")
	p("\tCMPQ %s, $0", dst)
	p("\tCMOVQLT BX, %s", dst)
	p("\tMOVQ $%d, BX", w)
	p("\tCMPQ %s, BX", dst)
	p("\tCMOVQGT BX, %s", dst)
}

// pool512: per step 16 outputs. Column masks (valid input columns of the
// step in AX): K1 [0,16), K2 [16,32), K3 [2,18), K4 [18,34); K5 outputs.
// Vertical maxima: Z0 (columns 0-15), Z2 (16-31), Z4 (2-17), Z5 (18-33).
func pool512(k int) {
	p("")
	p("// func maxPool%ds2AVX512(dst, src *float32, inW, outW, rows, n int)", k)
	p("TEXT ·maxPool%ds2AVX512(SB), NOSPLIT, $0-48", k)
	p(poolHeader)
	p("\tVMOVDQU32 poolIdx<>+0(SB), Z30")
	p("\tVMOVDQU32 poolIdx<>+64(SB), Z31")
	p("row:")
	p("\tMOVQ SI, R12")
	p("\tMOVQ DI, R13")
	p("\tMOVQ R11, CX")
	p("\tLEAQ (R11*2), AX")
	if k == 3 {
		p("\tINCQ AX // input columns of the row's windows: 2n+1")
	}
	p("chunk:")
	masks := []struct {
		k   string
		sub int
	}{{"K1", 0}, {"K2", 16}, {"K3", 2}, {"K4", 18}}
	if k == 2 {
		masks = masks[:2]
	}
	for _, m := range masks {
		clampTo("DX", m.sub, 16)
		p("\tMOVQ $0xffff, BX")
		p("\tBZHIQ DX, BX, DX")
		p("\tKMOVW DX, %s", m.k)
	}
	p("\tMOVQ CX, DX")
	p("\tMOVQ $16, BX")
	p("\tCMPQ DX, BX")
	p("\tCMOVQGT BX, DX")
	p("\tMOVQ $0xffff, BX")
	p("\tBZHIQ DX, BX, DX")
	p("\tKMOVW DX, K5")
	// Vertical maxima.
	vert := func(off int, mask, dst string) {
		p("\tVMOVUPS.Z %d(R12), %s, %s", off, mask, dst)
		for r := 1; r < k; r++ {
			if r == 1 {
				p("\tVMOVUPS.Z %d(R12)(R8*1), %s, Z6", off, mask)
			} else {
				p("\tVMOVUPS.Z %d(R12)(R8*2), %s, Z6", off, mask)
			}
			nanmax512(dst, "Z6", dst)
		}
	}
	vert(0, "K1", "Z0")
	vert(64, "K2", "Z2")
	if k == 3 {
		vert(8, "K3", "Z4")
		vert(72, "K4", "Z5")
	}
	// Even and odd columns.
	p("\tVMOVAPS Z30, Z7")
	p("\tVPERMI2PS Z2, Z0, Z7")
	p("\tVMOVAPS Z31, Z8")
	p("\tVPERMI2PS Z2, Z0, Z8")
	nanmax512("Z7", "Z8", "Z7")
	if k == 3 {
		p("\tVMOVAPS Z30, Z9")
		p("\tVPERMI2PS Z5, Z4, Z9")
		nanmax512("Z7", "Z9", "Z7")
	}
	p("\tVMOVUPS Z7, K5, (R13)")
	p("\tADDQ $128, R12")
	p("\tADDQ $64, R13")
	p("\tSUBQ $32, AX")
	p("\tSUBQ $16, CX")
	p("\tJGT chunk")
	p("\tLEAQ (SI)(R8*2), SI")
	p("\tADDQ R9, DI")
	p("\tDECQ R10")
	p("\tJGT row")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// nanmax512 emits dst = max(a, b), NaN when either is NaN (K6 and Z10
// scratch; dst may be a or b).
func nanmax512(a, b, dst string) {
	p("\tVCMPPS $3, %s, %s, K6", a, a)
	p("\tVMAXPS %s, %s, Z10", b, a) // a > b ? a : b (b when either is NaN)
	p("\tVMOVAPS %s, K6, Z10", a)   // a where a is NaN
	p("\tVMOVAPS Z10, %s", dst)
}

// pool2: per step 8 outputs. Full steps use plain loads and stores
// (VMASKMOVPS is slow on some CPUs, AMD's in particular); the last, partial
// step masks them: valid input columns in AX, masks from poolMask: Y12
// [0,8), Y13 [8,16), Y14 [2,10), Y15 [10,18); outputs Y11. Vertical
// maxima: Y0 (columns 0-7), Y1 (8-15), Y2 (2-9), Y3 (10-17).
func pool2(k int) {
	p("")
	p("// func maxPool%ds2AVX2(dst, src *float32, inW, outW, rows, n int)", k)
	p("TEXT ·maxPool%ds2AVX2(SB), NOSPLIT, $0-48", k)
	p(poolHeader)
	p("row:")
	p("\tMOVQ SI, R12")
	p("\tMOVQ DI, R13")
	p("\tMOVQ R11, CX")
	p("\tLEAQ (R11*2), AX")
	if k == 3 {
		p("\tINCQ AX")
	}
	p("chunk:")
	// A full step needs 8 outputs and 16 (k=2) or 18 (k=3) input columns.
	p("\tCMPQ AX, $%d", 14+2*k)
	p("\tJLT tail")
	pool2Step(k, false)
	p("\tJMP next")
	p("tail:")
	pool2Step(k, true)
	p("next:")
	p("\tADDQ $64, R12")
	p("\tADDQ $32, R13")
	p("\tSUBQ $16, AX")
	p("\tSUBQ $8, CX")
	p("\tJGT chunk")
	p("\tLEAQ (SI)(R8*2), SI")
	p("\tADDQ R9, DI")
	p("\tDECQ R10")
	p("\tJGT row")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// pool2Step emits one step of pool2, masked or not.
func pool2Step(k int, masked bool) {
	if masked {
		masks := []struct {
			y   int
			sub int
		}{{12, 0}, {13, 8}, {14, 2}, {15, 10}}
		if k == 2 {
			masks = masks[:2]
		}
		for _, m := range masks {
			clampTo("DX", m.sub, 8)
			p("\tNEGQ DX")
			p("\tLEAQ poolMask<>+32(SB), BX")
			p("\tVMOVDQU (BX)(DX*4), Y%d", m.y)
		}
		p("\tMOVQ CX, DX")
		p("\tMOVQ $8, BX")
		p("\tCMPQ DX, BX")
		p("\tCMOVQGT BX, DX")
		p("\tNEGQ DX")
		p("\tLEAQ poolMask<>+32(SB), BX")
		p("\tVMOVDQU (BX)(DX*4), Y11")
	}
	ld := func(addr string, mask, dst int) {
		if masked {
			p("\tVMASKMOVPS %s, Y%d, Y%d", addr, mask, dst)
		} else {
			p("\tVMOVUPS %s, Y%d", addr, dst)
		}
	}
	vert := func(off int, mask, dst int) {
		ld(fmt.Sprintf("%d(R12)", off), mask, dst)
		for r := 1; r < k; r++ {
			ld(fmt.Sprintf("%d(R12)(R8*%d)", off, r), mask, 6)
			nanmax2(fmt.Sprintf("Y%d", dst), "Y6", fmt.Sprintf("Y%d", dst))
		}
	}
	vert(0, 12, 0)
	vert(32, 13, 1)
	if k == 3 {
		vert(8, 14, 2)
		vert(40, 15, 3)
	}
	evenOdd := func(a, b, ev, od string) {
		p("\tVSHUFPS $0x88, %s, %s, %s", b, a, ev)
		p("\tVPERMPD $0xd8, %s, %s", ev, ev)
		if od != "" {
			p("\tVSHUFPS $0xdd, %s, %s, %s", b, a, od)
			p("\tVPERMPD $0xd8, %s, %s", od, od)
		}
	}
	evenOdd("Y0", "Y1", "Y7", "Y8")
	nanmax2("Y7", "Y8", "Y7")
	if k == 3 {
		evenOdd("Y2", "Y3", "Y9", "")
		nanmax2("Y7", "Y9", "Y7")
	}
	if masked {
		p("\tVMASKMOVPS Y7, Y11, (R13)")
	} else {
		p("\tVMOVUPS Y7, (R13)")
	}
}

// nanmax2 emits dst = max(a, b), NaN when either is NaN (Y10 scratch; dst
// may be a, not b).
func nanmax2(a, b, dst string) {
	p("\tVCMPPS $3, %s, %s, Y10", a, a)
	p("\tVMAXPS %s, %s, %s", b, a, dst)
	p("\tVORPS Y10, %s, %s", dst, dst)
}

// gemvFile emits sgemvFMA (AVX2 and FMA, 128-bit vectors: one per packed
// 4-row panel of A). Eight panels at a time, so that eight independent
// FMA chains hide the FMA latency, then the panels left one at a time.
// Registers: accumulators X0-X7, the broadcast element of B in X8,
// epilogue temporaries X9-X11; panel bases SI, R9, R14, R15 (panels 0-3)
// and the same plus 4 panel strides (R11·4: panels 4-7).
func gemvFile() {
	p("// Code generated by gen_amd64.go; DO NOT EDIT.")
	p("")
	p("//go:build amd64 && !noasm")
	p("")
	p("#include \"textflag.h\"")
	p("")
	p("// func sgemvFMA(k int, a *float32, panelStride int, panels int, b *float32, boff *int, t *float32, ep *epilogue)")
	p("// t[4q:4q+4] = epilogue(Σ_p a[q·panelStride+4p:][:4] · b[boff[p]]) for q < panels; with")
	p("// epAccumulate, t holds C's old values on entry.")
	p("TEXT ·sgemvFMA(SB), NOSPLIT, $0-64")
	p("\tMOVQ a+8(FP), SI")
	p("\tMOVQ panelStride+16(FP), R11")
	p("\tSHLQ $2, R11")
	p("\tMOVQ panels+24(FP), DX")
	p("\tMOVQ b+32(FP), DI")
	p("\tMOVQ t+48(FP), R12")
	p("\tMOVQ ep+56(FP), R10")
	p("\tMOVQ 8(R10), R13 // bias of the current panel")
	p("group8:")
	p("\tCMPQ DX, $8")
	p("\tJLT group1")
	p("\tMOVQ SI, BX")
	p("\tLEAQ (SI)(R11*1), R9")
	p("\tLEAQ (SI)(R11*2), R14")
	p("\tLEAQ (R9)(R11*2), R15")
	for x := 0; x < 8; x++ {
		p("\tVXORPS X%d, X%d, X%d", x, x, x)
	}
	p("\tMOVQ k+0(FP), CX")
	p("\tMOVQ boff+40(FP), R8")
	p("\tTESTQ CX, CX")
	p("\tJEQ epi8")
	p("loop8:")
	p("\tMOVQ (R8), AX")
	p("\tVBROADCASTSS (DI)(AX*4), X8")
	for q, base := range []string{"BX", "R9", "R14", "R15"} {
		p("\tVFMADD231PS (%s), X8, X%d", base, q)
		p("\tVFMADD231PS (%s)(R11*4), X8, X%d", base, q+4)
	}
	for _, base := range []string{"BX", "R9", "R14", "R15"} {
		p("\tADDQ $16, %s", base)
	}
	p("\tADDQ $8, R8")
	p("\tDECQ CX")
	p("\tJNE loop8")
	p("epi8:")
	gemvEpilogue(8, "8")
	p("\tLEAQ (SI)(R11*8), SI")
	p("\tADDQ $128, R12")
	p("\tADDQ $128, R13")
	p("\tSUBQ $8, DX")
	p("\tJMP group8")
	p("group1:")
	p("\tTESTQ DX, DX")
	p("\tJEQ done")
	p("\tMOVQ SI, BX")
	p("\tVXORPS X0, X0, X0")
	p("\tMOVQ k+0(FP), CX")
	p("\tMOVQ boff+40(FP), R8")
	p("\tTESTQ CX, CX")
	p("\tJEQ epi1")
	p("loop1:")
	p("\tMOVQ (R8), AX")
	p("\tVBROADCASTSS (DI)(AX*4), X8")
	p("\tVFMADD231PS (BX), X8, X0")
	p("\tADDQ $16, BX")
	p("\tADDQ $8, R8")
	p("\tDECQ CX")
	p("\tJNE loop1")
	p("epi1:")
	gemvEpilogue(1, "1")
	p("\tADDQ R11, SI")
	p("\tADDQ $16, R12")
	p("\tADDQ $16, R13")
	p("\tDECQ DX")
	p("\tJMP group1")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// gemvEpilogue emits the epilogue of n accumulators X0..X(n−1), rows
// 4q..4q+3 of t (R12) and of the bias (R13): the micro-kernels' additions
// (C's old values, then the bias), actEpilogue, and the store to t.
func gemvEpilogue(n int, sfx string) {
	var accs []string
	for x := 0; x < n; x++ {
		accs = append(accs, fmt.Sprintf("X%d", x))
	}
	p("\tMOVQ 0(R10), AX")
	p("\tTESTQ $1, AX")
	p("\tJEQ nobeta%s", sfx)
	for x, a := range accs {
		p("\tVADDPS %d(R12), %s, %s", 16*x, a, a)
	}
	p("nobeta%s:", sfx)
	p("\tTESTQ $2, AX")
	p("\tJEQ nobias%s", sfx)
	for x, a := range accs {
		p("\tVADDPS %d(R13), %s, %s", 16*x, a, a)
	}
	p("nobias%s:", sfx)
	actEpilogue(accs, "VXORPS", "X9", "X10", "X11", sfx)
	for x, a := range accs {
		p("\tVMOVUPS %s, %d(R12)", a, 16*x)
	}
}

// actEpilogue emits the activation part of the micro-kernels' epilogue,
// one instruction sequence for every kernel (so that all give the same
// bits): with the flags in AX and the epilogue at R10, max(x, lo)
// (epMaxLo), min(x, hi) (epMinHi), max(x, 0) + alpha·min(x, 0) (epLeaky)
// on the accumulators accs, using the temporaries t0, t1, t2 (xor zeroes
// t0), then the label store+sfx.
func actEpilogue(accs []string, xor, t0, t1, t2, sfx string) {
	p("\tTESTQ $4, AX")
	p("\tJEQ nolo%s", sfx)
	p("\tVBROADCASTSS 16(R10), %s", t0)
	for _, a := range accs {
		p("\tVMAXPS %s, %s, %s", a, t0, a)
	}
	p("nolo%s:", sfx)
	p("\tTESTQ $8, AX")
	p("\tJEQ nohi%s", sfx)
	p("\tVBROADCASTSS 20(R10), %s", t0)
	for _, a := range accs {
		p("\tVMINPS %s, %s, %s", a, t0, a)
	}
	p("nohi%s:", sfx)
	p("\tTESTQ $16, AX")
	p("\tJEQ store%s", sfx)
	p("\t%s %s, %s, %s", xor, t0, t0, t0)
	p("\tVBROADCASTSS 24(R10), %s", t1)
	for _, a := range accs {
		p("\tVMINPS %s, %s, %s", t0, a, t2)
		p("\tVMAXPS %s, %s, %s", a, t0, a)
		p("\tVFMADD231PS %s, %s, %s", t2, t1, a)
	}
	p("store%s:", sfx)
}
