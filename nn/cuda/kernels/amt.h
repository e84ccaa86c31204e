// amt.h — the common header of amt's CUDA kernels.
//
// The kernels are written in the subset of CUDA C that is also C11, so that
// the same sources compile two ways:
//
//   - for the GPU, by clang (-x cuda --cuda-device-only -nocudainc
//     -nocudalib) to PTX, which the driver JIT-compiles at load time. No
//     CUDA toolkit header or library is used: the thread indices, barrier
//     and qualifiers come from clang's NVPTX builtins below, and the few
//     math functions the kernels need are defined here in plain arithmetic
//     (no libdevice);
//   - for the host, by the system C compiler into the fake driver of the
//     tests (../fakecuda), with -include fakecuda/shim.h, which defines the
//     same names over a scheduler that runs each block's threads as fibers.
//
// Every kernel takes one argument, a struct of params.h, and is declared
// with KERNEL(name, params type, argument name).
#ifndef AMT_H
#define AMT_H

#if defined(__CUDA_ARCH__)

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define AMT_INLINE static __device__ __inline__ __attribute__((always_inline))

typedef struct {
	unsigned x, y, z;
} amt_dim3;

#define AMT_SREG3(name, reg)                                                               \
	AMT_INLINE amt_dim3 name(void) {                                                        \
		amt_dim3 d = {(unsigned)__nvvm_read_ptx_sreg_##reg##_x(),                           \
		              (unsigned)__nvvm_read_ptx_sreg_##reg##_y(),                           \
		              (unsigned)__nvvm_read_ptx_sreg_##reg##_z()};                          \
		return d;                                                                           \
	}
AMT_SREG3(amt_thread_idx, tid)
AMT_SREG3(amt_block_idx, ctaid)
AMT_SREG3(amt_block_dim, ntid)
AMT_SREG3(amt_grid_dim, nctaid)
#define threadIdx amt_thread_idx()
#define blockIdx amt_block_idx()
#define blockDim amt_block_dim()
#define gridDim amt_grid_dim()
// __syncthreads is a clang builtin for NVPTX (bar.sync 0).

#define KERNEL(name, T, p) extern "C" __global__ void name(const T p)

#else // host: the fake driver's shim provides the same names

#ifndef AMT_HOST_SHIM
#error "compile the kernels for the host with -include fakecuda/shim.h"
#endif

#endif

#include "params.h"

#ifndef NULL
#ifdef __cplusplus
#define NULL 0
#else
#define NULL ((void *)0)
#endif
#endif

#define AMT_INF (__builtin_inff())
#define AMT_NAN (__builtin_nanf(""))

// Bit casts between float and int (unions are well defined in C and
// supported by clang for CUDA).
typedef union {
	float f;
	int i;
} amt_bits;

AMT_INLINE float amt_int_as_float(int i) {
	amt_bits b;
	b.i = i;
	return b.f;
}
AMT_INLINE int amt_float_as_int(float f) {
	amt_bits b;
	b.f = f;
	return b.i;
}

AMT_INLINE float amt_floorf(float x) { return __builtin_floorf(x); }
AMT_INLINE float amt_ceilf(float x) { return __builtin_ceilf(x); }
AMT_INLINE float amt_fabsf(float x) { return __builtin_fabsf(x); }
AMT_INLINE float amt_sqrtf(float x) { return __builtin_sqrtf(x); }

// amt_ldexpf returns y·2^k for k in [-300, 300] (two steps so that the
// intermediate power of two stays a normal float).
AMT_INLINE float amt_ldexpf(float y, int k) {
	if (k > 127) {
		y *= 1.7014118e38f; // 2^127
		k -= 127;
		if (k > 127)
			k = 127;
	} else if (k < -126) {
		y *= 1.1754944e-38f; // 2^-126
		k += 126;
		if (k < -126)
			k = -126;
	}
	return y * amt_int_as_float((k + 127) << 23);
}

// amt_expf is exp(x) in single precision (Cephes expf: Cody–Waite range
// reduction by ln 2 and a degree-6 polynomial; about 1 ulp).
AMT_INLINE float amt_expf(float x) {
	if (x != x)
		return x;
	if (x > 88.72284f)
		return AMT_INF;
	if (x < -103.97208f)
		return 0.0f;
	float k = amt_floorf(x * 1.44269504088896341f + 0.5f);
	float r = x - k * 0.693359375f;
	r = r - k * -2.12194440e-4f;
	float p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	float y = p * r * r + r + 1.0f;
	return amt_ldexpf(y, (int)k);
}

// amt_expm1f is exp(x)−1 without cancellation near 0 (Taylor series to
// x⁹/9! for |x| < 0.5, whose truncation error is below 3e-10).
AMT_INLINE float amt_expm1f(float x) {
	if (amt_fabsf(x) < 0.5f) {
		float p = 1.0f / 362880.0f;
		p = p * x + 1.0f / 40320.0f;
		p = p * x + 1.0f / 5040.0f;
		p = p * x + 1.0f / 720.0f;
		p = p * x + 1.0f / 120.0f;
		p = p * x + 1.0f / 24.0f;
		p = p * x + 1.0f / 6.0f;
		p = p * x + 0.5f;
		return x + x * x * p;
	}
	return amt_expf(x) - 1.0f;
}

// amt_logf is log(x) in single precision (Cephes logf: the mantissa
// reduced to [√½, √2) and a degree-9 polynomial; about 1 ulp).
AMT_INLINE float amt_logf(float x) {
	if (x != x || x == AMT_INF)
		return x;
	if (x < 0.0f)
		return AMT_NAN;
	if (x == 0.0f)
		return -AMT_INF;
	int e = 0;
	if (x < 1.17549435e-38f) { // subnormal: scale into the normal range
		x *= 8388608.0f;       // 2^23
		e = -23;
	}
	int bits = amt_float_as_int(x);
	e += ((bits >> 23) & 0xff) - 126;
	float m = amt_int_as_float((bits & 0x007fffff) | 0x3f000000); // [0.5, 1)
	if (m < 0.70710678118654752f) {
		e -= 1;
		m = m + m - 1.0f;
	} else {
		m = m - 1.0f;
	}
	float z = m * m;
	float y = 7.0376836292e-2f;
	y = y * m - 1.1514610310e-1f;
	y = y * m + 1.1676998740e-1f;
	y = y * m - 1.2420140846e-1f;
	y = y * m + 1.4249322787e-1f;
	y = y * m - 1.6668057665e-1f;
	y = y * m + 2.0000714765e-1f;
	y = y * m - 2.4999993993e-1f;
	y = y * m + 3.3333331174e-1f;
	y = y * m * z;
	float fe = (float)e;
	y += -2.12194440e-4f * fe;
	y += -0.5f * z;
	return m + y + 0.693359375f * fe;
}

// amt_tanhf is tanh(x) (Cephes tanhf: a polynomial below 0.625, the
// exponential form above).
AMT_INLINE float amt_tanhf(float x) {
	float a = amt_fabsf(x);
	if (x != x)
		return x;
	if (a > 9.0f)
		return x > 0 ? 1.0f : -1.0f;
	if (a >= 0.625f) {
		float t = 1.0f - 2.0f / (amt_expf(a + a) + 1.0f);
		return x > 0 ? t : -t;
	}
	float z = x * x;
	float p = -5.70498872745e-3f;
	p = p * z + 2.06390887954e-2f;
	p = p * z - 5.37397155531e-2f;
	p = p * z + 1.33314422036e-1f;
	p = p * z - 3.33332819422e-1f;
	return p * z * x + x;
}

AMT_INLINE float amt_sigmoidf(float x) { return 1.0f / (1.0f + amt_expf(-x)); }

// amt_powf is x^y: exact repeated squaring for integer exponents up to
// 64 in magnitude, exp(y·log x) otherwise; negative bases need integer
// exponents (NaN otherwise), as C's powf.
AMT_INLINE float amt_powf(float x, float y) {
	if (y == 0.0f)
		return 1.0f;
	if (x != x || y != y)
		return x + y;
	if (amt_fabsf(y) <= 64.0f && amt_floorf(y) == y) {
		int yi = (int)y;
		unsigned n = yi < 0 ? (unsigned)-yi : (unsigned)yi;
		float r = 1.0f, b = x;
		while (n) {
			if (n & 1)
				r *= b;
			b *= b;
			n >>= 1;
		}
		return yi < 0 ? 1.0f / r : r;
	}
	if (x == 0.0f)
		return y > 0 ? 0.0f : AMT_INF;
	if (x < 0.0f) {
		if (amt_floorf(y) != y)
			return AMT_NAN;
		float r = amt_expf(y * amt_logf(-x));
		float half = y * 0.5f;
		return amt_floorf(half) == half ? r : -r; // even or odd exponent
	}
	return amt_expf(y * amt_logf(x));
}

// amt_activate applies a fused activation (AMT_ACT_*) to v. Comparisons,
// not fmaxf, so that NaN passes through as in the CPU kernels.
AMT_INLINE float amt_activate(float v, int act, float alpha, float lo, float hi) {
	switch (act) {
	case AMT_ACT_RELU:
		return v < 0.0f ? 0.0f : v;
	case AMT_ACT_LEAKY_RELU:
		return v < 0.0f ? alpha * v : v;
	case AMT_ACT_CLIP:
		if (v < lo)
			v = lo;
		if (v > hi)
			v = hi;
		return v;
	}
	return v;
}

// amt_global_id is the flat index of the calling thread in a 1-D launch
// (the Go side keeps every element count below 2^31).
AMT_INLINE int amt_global_id(void) { return (int)(blockIdx.x * blockDim.x + threadIdx.x); }

// amt_plane_pixel locates output element i (below planes·oh·ow) of a
// launch over planes planes of oh × ow outputs: pixel (*oy, *ox) of its
// plane, whose input, in planes of ih × iw floats from x, it returns.
AMT_INLINE const float *amt_plane_pixel(const float *x, int ih, int iw, int oh, int ow, int i, int *oy,
                                        int *ox) {
	int ohw = oh * ow;
	int plane = i / ohw, pix = i % ohw;
	*oy = pix / ow;
	*ox = pix % ow;
	return x + (long long)plane * ih * iw;
}

// The tiling of conv2d_tiled and gemm_tiled: a block of 256 threads
// computes AMT_TILE × AMT_TILE outputs, the product of an output-rows ×
// reduction and a reduction × output-columns operand, AMT_TILE_K steps of
// the reduction at a time through shared memory (tiles a[k][row] and
// b[k][column]); thread (tx, ty) = (tid % 16, tid / 16) accumulates the
// 4×4 sub-tile of rows ty + 16i and columns tx + 16j.
#define AMT_TILE 64
#define AMT_TILE_K 16

// amt_tiles is a block's shared memory in that tiling.
typedef struct {
	float a[AMT_TILE_K][AMT_TILE];
	float b[AMT_TILE_K][AMT_TILE];
} amt_tiles;

// amt_tile_accumulate adds the product of the tiles t->a and t->b to the
// sub-tile acc of thread (tx, ty).
AMT_INLINE void amt_tile_accumulate(float acc[4][4], const amt_tiles *t, int tx, int ty) {
	for (int kk = 0; kk < AMT_TILE_K; kk++) {
		float a[4], b[4];
		for (int i = 0; i < 4; i++)
			a[i] = t->a[kk][ty + 16 * i];
		for (int j = 0; j < 4; j++)
			b[j] = t->b[kk][tx + 16 * j];
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++)
				acc[i][j] += a[i] * b[j];
	}
}

// amt_next_coord unravels a row-major flat index *r one axis at a time,
// from the last axis to the first: it returns the coordinate along an
// axis of extent n and leaves in *r the flat index over the axes before
// it. The shape-generic kernels call it from loops over AMT_MAX_DIMS that
// are fully unrolled, so that their parameter arrays are indexed only by
// constants (a run-time index would copy the parameters to local memory).
AMT_INLINE int amt_next_coord(int *r, int n) {
	int c = *r % n;
	*r /= n;
	return c;
}

#endif
