//go:build ignore

package main

import "fmt"

// winoInput emits the input transform of tileRows rows of n tiles, w tiles
// per step. Frame: 0(SP) the V row of the current tile row, 8(SP) its
// first padded row.
//
// AVX-512: d[i][j] in Z(4i+j), t[i][j] in Z(16+4i+j), then V[4i+b] back in
// Z(4i+b). AVX2 (16 registers): per row i of Bᵀ d, the two padded rows it
// combines in Y0-Y3 and Y4-Y7, t in Y8-Y11, V[4i..4i+3] in Y12-Y15.
func winoInput(w int) {
	name, v := isa(w)
	fn("winoInput"+name, "v *float32, vStride int, src *float32, hw int, n int, tileRows int", "16-48")
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
	ret()
}

// winoInputStep emits the transform of one step of winoInput(w) and
// winoInputRows(w, n) from the padded rows held in rows, whose 4 vectors
// (even, odd, even and odd one tile further) load(r, base) loads into
// registers base…base+3, and its stores to V (DI, row stride R8).
func winoInputStep(w int, rows []string, load func(r string, base int)) {
	_, v := isa(w)
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
	name, v := isa(w)
	per := w / n
	fn(fmt.Sprintf("winoInputRows%d%s", n, name), "v *float32, vStride int, src *float32, hw int, steps int", "0-40")
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
	ret()
}
