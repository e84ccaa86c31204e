//go:build amd64 && !noasm

#include "textflag.h"

// UNPACK4X8 turns four rows a, b, c, d of 8 values (Y registers) into the
// columns of that 4×8 block, two per register: t0 = columns 0 | 4 (one
// column of the four rows in each 128-bit half), t1 = 1 | 5, t2 = 2 | 6,
// t3 = 3 | 7; p0-p3 are scratch. The outputs may be the inputs.
#define UNPACK4X8(a, b, c, d, p0, p1, p2, p3, t0, t1, t2, t3) \
	VUNPCKLPS b, a, p0; \
	VUNPCKHPS b, a, p1; \
	VUNPCKLPS d, c, p2; \
	VUNPCKHPS d, c, p3; \
	VUNPCKLPD p2, p0, t0; \
	VUNPCKHPD p2, p0, t1; \
	VUNPCKLPD p3, p1, t2; \
	VUNPCKHPD p3, p1, t3

// func interleave4AVX2(d, a0, a1, a2, a3 *float32, n int)
// d[4p+r] = ar[p] for p < n (n a multiple of 8): a 4×8 transpose per step.
TEXT ·interleave4AVX2(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ a0+8(FP), R8
	MOVQ a1+16(FP), R9
	MOVQ a2+24(FP), R10
	MOVQ a3+32(FP), R11
	MOVQ n+40(FP), CX
	XORQ AX, AX
il4loop:
	CMPQ AX, CX
	JGE  il4done
	VMOVUPS (R8)(AX*4), Y0
	VMOVUPS (R9)(AX*4), Y1
	VMOVUPS (R10)(AX*4), Y2
	VMOVUPS (R11)(AX*4), Y3
	UNPACK4X8(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11)
	VPERM2F128 $0x20, Y9, Y8, Y0  // columns 0, 1
	VPERM2F128 $0x20, Y11, Y10, Y1 // columns 2, 3
	VPERM2F128 $0x31, Y9, Y8, Y2  // columns 4, 5
	VPERM2F128 $0x31, Y11, Y10, Y3 // columns 6, 7
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $8, AX
	JMP  il4loop
il4done:
	VZEROUPPER
	RET

// func transposeStrip8(dst, src *float32, lds, ldd, nb int)
// For b < nb: dst[(8b+c)·ldd + r] = src[r·lds + 8b + c] for r, c < 8 — an
// 8×8 transpose per step: UNPACK4X8 of rows 0–3 and of rows 4–7 (as
// interleave4AVX2), then the halves joined into whole rows of dst.
TEXT ·transposeStrip8(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R8
	MOVQ ldd+24(FP), R9
	MOVQ nb+32(FP), CX
	SHLQ $2, R8            // bytes per src row
	SHLQ $2, R9            // bytes per dst row
	LEAQ (R8)(R8*2), R10   // 3 src rows
	LEAQ (SI)(R8*4), R11   // src row 4
	LEAQ (R9)(R9*2), R12   // 3 dst rows
	LEAQ (DI)(R9*4), R13   // dst row 4
	MOVQ R9, R14
	SHLQ $3, R14           // 8 dst rows
tr8loop:
	TESTQ CX, CX
	JEQ   tr8done
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R10*1), Y3
	UNPACK4X8(Y0, Y1, Y2, Y3, Y8, Y9, Y10, Y11, Y0, Y1, Y2, Y3) // rows 0–3
	VMOVUPS (R11), Y4
	VMOVUPS (R11)(R8*1), Y5
	VMOVUPS (R11)(R8*2), Y6
	VMOVUPS (R11)(R10*1), Y7
	UNPACK4X8(Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y4, Y5, Y6, Y7) // rows 4–7
	VPERM2F128 $0x20, Y4, Y0, Y8  // column 0 of rows 0–7
	VPERM2F128 $0x20, Y5, Y1, Y9  // column 1
	VPERM2F128 $0x20, Y6, Y2, Y10 // column 2
	VPERM2F128 $0x20, Y7, Y3, Y11 // column 3
	VPERM2F128 $0x31, Y4, Y0, Y12 // column 4
	VPERM2F128 $0x31, Y5, Y1, Y13 // column 5
	VPERM2F128 $0x31, Y6, Y2, Y14 // column 6
	VPERM2F128 $0x31, Y7, Y3, Y15 // column 7
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R9*1)
	VMOVUPS Y10, (DI)(R9*2)
	VMOVUPS Y11, (DI)(R12*1)
	VMOVUPS Y12, (R13)
	VMOVUPS Y13, (R13)(R9*1)
	VMOVUPS Y14, (R13)(R9*2)
	VMOVUPS Y15, (R13)(R12*1)
	ADDQ $32, SI
	ADDQ $32, R11
	ADDQ R14, DI
	ADDQ R14, R13
	DECQ CX
	JMP  tr8loop
tr8done:
	VZEROUPPER
	RET
