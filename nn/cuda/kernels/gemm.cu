// gemm.cu — single-precision matrix multiplication (ONNX Gemm and MatMul,
// BLAS sgemm semantics plus a broadcast C term and an activation).
#include "amt.h"

// The tiling is conv2d_tiled's: 64×64 outputs per block of 256 threads,
// the reduction 16 deep through shared memory, a 4×4 sub-tile per thread.
#define GEMM_BM 64
#define GEMM_BN 64
#define GEMM_BK 16

// gemm_tiled: grid (⌈n / 64⌉, ⌈m / 64⌉, batch), block 256.
KERNEL(gemm_tiled, amt_gemm_params, p) {
	__shared__ float as[GEMM_BK][GEMM_BM];
	__shared__ float bs[GEMM_BK][GEMM_BN];
	int tid = threadIdx.x;
	int tx = tid % 16, ty = tid / 16;
	int z = blockIdx.z;
	int m0 = blockIdx.y * GEMM_BM, n0 = blockIdx.x * GEMM_BN;
	const float *a = p.a + (long long)z * p.stride_a;
	const float *b = p.b + (long long)z * p.stride_b;

	float acc[4][4];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			acc[i][j] = 0.0f;

	for (int k0 = 0; k0 < p.k; k0 += GEMM_BK) {
		// Element e of each tile is chosen so that consecutive threads
		// read consecutive addresses whether or not the operand is
		// transposed.
		for (int j = 0; j < 4; j++) {
			int e = tid + 256 * j;
			int mi, ki;
			if (p.trans_a) {
				mi = e % GEMM_BM;
				ki = e / GEMM_BM;
			} else {
				mi = e / GEMM_BK;
				ki = e % GEMM_BK;
			}
			int m = m0 + mi, k = k0 + ki;
			float v = 0.0f;
			if (m < p.m && k < p.k)
				v = p.trans_a ? a[(long long)k * p.lda + m] : a[(long long)m * p.lda + k];
			as[ki][mi] = v;
		}
		for (int j = 0; j < 4; j++) {
			int e = tid + 256 * j;
			int ki, ni;
			if (p.trans_b) {
				ki = e % GEMM_BK;
				ni = e / GEMM_BK;
			} else {
				ki = e / GEMM_BN;
				ni = e % GEMM_BN;
			}
			int k = k0 + ki, n = n0 + ni;
			float v = 0.0f;
			if (k < p.k && n < p.n)
				v = p.trans_b ? b[(long long)n * p.ldb + k] : b[(long long)k * p.ldb + n];
			bs[ki][ni] = v;
		}
		__syncthreads();
		for (int kk = 0; kk < GEMM_BK; kk++) {
			float av[4], bv[4];
			for (int i = 0; i < 4; i++)
				av[i] = as[kk][ty + 16 * i];
			for (int j = 0; j < 4; j++)
				bv[j] = bs[kk][tx + 16 * j];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					acc[i][j] += av[i] * bv[j];
		}
		__syncthreads();
	}

	const float *c = p.c ? p.c + (long long)z * p.stride_c : NULL;
	float *y = p.y + (long long)z * p.stride_y;
#pragma unroll
	for (int i = 0; i < 4; i++) {
		int m = m0 + ty + 16 * i;
		if (m >= p.m)
			continue;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			int n = n0 + tx + 16 * j;
			if (n >= p.n)
				continue;
			float v = p.alpha * acc[i][j];
			if (c)
				v += p.beta * c[(long long)m * p.ldc_row + (long long)n * p.ldc_col];
			y[(long long)m * p.ldy + n] = amt_activate(v, p.act, p.act_alpha, p.lo, p.hi);
		}
	}
}
