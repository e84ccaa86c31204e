//go:build ignore

package main

import "fmt"

// winoOutput emits the output transform of tileRows rows of n tiles of
// one output channel, w tiles per step: the 16 values M[ξ] of each tile,
// the 2×2 outputs Aᵀ M A plus the bias, then for each of the (up to) 2
// output rows the even and odd columns interleaved into 2w columns, the
// residual added, the activation, and a store limited to the row's
// columns (full steps unmasked, the last step of a row masked: AVX-512
// computes its masks K1, K2 once per call). Frame: 0(SP) dst, 8(SP) m,
// 16(SP) res of the current tile row, 24(SP) output rows left, 32(SP) tile
// rows left.
//
// Registers: column j of M loads into V0-V3 (rows i = 0..3 of the 4×4 tile,
// ξ = 4i+j), t0j = (m0j+m1j)+m2j in V(4+j), t1j = (m1j−m2j)−m3j in V(8+j);
// output row r: even = ((tr0+tr1)+tr2)+b and odd = ((tr1−tr2)−tr3)+b in
// V0/V1, interleaved into V2/V3; b in V12; V13 temporary. Column masks:
// K1/K2 (AVX-512), V14/V15 from winoMask (AVX2).
func winoOutput(w int) {
	name, v := isa(w)
	fn("winoOutput"+name, "dst *float32, dstStride int, outRows int, m *float32, mStride int, n int, cols int, ep *winoEpilogue, res *float32, tileRows int", "40-80")
	p("\tMOVQ dstStride+8(FP), R8")
	p("\tSHLQ $2, R8")
	p("\tMOVQ mStride+32(FP), R9")
	p("\tSHLQ $2, R9")
	p("\tLEAQ (R9*4), R13 // 4·mStride")
	p("\tLEAQ (R13)(R13*2), R15 // 12·mStride")
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
	if w == 16 {
		// The last step's column masks, the same for every row: the
		// columns left after the full steps of 32.
		p("\tMOVQ cols+48(FP), DX")
		p("\tANDQ $31, DX")
		for k, kr := range []string{"K1", "K2"} {
			clampTo("AX", "DX", 16*k, 16)
			kmask("AX", kr)
		}
	}
	p("row:")
	p("\tMOVQ 0(SP), DI")
	p("\tMOVQ 8(SP), SI")
	p("\tMOVQ 16(SP), R11")
	p("\tMOVQ 24(SP), R12 // output rows left: this tile row writes min(2, R12)")
	p("\tMOVQ n+40(FP), CX")
	p("\tMOVQ cols+48(FP), DX")
	p("loop:")
	// Plain loads and stores while 2w columns remain, masked ones for the
	// last step (AVX2: VMASKMOVPS is slow on some CPUs).
	p("\tCMPQ DX, $%d", 2*w)
	p("\tJLT tail")
	winoOutputStep(w, false)
	p("\tJMP next")
	p("tail:")
	winoOutputStep(w, true)
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
	ret()
}

// winoOutputStep emits one step of winoOutput (w tiles), its loads of the
// residual and stores masked to the remaining columns or not.
func winoOutputStep(w int, masked bool) {
	_, v := isa(w)
	sfx := "f"
	if masked {
		sfx = "m"
	}
	winoOutputCols(v)
	for r := 0; r < 2; r++ {
		if r == 1 {
			p("\tCMPQ R12, $2")
			p("\tJLT next")
		}
		winoOutputRow(v, r)
		winoInterleave(w)
		if w == 8 {
			for k := 0; masked && k < 2; k++ {
				clampTo("AX", "DX", 8*k, 8)
				laneMask("winoMask", "AX", v(14+k))
			}
		}
		p("\tTESTQ R11, R11")
		p("\tJEQ nores%d%s", r, sfx)
		rowAddr("R11", r)
		if w == 16 && masked {
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
			p("\tVADDPS (BX), %s, %s", v(2), v(2))
			p("\tVADDPS %d(BX), %s, %s", 4*w, v(3), v(3))
		}
		p("nores%d%s:", r, sfx)
		winoOutputAct(v, fmt.Sprintf("%d%s", r, sfx))
		rowAddr("DI", r)
		if w == 16 && masked {
			p("\tVMOVUPS Z2, K1, (BX)")
			p("\tVMOVUPS Z3, K2, 64(BX)")
		} else if masked {
			p("\tVMASKMOVPS Y2, Y14, (BX)")
			p("\tVMASKMOVPS Y3, Y15, 32(BX)")
		} else {
			p("\tVMOVUPS %s, (BX)", v(2))
			p("\tVMOVUPS %s, %d(BX)", v(3), 4*w)
		}
	}
}

// rowAddr emits BX = the address of output row r (0 or 1) of the tile row
// at base (rows R8 bytes apart).
func rowAddr(base string, r int) {
	if r == 0 {
		p("\tMOVQ %s, BX", base)
	} else {
		p("\tLEAQ (%s)(R8*1), BX", base)
	}
}

