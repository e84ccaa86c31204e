//go:build ignore

package main

import "fmt"

// gemvFile emits sgemvFMA (AVX2 and FMA, 128-bit vectors: one per packed
// 4-row panel of A). Eight panels at a time, so that eight independent
// FMA chains hide the FMA latency, then the panels left one at a time.
// Registers: accumulators X0-X7, the broadcast element of B in X8,
// epilogue temporaries X9-X11; panel bases SI, R9, R14, R15 (panels 0-3)
// and the same plus 4 panel strides (R11·4: panels 4-7).
func gemvFile() {
	fileHeader()
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
	ret()
}

// gemvEpilogue emits the epilogue of n accumulators X0..X(n−1), rows
// 4q..4q+3 of t (R12) and of the bias (R13): the micro-kernels' additions
// (C's old values, then the bias), actEpilogue, and the store to t.
func gemvEpilogue(n int, sfx string) {
	var accs []string
	for x := 0; x < n; x++ {
		accs = append(accs, fmt.Sprintf("X%d", x))
	}
	// addIf emits accs += the vectors at base when the flag is set in AX.
	addIf := func(flag int, skip, base string) {
		p("\tTESTQ $%d, AX", flag)
		p("\tJEQ %s%s", skip, sfx)
		for x, a := range accs {
			p("\tVADDPS %d(%s), %s, %s", 16*x, base, a, a)
		}
		p("%s%s:", skip, sfx)
	}
	p("\tMOVQ 0(R10), AX")
	addIf(1, "nobeta", "R12")
	addIf(2, "nobias", "R13")
	actEpilogue(accs, "VXORPS", "X9", "X10", "X11", sfx)
	for x, a := range accs {
		p("\tVMOVUPS %s, %d(R12)", a, 16*x)
	}
}

// bound emits, when flag is set in AX, accs = op(accs, the bound at
// off(R10), broadcast into t); skip labels its end.
func bound(accs []string, flag int, op string, off int, t, skip string) {
	p("\tTESTQ $%d, AX", flag)
	p("\tJEQ %s", skip)
	p("\tVBROADCASTSS %d(R10), %s", off, t)
	for _, a := range accs {
		p("\t%s %s, %s, %s", op, a, t, a)
	}
	p("%s:", skip)
}

// actEpilogue emits the activation part of the micro-kernels' epilogue,
// one instruction sequence for every kernel (so that all give the same
// bits): with the flags in AX and the epilogue at R10, max(x, lo)
// (epMaxLo), min(x, hi) (epMinHi), max(x, 0) + alpha·min(x, 0) (epLeaky)
// on the accumulators accs, using the temporaries t0, t1, t2 (xor zeroes
// t0), then the label store+sfx.
func actEpilogue(accs []string, xor, t0, t1, t2, sfx string) {
	bound(accs, 4, "VMAXPS", 16, t0, "nolo"+sfx)
	bound(accs, 8, "VMINPS", 20, t0, "nohi"+sfx)
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
