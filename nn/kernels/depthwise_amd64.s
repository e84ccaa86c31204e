//go:build amd64 && !noasm

#include "textflag.h"

// func dwRowAVX2(out, in *float32, stride int, w *float32, kh, kw, chunks int, bias float32, acc bool)
//
// out[x] = bias + Σ w[ky·kw+kx]·in[ky·stride+x+kx] for x < chunks·32 (with
// acc, out[x] += the sum): per pair of chunks, 64 outputs, eight
// accumulators Y0-Y3, Y8-Y11 over all kh·kw taps (each FMA waits for the
// one before on its accumulator: eight chains keep both FMA units busy
// where four left them half idle), then a last odd chunk of 32 with four.
// Each output's sum runs over the taps in the same order either way.
TEXT ·dwRowAVX2(SB), NOSPLIT, $0-61
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ stride+16(FP), R8
	SHLQ $2, R8 // row stride in bytes
	MOVQ w+24(FP), R9
	MOVQ kh+32(FP), R11
	MOVQ kw+40(FP), R12
	MOVQ chunks+48(FP), R13
	VBROADCASTSS bias+56(FP), Y7
	MOVBQZX acc+60(FP), R14

pair:
	CMPQ R13, $2
	JLT  chunk
	TESTQ R14, R14
	JNE pfromout
	VMOVAPS Y7, Y0
	VMOVAPS Y7, Y1
	VMOVAPS Y7, Y2
	VMOVAPS Y7, Y3
	VMOVAPS Y7, Y8
	VMOVAPS Y7, Y9
	VMOVAPS Y7, Y10
	VMOVAPS Y7, Y11
	JMP pstart

pfromout:
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y8
	VMOVUPS 160(DI), Y9
	VMOVUPS 192(DI), Y10
	VMOVUPS 224(DI), Y11

pstart:
	MOVQ SI, AX  // row pointer
	MOVQ R9, BX  // weight pointer
	MOVQ R11, CX // rows left

prow:
	MOVQ AX, DX   // tap pointer
	MOVQ R12, R10 // taps left in the row

ptap:
	VBROADCASTSS (BX), Y4
	VFMADD231PS (DX), Y4, Y0
	VFMADD231PS 32(DX), Y4, Y1
	VFMADD231PS 64(DX), Y4, Y2
	VFMADD231PS 96(DX), Y4, Y3
	VFMADD231PS 128(DX), Y4, Y8
	VFMADD231PS 160(DX), Y4, Y9
	VFMADD231PS 192(DX), Y4, Y10
	VFMADD231PS 224(DX), Y4, Y11
	ADDQ $4, BX
	ADDQ $4, DX
	DECQ R10
	JNE ptap

	ADDQ R8, AX
	DECQ CX
	JNE prow

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y8, 128(DI)
	VMOVUPS Y9, 160(DI)
	VMOVUPS Y10, 192(DI)
	VMOVUPS Y11, 224(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	SUBQ $2, R13
	JMP pair

chunk:
	TESTQ R13, R13
	JEQ done
	TESTQ R14, R14
	JNE fromout
	VMOVAPS Y7, Y0
	VMOVAPS Y7, Y1
	VMOVAPS Y7, Y2
	VMOVAPS Y7, Y3
	JMP start

fromout:
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3

start:
	MOVQ SI, AX  // row pointer
	MOVQ R9, BX  // weight pointer
	MOVQ R11, CX // rows left

row:
	MOVQ AX, DX  // tap pointer
	MOVQ R12, R10 // taps left in the row

tap:
	VBROADCASTSS (BX), Y4
	VFMADD231PS (DX), Y4, Y0
	VFMADD231PS 32(DX), Y4, Y1
	VFMADD231PS 64(DX), Y4, Y2
	VFMADD231PS 96(DX), Y4, Y3
	ADDQ $4, BX
	ADDQ $4, DX
	DECQ R10
	JNE tap

	ADDQ R8, AX
	DECQ CX
	JNE row

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	DECQ R13
	JMP chunk

done:
	VZEROUPPER
	RET
