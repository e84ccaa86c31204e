//go:build amd64 && !purego

#include "textflag.h"

// func gdPass1LanesSSE(G, x, x2, xin, xr []float32, g2 float32) float32
TEXT ·gdPass1LanesSSE(SB), NOSPLIT, $0-132
	MOVQ  G_base+0(FP), DI
	MOVQ  G_len+8(FP), BX
	MOVQ  x_base+24(FP), SI
	MOVQ  x2_base+48(FP), R8
	MOVQ  xin_base+72(FP), R9
	MOVQ  xr_base+96(FP), R10
	MOVSS g2+120(FP), X8
	SHUFPS $0, X8, X8
	MOVL  $0x7f61b1e6, AX     // 3e38
	MOVD  AX, X10
	SHUFPS $0, X10, X10
	MOVL  $0x0da24260, AX     // 1e-30
	MOVD  AX, X11
	SHUFPS $0, X11, X11
	XORPS X7, X7
	SHRQ  $2, BX
	JZ    done1
	XORQ  AX, AX

loop1:
	MOVUPS  (R8)(AX*1), X0
	MULPS   X8, X0
	MOVUPS  (DI)(AX*1), X1
	ADDPS   X0, X1
	MINPS   X10, X1
	MOVUPS  X1, (DI)(AX*1)
	MAXPS   X11, X1
	SQRTPS  X1, X2
	MOVUPS  (R9)(AX*1), X5
	DIVPS   X2, X5
	MOVUPS  X5, (R10)(AX*1)
	MOVUPS  (SI)(AX*1), X6
	MULPS   X6, X5
	ADDPS   X5, X7
	ADDQ    $16, AX
	DECQ    BX
	JNZ     loop1

done1:
	MOVHLPS X7, X0
	ADDPS   X0, X7
	MOVAPS  X7, X0
	SHUFPS  $0x55, X0, X0
	ADDSS   X0, X7
	MOVSS   X7, ret+128(FP)
	RET

// func gdPass2Lanes(w, xr []float32, c float32)
TEXT ·gdPass2Lanes(SB), NOSPLIT, $0-52
	MOVQ  w_base+0(FP), DI
	MOVQ  w_len+8(FP), BX
	MOVQ  xr_base+24(FP), SI
	MOVSS c+48(FP), X8
	SHUFPS $0, X8, X8
	MOVL  $0x60ad78ec, AX     // 1e20
	MOVD  AX, X9
	SHUFPS $0, X9, X9
	MOVL  $0xe0ad78ec, AX     // -1e20
	MOVD  AX, X10
	SHUFPS $0, X10, X10
	SHRQ  $2, BX
	JZ    done2
	XORQ  AX, AX

loop2:
	MOVUPS (SI)(AX*1), X0
	MULPS  X8, X0
	MOVUPS (DI)(AX*1), X1
	ADDPS  X0, X1
	MINPS  X9, X1
	MAXPS  X10, X1
	MOVUPS X1, (DI)(AX*1)
	ADDQ   $16, AX
	DECQ   BX
	JNZ    loop2

done2:
	RET

// func gdPass1LanesAVX2(G, x, x2, xin, xr []float32, g2 float32) float32
//
// gdPass1Lanes eight elements at a time: each 8-wide block's products are
// added to the four lanes as its low half, then its high half, so every
// lane adds its elements in the same order as the SSE loop.
TEXT ·gdPass1LanesAVX2(SB), NOSPLIT, $0-132
	MOVQ  G_base+0(FP), DI
	MOVQ  G_len+8(FP), BX
	MOVQ  x_base+24(FP), SI
	MOVQ  x2_base+48(FP), R8
	MOVQ  xin_base+72(FP), R9
	MOVQ  xr_base+96(FP), R10
	VBROADCASTSS g2+120(FP), Y8
	MOVL  $0x7f61b1e6, AX     // 3e38
	MOVD  AX, X10
	VBROADCASTSS X10, Y10
	MOVL  $0x0da24260, AX     // 1e-30
	MOVD  AX, X11
	VBROADCASTSS X11, Y11
	VXORPS X7, X7, X7
	XORQ  AX, AX
	MOVQ  BX, CX
	SHRQ  $3, CX
	JZ    half

loop8:
	VMULPS  (R8)(AX*1), Y8, Y0
	VADDPS  (DI)(AX*1), Y0, Y1
	VMINPS  Y10, Y1, Y1
	VMOVUPS Y1, (DI)(AX*1)
	VMAXPS  Y11, Y1, Y1
	VSQRTPS Y1, Y2
	VMOVUPS (R9)(AX*1), Y5
	VDIVPS  Y2, Y5, Y5
	VMOVUPS Y5, (R10)(AX*1)
	VMULPS  (SI)(AX*1), Y5, Y5
	VADDPS  X5, X7, X7
	VEXTRACTF128 $1, Y5, X5
	VADDPS  X5, X7, X7
	ADDQ    $32, AX
	DECQ    CX
	JNZ     loop8

half:
	TESTQ   $4, BX
	JZ      reduce
	VMULPS  (R8)(AX*1), X8, X0
	VADDPS  (DI)(AX*1), X0, X1
	VMINPS  X10, X1, X1
	VMOVUPS X1, (DI)(AX*1)
	VMAXPS  X11, X1, X1
	VSQRTPS X1, X2
	VMOVUPS (R9)(AX*1), X5
	VDIVPS  X2, X5, X5
	VMOVUPS X5, (R10)(AX*1)
	VMULPS  (SI)(AX*1), X5, X5
	VADDPS  X5, X7, X7

reduce:
	VMOVHLPS X7, X7, X0
	VADDPS   X0, X7, X7
	VMOVSHDUP X7, X0
	VADDSS   X0, X7, X7
	VMOVSS   X7, ret+128(FP)
	VZEROUPPER
	RET
