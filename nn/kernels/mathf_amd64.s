//go:build amd64 && !noasm

#include "textflag.h"

// Constants of the AVX2+FMA versions of ExpShifted, SiLU and GELU (the
// coefficients of mathf.go, as float32 bits).
DATA mathfC<>+0(SB)/4, $0x3fb8aa3b   // log2(e)
DATA mathfC<>+4(SB)/4, $0x3f318000   // ln2 high part
DATA mathfC<>+8(SB)/4, $0xb95e8083   // ln2 low part
DATA mathfC<>+12(SB)/4, $0x39506967  // exp polynomial, degree 5 .. 0
DATA mathfC<>+16(SB)/4, $0x3ab743ce
DATA mathfC<>+20(SB)/4, $0x3c088908
DATA mathfC<>+24(SB)/4, $0x3d2aa9c1
DATA mathfC<>+28(SB)/4, $0x3e2aaaaa
DATA mathfC<>+32(SB)/4, $0x3f000000
DATA mathfC<>+36(SB)/4, $0x3f800000  // 1
DATA mathfC<>+40(SB)/4, $0xc2aeac4f  // -87.33654: smallest normal result
DATA mathfC<>+44(SB)/4, $0x42b0999a  // 88.3: 2**n stays finite
DATA mathfC<>+48(SB)/4, $0x3f3504f3  // 1/sqrt(2)
DATA mathfC<>+52(SB)/4, $0xc0800000  // -4
DATA mathfC<>+56(SB)/4, $0x40800000  // 4
DATA mathfC<>+60(SB)/4, $0x3f000000  // 0.5
DATA mathfC<>+64(SB)/4, $0xaf95df0b  // erf numerator, x**13 .. x**1
DATA mathfC<>+68(SB)/4, $0x32edffee
DATA mathfC<>+72(SB)/4, $0xb60cff51
DATA mathfC<>+76(SB)/4, $0xb86ec2d2
DATA mathfC<>+80(SB)/4, $0xba40ac63
DATA mathfC<>+84(SB)/4, $0xbb41a1f6
DATA mathfC<>+88(SB)/4, $0xbc83dbd4
DATA mathfC<>+92(SB)/4, $0xb77460cd  // erf denominator, x**8 .. x**0
DATA mathfC<>+96(SB)/4, $0xb95fbd29
DATA mathfC<>+100(SB)/4, $0xbadc924e
DATA mathfC<>+104(SB)/4, $0xbbf19bf8
DATA mathfC<>+108(SB)/4, $0xbc69b6a7
DATA mathfC<>+112(SB)/4, $127
GLOBL mathfC<>(SB), RODATA|NOPTR, $116

// EXP8 sets Y0 = e**Y0 for Y0 within [-87.34, 88.3] (clamp first),
// Cephes' expf as in Expf; uses Y1-Y3.
#define EXP8 \
	VBROADCASTSS mathfC<>+0(SB), Y1; \
	VMULPS Y1, Y0, Y1; \
	VROUNDPS $0, Y1, Y1; \
	VBROADCASTSS mathfC<>+4(SB), Y2; \
	VFNMADD231PS Y2, Y1, Y0; \
	VBROADCASTSS mathfC<>+8(SB), Y2; \
	VFNMADD231PS Y2, Y1, Y0; \
	VBROADCASTSS mathfC<>+12(SB), Y2; \
	VBROADCASTSS mathfC<>+16(SB), Y3; \
	VFMADD213PS Y3, Y0, Y2; \
	VBROADCASTSS mathfC<>+20(SB), Y3; \
	VFMADD213PS Y3, Y0, Y2; \
	VBROADCASTSS mathfC<>+24(SB), Y3; \
	VFMADD213PS Y3, Y0, Y2; \
	VBROADCASTSS mathfC<>+28(SB), Y3; \
	VFMADD213PS Y3, Y0, Y2; \
	VBROADCASTSS mathfC<>+32(SB), Y3; \
	VFMADD213PS Y3, Y0, Y2; \
	VMULPS Y0, Y0, Y3; \
	VFMADD213PS Y0, Y3, Y2; \
	VBROADCASTSS mathfC<>+36(SB), Y3; \
	VADDPS Y3, Y2, Y0; \
	VCVTPS2DQ Y1, Y1; \
	VPBROADCASTD mathfC<>+112(SB), Y3; \
	VPADDD Y3, Y1, Y1; \
	VPSLLD $23, Y1, Y1; \
	VMULPS Y1, Y0, Y0

// func expShiftedAVX2(dst, src *float32, n int, shift float32) (sum float32)
// dst[i] = e**(src[i]-shift), 0 below the smallest normal result (and for
// NaN); returns their sum. n is a multiple of 8.
TEXT ·expShiftedAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS shift+24(FP), Y6
	VXORPS Y7, Y7, Y7
	VBROADCASTSS mathfC<>+40(SB), Y5
	SHRQ $3, CX
	JEQ expdone