// winoOutputCols emits the column pass of the output transform of one
// step: column j of M (ξ = j + 4i at SI + ξ·mStride; R13 holds 4·mStride
// and R15 12·mStride, in bytes) into V0–V3, then t0j = (m0j+m1j)+m2j into
// V(4+j) and t1j = (m1j−m2j)−m3j into V(8+j).
func winoOutputCols(v func(int) string) {
	for j := 0; j < 4; j++ {
		base := "BX"
		switch j {
		case 0:
			base = "SI"
		case 1:
			p("\tLEAQ (SI)(R9*1), BX")
		case 2:
			p("\tLEAQ (SI)(R9*2), BX")
		case 3:
			p("\tLEAQ (BX)(R9*1), BX")
		}
		for i, idx := range []string{"", "(R13*1)", "(R13*2)", "(R15*1)"} {
			p("\tVMOVUPS (%s)%s, %s", base, idx, v(i))
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
func winoOutputRow(v func(int) string, r int) {
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
// (v the vector registers), as the GEMM epilogue (operand order included):
// the flags and bounds of the winoEpilogue at R10, AX and V0, V1, V13
// clobbered; sfx makes its labels unique.
func winoOutputAct(v func(int) string, sfx string) {
	p("\tMOVQ 0(R10), AX")
	accs := []string{v(2), v(3)}
	bound(accs, 4, "VMAXPS", 12, v(13), "nolo"+sfx)
	bound(accs, 8, "VMINPS", 16, v(13), "nohi"+sfx)
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
	name, v := isa(w)
	per := w / n
	fn(fmt.Sprintf("winoOutputRows%d%s", n, name), "dst *float32, dstStride int, m *float32, mStride int, ep *winoEpilogue, res *float32, steps int", "0-56")
	p("\tMOVQ dstStride+8(FP), R8")
	p("\tSHLQ $2, R8")
	p("\tMOVQ mStride+24(FP), R9")
	p("\tSHLQ $2, R9")
	p("\tLEAQ (R9*4), R13 // 4·mStride")
	p("\tLEAQ (R13)(R13*2), R15 // 12·mStride")
	p("\tMOVQ ep+32(FP), R10")
	p("\tVBROADCASTSS 8(R10), %s", v(12))
	p("\tMOVQ dst+0(FP), DI")
	p("\tMOVQ m+16(FP), SI")
	p("\tMOVQ res+40(FP), R11")
	p("\tMOVQ steps+48(FP), CX")
	p("\tTESTQ CX, CX")
	p("\tJLE done")
	p("loop:")
	winoOutputCols(v)
	for r := 0; r < 2; r++ {
		winoOutputRow(v, r)
		winoInterleave(w)
		// V2 holds output row r of the step's first tile row (and the
		// second's, four per step), V3 of the next: rows r, r+2 (r+4,
		// r+6) from BX.
		p("\tTESTQ R11, R11")
		p("\tJEQ nores%d", r)
		rowAddr("R11", r)
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
		winoOutputAct(v, fmt.Sprint(r))
		rowAddr("DI", r)
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
	ret()
}

// deinterleave emits a copy of rows rows of 2n (+1 when odd is 1) values
// splitting even and odd positions: w pairs per step, then AVX-512 the
// remaining pairs and the odd last value in one masked step (its masks
// computed once per call), AVX2 the remaining pairs two at a time, then the
// odd last value (to a).
func deinterleave(w int) {
	name, v := isa(w)
	fn("deinterleave"+name, "a, b, src *float32, n, rows, srcStride, dstStride, odd int", "0-64")
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
		// The masks of the last, masked step, the same for every row:
		// the r = n mod 16 pairs left and the odd value, K2 and K3 the
		// 2r+odd values read (masked-off lanes do not fault), K1 the
		// r+odd written to a, K4 the r written to b.
		p("\tMOVQ R11, R14")
		p("\tANDQ $15, R14")
		lowBits := func(k ...string) {
			p("\tMOVQ $1, R15")
			p("\tSHLQ CX, R15")
			p("\tDECQ R15")
			for i, kr := range k {
				if i > 0 {
					p("\tSHRQ $16, R15")
				}
				p("\tKMOVW R15, %s", kr)
			}
		}
		p("\tMOVQ R14, CX")
		lowBits("K4")
		p("\tADDQ BX, CX")
		lowBits("K1")
		p("\tLEAQ (R14)(R14*1), CX")
		p("\tADDQ BX, CX")
		lowBits("K2", "K3")
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
	if w == 16 {
		// The remaining pairs and the odd value in one masked step.
		p("\tVMOVUPS.Z (SI), K2, Z0")
		p("\tVMOVUPS.Z 64(SI), K3, Z1")
		p("\tVMOVAPS Z30, Z2")
		p("\tVPERMI2PS Z1, Z0, Z2")
		p("\tVMOVAPS Z31, Z3")
		p("\tVPERMI2PS Z1, Z0, Z3")
		p("\tVMOVUPS Z2, K1, (DI)")
		p("\tVMOVUPS Z3, K4, (DX)")
		p("\tJMP next")
	} else {
		p("\tTESTQ CX, CX")
		p("\tJEQ last")
		// Two pairs at a time in the low 128 bits, the last one alone:
		// VMASKMOVPS would take all 1–7 at once but is microcoded and slow
		// on some processors (AMD's among them).
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
	}
	p("next:")
	p("\tADDQ R13, R10")
	p("\tADDQ AX, R8")
	p("\tADDQ AX, R9")
	p("\tDECQ R12")
	p("\tJGT row")
	ret()
}
