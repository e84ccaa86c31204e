//go:build amd64 && !noasm

#include "textflag.h"

// func maxIntoAVX2(dst, a, b *float32, n int)
// dst[i] = max(a[i], b[i]) for i < n, NaN when either is NaN. n is a
// multiple of 8; dst may alias a or b.
TEXT ·maxIntoAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ done

loop:
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VMAXPS Y1, Y0, Y2     // Y2 = Y0 > Y1 ? Y0 : Y1 (Y1 when either is NaN)
	VCMPPS $3, Y0, Y0, Y3 // Y3 = all ones where a[i] is NaN
	VORPS Y3, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNE loop

done:
	VZEROUPPER
	RET
