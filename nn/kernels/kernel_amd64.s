//go:build amd64 && !noasm

#include "textflag.h"

// STEP does one rank-1 update of the 4x24 accumulators Y4-Y15.
#define STEP \
	MOVQ (R8), AX; \
	VMOVUPS (DI)(AX*4), Y0; \
	VMOVUPS 32(DI)(AX*4), Y1; \
	VMOVUPS 64(DI)(AX*4), Y2; \
	VBROADCASTSS 0(SI), Y3; \
	VFMADD231PS Y0, Y3, Y4; \
	VFMADD231PS Y1, Y3, Y5; \
	VFMADD231PS Y2, Y3, Y6; \
	VBROADCASTSS 4(SI), Y3; \
	VFMADD231PS Y0, Y3, Y7; \
	VFMADD231PS Y1, Y3, Y8; \
	VFMADD231PS Y2, Y3, Y9; \
	VBROADCASTSS 8(SI), Y3; \
	VFMADD231PS Y0, Y3, Y10; \
	VFMADD231PS Y1, Y3, Y11; \
	VFMADD231PS Y2, Y3, Y12; \
	VBROADCASTSS 12(SI), Y3; \
	VFMADD231PS Y0, Y3, Y13; \
	VFMADD231PS Y1, Y3, Y14; \
	VFMADD231PS Y2, Y3, Y15; \
	ADDQ $16, SI; \
	ADDQ $8, R8

