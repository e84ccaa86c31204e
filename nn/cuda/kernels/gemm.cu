// gemm.cu — single-precision matrix multiplication (ONNX Gemm and MatMul,
// BLAS sgemm semantics plus a broadcast C term and an activation).
#include "amt.h"

// gemm_load_tile stores in tile[k][r] element (r0 + r, k0 + k) of an
// operand with rn rows (of y's rows or columns) and kn steps of the
// reduction, 0 outside. Element (r, k) is at x[r·ld + k] when k_inner (a
// not transposed, b transposed), at x[k·ld + r] otherwise; element e of
// the tile is chosen so that consecutive threads read consecutive
// addresses either way.
AMT_INLINE void gemm_load_tile(float tile[AMT_TILE_K][AMT_TILE], const float *x, int ld, int k_inner,
                               int r0, int rn, int k0, int kn, int tid) {
	for (int j = 0; j < 4; j++) {
		int e = tid + 256 * j;
		int ri, ki;
		if (k_inner) {
			ri = e / AMT_TILE_K;
			ki = e % AMT_TILE_K;
		} else {
			ri = e % AMT_TILE;
			ki = e / AMT_TILE;
		}
		int r = r0 + ri, k = k0 + ki;
		float v = 0.0f;
		if (r < rn && k < kn)
			v = k_inner ? x[(long long)r * ld + k] : x[(long long)k * ld + r];
		tile[ki][ri] = v;
	}
}

// gemm_tiled: amt.h's tiling; grid (⌈n / 64⌉, ⌈m / 64⌉, batch), block 256.
KERNEL(gemm_tiled, amt_gemm_params, p) {
	__shared__ amt_tiles t;
	int tid = threadIdx.x;
	int tx = tid % 16, ty = tid / 16;
	int z = blockIdx.z;
	int m0 = blockIdx.y * AMT_TILE, n0 = blockIdx.x * AMT_TILE;
	const float *a = p.a + (long long)z * p.stride_a;
	const float *b = p.b + (long long)z * p.stride_b;

	float acc[4][4];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			acc[i][j] = 0.0f;

	for (int k0 = 0; k0 < p.k; k0 += AMT_TILE_K) {
		gemm_load_tile(t.a, a, p.lda, !p.trans_a, m0, p.m, k0, p.k, tid);
		gemm_load_tile(t.b, b, p.ldb, p.trans_b, n0, p.n, k0, p.k, tid);
		__syncthreads();
		amt_tile_accumulate(acc, &t, tx, ty);
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
