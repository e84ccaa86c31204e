//go:build ignore

package main

import "fmt"

// aPrefetch is how far ahead (bytes) the AVX-512 micro-kernels prefetch
// their packed A panels, one 64-byte line per 4 depth steps (the 16 bytes
// a panel advances per step). Inside a model the weights of a layer come
// from memory rather than cache (the layers before evicted them), and a
// tile's sweep down a column panel reads them once, so fetching them
// ahead hides the memory latency the loads would otherwise wait for; at
// large batches, where the weights stay in cache, it costs nothing.
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
	params, frame := "k int, a *float32, aStride int, b *float32, boff *int, c *float32, ldc int, ep *epilogue, rows int, mask uint64, pf int", "0-88"
	if tiles {
		// Frame: 0(SP) k, 8(SP) boff, 16(SP) the current tile's bias, 24(SP) tiles left.
		params, frame = params+", tiles int", "32-96"
	}
	fn(name, params, frame)
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
	depthLoop(func() { step(rows, nv) }, func() {
		// A's panels aPrefetch bytes ahead, a cache line per 4 steps (see
		// aPrefetch).
		p("\tPREFETCHT0 %d(SI)", aPrefetch)
		if rows > 4 {
			p("\tPREFETCHT0 %d(R11)", aPrefetch)
		}
	})
	p("\tMOVQ 0(R10), AX")
	// Accumulate: acc = acc + C (the same operation as the AVX2 kernel's
	// VADDPS mem, acc; addition commutes bit for bit).
	p("\tTESTQ $1, AX")
	p("\tJEQ nobeta")
	cRows(rows, nv, "nobeta", func(r, v int) {
		a := acc(r, v, nv)
		if v == nv-1 {
			p("\tVADDPS %d(BX), %s, K1, %s", 64*v, a, a)
		} else {
			p("\tVADDPS %d(BX), %s, %s", 64*v, a, a)
		}
	})
	p("nobeta:")
	p("\tTESTQ $2, AX")
	p("\tJEQ nobias")
	if tiles {
		p("\tMOVQ 16(SP), BX")
	} else {
		p("\tMOVQ 8(R10), BX")
	}
	addBias(rows, nv, "Z29", func(r, v int) string { return acc(r, v, nv) })
	p("nobias:")
	var accs []string
	all(rows, nv, func(a string) { accs = append(accs, a) })
	actEpilogue(accs, "VPXORD", "Z29", "Z30", "Z31", "")
	cRows(rows, nv, "done", func(r, v int) {
		a := acc(r, v, nv)
		if v == nv-1 {
			p("\tVMOVUPS %s, K1, %d(BX)", a, 64*v)
		} else {
			p("\tVMOVUPS %s, %d(BX)", a, 64*v)
		}
	})
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

// depthLoop emits the loop over the depth CX (clobbered, and BX): step
// four times per iteration, then every4, then step once per remaining
// depth; it ends at the label epi.
func depthLoop(step, every4 func()) {
	p("\tMOVQ CX, BX")
	p("\tSHRQ $2, BX")
	p("\tANDQ $3, CX")
	p("\tTESTQ BX, BX")
	p("\tJEQ tail")
	p("loop4:")
	for u := 0; u < 4; u++ {
		step()
	}
	if every4 != nil {
		every4()
	}
	p("\tDECQ BX")
	p("\tJNE loop4")
	p("tail:")
	p("\tTESTQ CX, CX")
	p("\tJEQ epi")
	p("loop1:")
	step()
	p("\tDECQ CX")
	p("\tJNE loop1")
	p("epi:")
}

// cRows emits f(r, v) for each vector v of each row r of a tile of rows
// rows of nv vectors of C, with BX the address of the row (DX, then R9
// bytes on each row). With skip set, only the first R12 rows: past them it
// jumps to skip.
func cRows(rows, nv int, skip string, f func(r, v int)) {
	p("\tMOVQ DX, BX")
	for r := 0; r < rows; r++ {
		if r > 0 {
			if skip != "" {
				p("\tCMPQ R12, $%d", r)
				p("\tJLE %s", skip)
			}
			p("\tADDQ R9, BX")
		}
		for v := 0; v < nv; v++ {
			f(r, v)
		}
	}
}

// addBias emits the addition of the bias at BX, one value per row
// broadcast into t, to the accumulators acc(r, v) of rows rows of nv
// vectors.
func addBias(rows, nv int, t string, acc func(r, v int) string) {
	for r := 0; r < rows; r++ {
		p("\tVBROADCASTSS %d(BX), %s", 4*r, t)
		for v := 0; v < nv; v++ {
			a := acc(r, v)
			p("\tVADDPS %s, %s, %s", t, a, a)
		}
	}
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

func gemmFile() {
	fileHeader()
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
	fn(name, "k int, a, b *float32, boff *int, c *float32, ldc int, ep *epilogue, tiles int, pf int, mask *int32", "16-80")
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
	depthLoop(func() { avx2Step(nv, acc) }, nil)
	last := func(v int) bool { return masked && v == nv-1 }
	if masked {
		p("\tVMOVDQU (R14), Y3")
	}
	p("\tMOVQ 0(R10), AX")
	p("\tTESTQ $1, AX")
	p("\tJEQ nobeta")
	cRows(4, nv, "", func(r, v int) {
		a := acc(r, v)
		if last(v) {
			p("\tVMASKMOVPS %d(BX), Y3, Y0", 32*v)
			p("\tVADDPS Y0, %s, %s", a, a)
		} else {
			p("\tVADDPS %d(BX), %s, %s", 32*v, a, a)
		}
	})
	p("nobeta:")
	p("\tTESTQ $2, AX")
	p("\tJEQ nobias")
	p("\tMOVQ 0(SP), BX")
	addBias(4, nv, "Y0", acc)
	p("nobias:")
	var accs []string
	for r := 0; r < 4; r++ {
		for v := 0; v < nv; v++ {
			accs = append(accs, acc(r, v))
		}
	}
	actEpilogue(accs, "VXORPS", "Y0", "Y1", "Y2", "")
	cRows(4, nv, "", func(r, v int) {
		if last(v) {
			p("\tVMASKMOVPS %s, Y3, %d(BX)", acc(r, v), 32*v)
		} else {
			p("\tVMOVUPS %s, %d(BX)", acc(r, v), 32*v)
		}
	})
	// Next tile: A has advanced by 4k values already; C by 4 rows, the
	// bias by 4 values.
	p("\tLEAQ (DX)(R9*4), DX")
	p("\tADDQ $16, 0(SP)")
	p("\tDECQ R11")
	p("\tJNE tile")
	ret()
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