// func sgemmKernelAVX2(k int, a, b *float32, boff *int, c *float32, ldc int, ep *epilogue)
//
// The 4×24 AVX2+FMA micro-kernel: accumulators Y4-Y15 hold the tile (row r
// in Y4+3r..Y6+3r); step p adds a[4p..4p+3] ⊗ b[boff[p]..boff[p]+23]. Then
// the epilogue (see epilogue in gemm.go) and a store to c (row stride ldc).
TEXT ·sgemmKernelAVX2(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ boff+24(FP), R8
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R9
	MOVQ ep+48(FP), R10
	SHLQ $2, R9

	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JEQ tail

loop4:
	STEP
	STEP
	STEP
	STEP
	DECQ BX
	JNE loop4

tail:
	TESTQ CX, CX
	JEQ epi

loop1:
	STEP
	DECQ CX
	JNE loop1

epi:
	MOVQ 0(R10), AX
	TESTQ $1, AX
	JEQ nobeta
	MOVQ DX, BX
	VADDPS 0(BX), Y4, Y4
	VADDPS 32(BX), Y5, Y5
	VADDPS 64(BX), Y6, Y6
	ADDQ R9, BX
	VADDPS 0(BX), Y7, Y7
	VADDPS 32(BX), Y8, Y8
	VADDPS 64(BX), Y9, Y9
	ADDQ R9, BX
	VADDPS 0(BX), Y10, Y10
	VADDPS 32(BX), Y11, Y11
	VADDPS 64(BX), Y12, Y12
	ADDQ R9, BX
	VADDPS 0(BX), Y13, Y13
	VADDPS 32(BX), Y14, Y14
	VADDPS 64(BX), Y15, Y15

nobeta:
	TESTQ $2, AX
	JEQ nobias
	MOVQ 8(R10), BX
	VBROADCASTSS 0(BX), Y0
	VADDPS Y0, Y4, Y4
	VADDPS Y0, Y5, Y5
	VADDPS Y0, Y6, Y6
	VBROADCASTSS 4(BX), Y0
	VADDPS Y0, Y7, Y7
	VADDPS Y0, Y8, Y8
	VADDPS Y0, Y9, Y9
	VBROADCASTSS 8(BX), Y0
	VADDPS Y0, Y10, Y10
	VADDPS Y0, Y11, Y11
	VADDPS Y0, Y12, Y12
	VBROADCASTSS 12(BX), Y0
	VADDPS Y0, Y13, Y13
	VADDPS Y0, Y14, Y14
	VADDPS Y0, Y15, Y15

nobias:
	TESTQ $4, AX
	JEQ nolo
	VBROADCASTSS 16(R10), Y0
	VMAXPS Y4, Y0, Y4
	VMAXPS Y5, Y0, Y5
	VMAXPS Y6, Y0, Y6
	VMAXPS Y7, Y0, Y7
	VMAXPS Y8, Y0, Y8
	VMAXPS Y9, Y0, Y9
	VMAXPS Y10, Y0, Y10
	VMAXPS Y11, Y0, Y11
	VMAXPS Y12, Y0, Y12
	VMAXPS Y13, Y0, Y13
	VMAXPS Y14, Y0, Y14
	VMAXPS Y15, Y0, Y15

nolo:
	TESTQ $8, AX
	JEQ nohi
	VBROADCASTSS 20(R10), Y0
	VMINPS Y4, Y0, Y4
	VMINPS Y5, Y0, Y5
	VMINPS Y6, Y0, Y6
	VMINPS Y7, Y0, Y7
	VMINPS Y8, Y0, Y8
	VMINPS Y9, Y0, Y9
	VMINPS Y10, Y0, Y10
	VMINPS Y11, Y0, Y11
	VMINPS Y12, Y0, Y12
	VMINPS Y13, Y0, Y13
	VMINPS Y14, Y0, Y14
	VMINPS Y15, Y0, Y15

nohi:
	TESTQ $16, AX
	JEQ store
	VXORPS Y0, Y0, Y0
	VBROADCASTSS 24(R10), Y1
	VMINPS Y0, Y4, Y2
	VMAXPS Y4, Y0, Y4
	VFMADD231PS Y2, Y1, Y4
	VMINPS Y0, Y5, Y2
	VMAXPS Y5, Y0, Y5
	VFMADD231PS Y2, Y1, Y5
	VMINPS Y0, Y6, Y2
	VMAXPS Y6, Y0, Y6
	VFMADD231PS Y2, Y1, Y6
	VMINPS Y0, Y7, Y2
	VMAXPS Y7, Y0, Y7
	VFMADD231PS Y2, Y1, Y7
	VMINPS Y0, Y8, Y2
	VMAXPS Y8, Y0, Y8
	VFMADD231PS Y2, Y1, Y8
	VMINPS Y0, Y9, Y2
	VMAXPS Y9, Y0, Y9
	VFMADD231PS Y2, Y1, Y9
	VMINPS Y0, Y10, Y2
	VMAXPS Y10, Y0, Y10
	VFMADD231PS Y2, Y1, Y10
	VMINPS Y0, Y11, Y2
	VMAXPS Y11, Y0, Y11
	VFMADD231PS Y2, Y1, Y11
	VMINPS Y0, Y12, Y2
	VMAXPS Y12, Y0, Y12
	VFMADD231PS Y2, Y1, Y12
	VMINPS Y0, Y13, Y2
	VMAXPS Y13, Y0, Y13
	VFMADD231PS Y2, Y1, Y13
	VMINPS Y0, Y14, Y2
	VMAXPS Y14, Y0, Y14
	VFMADD231PS Y2, Y1, Y14
	VMINPS Y0, Y15, Y2
	VMAXPS Y15, Y0, Y15
	VFMADD231PS Y2, Y1, Y15

store:
	MOVQ DX, BX
	VMOVUPS Y4, 0(BX)
	VMOVUPS Y5, 32(BX)
	VMOVUPS Y6, 64(BX)
	ADDQ R9, BX
	VMOVUPS Y7, 0(BX)
	VMOVUPS Y8, 32(BX)
	VMOVUPS Y9, 64(BX)
	ADDQ R9, BX
	VMOVUPS Y10, 0(BX)
	VMOVUPS Y11, 32(BX)
	VMOVUPS Y12, 64(BX)
	ADDQ R9, BX
	VMOVUPS Y13, 0(BX)
	VMOVUPS Y14, 32(BX)
	VMOVUPS Y15, 64(BX)
	VZEROUPPER
	RET

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
