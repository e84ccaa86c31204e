//go:build amd64 && !noasm

#include "textflag.h"

// Pillow's rounding term, 1 << (PRECISION_BITS − 1), in every int32 lane.
DATA half<>+0(SB)/4, $0x200000
GLOBL half<>(SB), RODATA|NOPTR, $4

// VPERMD indices that put the dwords of VPACKUSWB's lane-wise result in
// order (see vsumAVX2).
DATA order<>+0(SB)/8, $0x0000000400000000
DATA order<>+8(SB)/8, $0x0000000500000001
DATA order<>+16(SB)/8, $0x0000000600000002
DATA order<>+24(SB)/8, $0x0000000700000003
GLOBL order<>(SB), RODATA|NOPTR, $32

// func vsumAVX2(dst *uint8, n int, src *uint8, offs *int, k *int32, taps int)
//
// dst[i] = clip8(half + Σ_j src[offs[j]+i]·k[j]) for i < n (a multiple of
// 32), 32 bytes per iteration in four vectors of 8 int32 lanes.
TEXT ·vsumAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ src+16(FP), SI
	MOVQ offs+24(FP), R8
	MOVQ k+32(FP), R9
	MOVQ taps+40(FP), R10
	VPBROADCASTD half<>(SB), Y15
	VMOVDQU order<>(SB), Y14
	XORQ AX, AX

vrow:
	CMPQ AX, CX
	JGE  vdone
	VMOVDQA Y15, Y0
	VMOVDQA Y15, Y1
	VMOVDQA Y15, Y2
	VMOVDQA Y15, Y3
	XORQ    BX, BX

vtap:
	CMPQ         BX, R10
	JGE          vstore
	MOVQ         (R8)(BX*8), DX
	ADDQ         SI, DX
	VPBROADCASTD (R9)(BX*4), Y4
	VPMOVZXBD    (DX)(AX*1), Y5
	VPMOVZXBD    8(DX)(AX*1), Y6
	VPMOVZXBD    16(DX)(AX*1), Y7
	VPMOVZXBD    24(DX)(AX*1), Y8
	VPMULLD      Y4, Y5, Y5
	VPMULLD      Y4, Y6, Y6
	VPMULLD      Y4, Y7, Y7
	VPMULLD      Y4, Y8, Y8
	VPADDD       Y5, Y0, Y0
	VPADDD       Y6, Y1, Y1
	VPADDD       Y7, Y2, Y2
	VPADDD       Y8, Y3, Y3
	INCQ         BX
	JMP          vtap

vstore:
	// clip8: shift, then saturate to int16 and to uint8 (0…255).
	VPSRAD    $22, Y0, Y0
	VPSRAD    $22, Y1, Y1
	VPSRAD    $22, Y2, Y2
	VPSRAD    $22, Y3, Y3
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKUSWB Y2, Y0, Y0
	VPERMD    Y0, Y14, Y0
	VMOVDQU   Y0, (DI)(AX*1)
	ADDQ      $32, AX
	JMP       vrow

vdone:
	VZEROUPPER
	RET

// func hsumAVX2(dst *uint8, outs int, src *uint8, start *int, n *int, k *int32, ksize int)
//
// For each output pixel o < outs: the RGB bytes dst[3o:3o+3] =
// clip8(half + Σ_j src[3(start[o]+j) + c]·k[o·ksize+j]), one pixel per
// 4-lane vector (its 4th lane, the next pixel's red, is computed and
// written too: the caller keeps the last pixel's read and write inside
// the rows).
TEXT ·hsumAVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ outs+8(FP), CX
	MOVQ src+16(FP), SI
	MOVQ start+24(FP), R8
	MOVQ n+32(FP), R9
	MOVQ k+40(FP), R10
	MOVQ ksize+48(FP), R11
	SHLQ $2, R11
	VPBROADCASTD half<>(SB), X15

hpix:
	TESTQ CX, CX
	JZ    hdone
	MOVQ  (R8), DX
	LEAQ  (DX)(DX*2), DX
	ADDQ  SI, DX
	MOVQ  (R9), BX
	MOVQ  R10, R12
	VMOVDQA X15, X0

htap:
	TESTQ        BX, BX
	JZ           hstore
	VPMOVZXBD    (DX), X1
	VPBROADCASTD (R12), X2
	VPMULLD      X2, X1, X1
	VPADDD       X1, X0, X0
	ADDQ         $3, DX
	ADDQ         $4, R12
	DECQ         BX
	JMP          htap

hstore:
	VPSRAD    $22, X0, X0
	VPACKSSDW X0, X0, X0
	VPACKUSWB X0, X0, X0
	VMOVD     X0, (DI)
	ADDQ      $3, DI
	ADDQ      $8, R8
	ADDQ      $8, R9
	ADDQ      R11, R10
	DECQ      CX
	JMP       hpix

hdone:
	RET