exploop:
	VMOVUPS (SI), Y0
	VSUBPS Y6, Y0, Y0
	VCMPPS $13, Y5, Y0, Y4 // Y4 = Y0 >= -87.33654 (false for NaN)
	VMAXPS Y5, Y0, Y0
	EXP8
	VANDPS Y4, Y0, Y0
	VMOVUPS Y0, (DI)
	VADDPS Y0, Y7, Y7
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE exploop

expdone:
	VEXTRACTF128 $1, Y7, X1
	VADDPS X1, X7, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	MOVSS X0, sum+32(FP)
	VZEROUPPER
	RET

// func siluAVX2(dst, src *float32, n int)
// dst[i] = x/(1+e**-x), x = src[i]. n is a multiple of 8.
TEXT ·siluAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS mathfC<>+40(SB), Y5
	VBROADCASTSS mathfC<>+44(SB), Y6
	VXORPS Y7, Y7, Y7
	SHRQ $3, CX
	JEQ siludone

siluloop:
	VMOVUPS (SI), Y4
	VSUBPS Y4, Y7, Y0 // -x
	VMAXPS Y5, Y0, Y0
	VMINPS Y6, Y0, Y0
	EXP8
	VBROADCASTSS mathfC<>+36(SB), Y1
	VADDPS Y1, Y0, Y0
	VDIVPS Y0, Y4, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE siluloop

siludone:
	VZEROUPPER
	RET

// func geluAVX2(dst, src *float32, n int)
// dst[i] = x/2·(1+erf(x/sqrt 2)), x = src[i], erf as in Erff. n is a
// multiple of 8.
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS mathfC<>+48(SB), Y8
	VBROADCASTSS mathfC<>+52(SB), Y9
	VBROADCASTSS mathfC<>+56(SB), Y10
	VBROADCASTSS mathfC<>+60(SB), Y11
	SHRQ $3, CX
	JEQ geludone

geluloop:
	VMOVUPS (SI), Y4
	VMULPS Y8, Y4, Y0 // z = x/sqrt 2, clamped to [-4, 4]
	VMAXPS Y9, Y0, Y0
	VMINPS Y10, Y0, Y0
	VMULPS Y0, Y0, Y1 // z²
	VBROADCASTSS mathfC<>+64(SB), Y2
	VBROADCASTSS mathfC<>+68(SB), Y3
	VFMADD213PS Y3, Y1, Y2
	VBROADCASTSS mathfC<>+72(SB), Y3
	VFMADD213PS Y3, Y1, Y2
	VBROADCASTSS mathfC<>+76(SB), Y3
	VFMADD213PS Y3, Y1, Y2
	VBROADCASTSS mathfC<>+80(SB), Y3
	VFMADD213PS Y3, Y1, Y2
	VBROADCASTSS mathfC<>+84(SB), Y3
	VFMADD213PS Y3, Y1, Y2
	VBROADCASTSS mathfC<>+88(SB), Y3
	VFMADD213PS Y3, Y1, Y2
	VMULPS Y0, Y2, Y2 // p
	VBROADCASTSS mathfC<>+92(SB), Y5
	VBROADCASTSS mathfC<>+96(SB), Y3
	VFMADD213PS Y3, Y1, Y5
	VBROADCASTSS mathfC<>+100(SB), Y3
	VFMADD213PS Y3, Y1, Y5
	VBROADCASTSS mathfC<>+104(SB), Y3
	VFMADD213PS Y3, Y1, Y5
	VBROADCASTSS mathfC<>+108(SB), Y3
	VFMADD213PS Y3, Y1, Y5 // q
	VDIVPS Y5, Y2, Y2 // erf
	VMULPS Y11, Y4, Y4 // x/2
	VFMADD213PS Y4, Y4, Y2 // x/2·erf + x/2
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE geluloop

geludone:
	VZEROUPPER
	RET

// func maxAVX2(src *float32, n int) float32
// The maximum of src[:n], NaN if any is NaN. n is a positive multiple of 8.
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VXORPS Y2, Y2, Y2 // NaN lanes seen
	SHRQ $3, CX

maxloop:
	VMOVUPS (SI), Y1
	VCMPPS $3, Y1, Y1, Y3 // unordered: NaN
	VORPS Y3, Y2, Y2
	VMAXPS Y1, Y0, Y0
	ADDQ $32, SI
	DECQ CX
	JNE maxloop

	VORPS Y2, Y0, Y0 // NaN lanes become NaN (all ones)
	VEXTRACTF128 $1, Y0, X1
	VCMPPS $3, X1, X0, X3 // unordered between the halves
	VMAXPS X1, X0, X0
	VORPS X3, X0, X0
	VPERMILPS $0x4e, X0, X1
	VCMPPS $3, X1, X0, X3
	VMAXPS X1, X0, X0
	VORPS X3, X0, X0
	VPERMILPS $0xb1, X0, X1
	VCMPPS $3, X1, X0, X3
	VMAXPS X1, X0, X0
	VORPS X3, X0, X0
	MOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func scaleAVX2(dst *float32, n int, s float32)
// dst[i] *= s for i < n, n a multiple of 8.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS s+16(FP), Y1
	SHRQ $3, CX
	JEQ scaledone

scaleloop:
	VMULPS (DI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNE scaleloop

scaledone:
	VZEROUPPER
	RET
