//go:build ignore

package main

import "fmt"

// poolFile emits the stride-2 max pooling kernels: k×k windows (k = 2 or
// 3) over rows rows of n outputs, in one pass (see maxPoolS2Go).
func poolFile() {
	fileHeader()
	p("// Max pooling with k×k windows (k = 2, 3) and stride 2 (see maxPoolS2Go):")
	p("// the window's rows are reduced first (vertical maxima of 2n+k−2 columns),")
	p("// then even and odd columns are separated and combined. A NaN in a window")
	p("// gives NaN.")
	evenOdd("poolIdx", 0)
	p("GLOBL poolIdx<>(SB), RODATA|NOPTR, $128")
	laneMasks("poolMask")
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

// poolRow emits the start of a row: its input and output pointers in R12
// and R13, its outputs in CX and 2n of its input columns in AX.
func poolRow() {
	p("row:")
	p("\tMOVQ SI, R12")
	p("\tMOVQ DI, R13")
	p("\tMOVQ R11, CX")
	p("\tLEAQ (R11*2), AX")
}

// poolNext emits the end of a step of w outputs (2w input columns), of
// the row (the next two input rows, the next output row) and of the
// function.
func poolNext(w int) {
	p("\tADDQ $%d, R12", 8*w)
	p("\tADDQ $%d, R13", 4*w)
	p("\tSUBQ $%d, AX", 2*w)
	p("\tSUBQ $%d, CX", w)
	p("\tJGT chunk")
	p("\tLEAQ (SI)(R8*2), SI")
	p("\tADDQ R9, DI")
	p("\tDECQ R10")
	p("\tJGT row")
	ret()
}

// pool512: per step 16 outputs. Full steps (16 outputs whose 2·16+k−2
// input columns lie in the row) use plain loads and stores; the last step
// of a row is masked: its column masks, the same for every row, are
// computed once: K1 [0,16), K2 [16,32), K3 [2,18), K4 [18,34) of its input
// columns; K5 its outputs. Vertical maxima: Z0 (columns 0-15), Z2
// (16-31); for k = 3, in the last step Z4 (2-17) and Z5 (18-33), in full
// steps Z4 column 32 only (the columns 2, 4, …, 32 are the even columns
// shifted by a lane, VALIGND). Z29 holds all ones (the NaN of
// nanmax512).
func pool512(k int) {
	fn(fmt.Sprintf("maxPool%ds2AVX512", k), "dst, src *float32, inW, outW, rows, n int", "0-48")
	p(poolHeader)
	p("\tVMOVDQU32 poolIdx<>+0(SB), Z30")
	p("\tVMOVDQU32 poolIdx<>+64(SB), Z31")
	p("\tVPTERNLOGD $0xff, Z29, Z29, Z29")
	// The last step's input columns (AX) and outputs (CX): what the full
	// steps of 32 and 16 leave (with k = 3, 2n+1 is odd, so its remainder
	// is never 0 and the full steps stop at 33 columns).
	p("\tLEAQ (R11*2), AX")
	if k == 3 {
		p("\tINCQ AX")
	}
	p("\tANDQ $31, AX")
	p("\tMOVQ R11, CX")
	p("\tANDQ $15, CX")
	masks := []struct {
		k   string
		sub int
	}{{"K1", 0}, {"K2", 16}, {"K3", 2}, {"K4", 18}}
	if k == 2 {
		masks = masks[:2]
	}
	for _, m := range masks {
		clampTo("DX", "AX", m.sub, 16)
		kmask("DX", m.k)
	}
	p("\tMOVQ CX, DX")
	capAt("DX", 16)
	kmask("DX", "K5")
	poolRow()
	if k == 3 {
		p("\tINCQ AX // input columns of the row's windows: 2n+1")
	}
	p("chunk:")
	p("\tCMPQ AX, $%d", 30+k)
	p("\tJLT tail")
	pool512Step(k, false)
	p("\tJMP next")
	p("tail:")
	pool512Step(k, true)
	p("next:")
	poolNext(16)
}

// pool512Step emits one step of pool512, masked or not.
func pool512Step(k int, masked bool) {
	ld := func(addr, mask, dst string) {
		if masked {
			p("\tVMOVUPS.Z %s, %s, %s", addr, mask, dst)
		} else {
			p("\tVMOVUPS %s, %s", addr, dst)
		}
	}
	// Vertical maxima.
	vert := func(off int, mask, dst string) {
		ld(fmt.Sprintf("%d(R12)", off), mask, dst)
		for r := 1; r < k; r++ {
			ld(fmt.Sprintf("%d(R12)(R8*%d)", off, r), mask, "Z6")
			nanmax512(dst, "Z6")
		}
	}
	vert(0, "K1", "Z0")
	vert(64, "K2", "Z2")
	if k == 3 && masked {
		vert(8, "K3", "Z4")
		vert(72, "K4", "Z5")
	} else if k == 3 {
		// Column 32 alone (lane 0 of Z4): the columns 2, 4, …, 32 are
		// then the even ones shifted by a lane.
		p("\tVMOVSS 128(R12), X4")
		for r := 1; r < k; r++ {
			p("\tVMOVSS 128(R12)(R8*%d), X6", r)
			nanmax512("Z4", "Z6")
		}
	}
	// Even and odd columns.
	p("\tVMOVAPS Z30, Z7")
	p("\tVPERMI2PS Z2, Z0, Z7")
	p("\tVMOVAPS Z31, Z8")
	p("\tVPERMI2PS Z2, Z0, Z8")
	if k == 3 && !masked {
		p("\tVALIGND $1, Z7, Z4, Z9")
	}
	nanmax512("Z7", "Z8")
	if k == 3 && masked {
		p("\tVMOVAPS Z30, Z9")
		p("\tVPERMI2PS Z5, Z4, Z9")
	}
	if k == 3 {
		nanmax512("Z7", "Z9")
	}
	if masked {
		p("\tVMOVUPS Z7, K5, (R13)")
	} else {
		p("\tVMOVUPS Z7, (R13)")
	}
}

// nanmax512 emits a = max(a, b) (a > b ? a : b), NaN (all ones, from Z29)
// when either is NaN; K6 scratch.
func nanmax512(a, b string) {
	p("\tVCMPPS $3, %s, %s, K6", b, a)
	p("\tVMAXPS %s, %s, %s", b, a, a)
	p("\tVMOVAPS Z29, K6, %s", a)
}

// pool2: per step 8 outputs. Full steps use plain loads and stores
// (VMASKMOVPS is slow on some CPUs, AMD's in particular); the last, partial
// step masks them: valid input columns in AX, masks from poolMask: Y12
// [0,8), Y13 [8,16), Y14 [2,10), Y15 [10,18); outputs Y11. Vertical
// maxima: Y0 (columns 0-7), Y1 (8-15), Y2 (2-9), Y3 (10-17).
func pool2(k int) {
	fn(fmt.Sprintf("maxPool%ds2AVX2", k), "dst, src *float32, inW, outW, rows, n int", "0-48")
	p(poolHeader)
	poolRow()
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
	poolNext(8)
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
			clampTo("DX", "AX", m.sub, 8)
			laneMask("poolMask", "DX", fmt.Sprintf("Y%d", m.y))
		}
		p("\tMOVQ CX, DX")
		capAt("DX", 8)
		laneMask("poolMask", "DX", "Y11")
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
