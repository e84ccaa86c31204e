//go:build amd64 && !purego

#include "textflag.h"

// func gdPass1SSE(G, x, x2, xin, xr []float32, g2 float32) float32
TEXT ·gdPass1SSE(SB), NOSPLIT, $0-132
	MOVQ  G_base+0(FP), DI
	MOVQ  G_len+8(FP), BX
	MOVQ  x_base+24(FP), SI
	MOVQ  x2_base+48(FP), R8
	MOVQ  xin_base+72(FP), R9
	MOVQ  xr_base+96(FP), R10
	MOVSS g2+120(FP), X8
	SHUFPS $0, X8, X8
	MOVL  $0x3f000000, AX     // 0.5
	MOVD  AX, X9
	SHUFPS $0, X9, X9
	MOVL  $0x7f61b1e6, AX     // 3e38
	MOVD  AX, X10
	SHUFPS $0, X10, X10
	MOVL  $0x0da24260, AX     // 1e-30
	MOVD  AX, X11
	SHUFPS $0, X11, X11
	MOVL  $0x3fc00000, AX     // 1.5
	MOVD  AX, X12
	SHUFPS $0, X12, X12
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
	RSQRTPS X1, X2
	MOVAPS  X2, X3
	MULPS   X2, X3
	MULPS   X1, X3
	MULPS   X9, X3
	MOVAPS  X12, X4
	SUBPS   X3, X4
	MULPS   X4, X2
	MOVUPS  (R9)(AX*1), X5
	MULPS   X5, X2
	MOVUPS  X2, (R10)(AX*1)
	MOVUPS  (SI)(AX*1), X6
	MULPS   X6, X2
	ADDPS   X2, X7
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

// func gdPass2SSE(w, xr []float32, c float32)
TEXT ·gdPass2SSE(SB), NOSPLIT, $0-52
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
