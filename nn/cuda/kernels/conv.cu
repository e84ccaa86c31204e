// conv.cu — 2-D convolution over NCHW tensors with the epilogue amt's CPU
// kernels fuse: bias, a per-channel scale and shift (BatchNormalization),
// a residual addition and Relu/LeakyRelu/Clip, in that order.
#include "amt.h"

// conv_store finishes output (b, oc, pixel) of accumulated value v.
AMT_INLINE void conv_store(const amt_conv_params p, int b, int oc, int pix, float v) {
	if (p.bias)
		v += p.bias[oc];
	if (p.scale)
		v = v * p.scale[oc] + p.shift[oc];
	long long at = (long long)b * p.y_batch_stride + p.y_offset + (long long)oc * p.oh * p.ow + pix;
	if (p.res)
		v += p.res[at];
	p.y[at] = amt_activate(v, p.act, p.alpha, p.lo, p.hi);
}

// conv2d_tiled: a block computes 64 output channels × 64 output columns
// (image and pixel, across the batch) of one group as an implicit GEMM in
// amt.h's tiling, weights [oc/groups × ic/groups·kh·kw] times the
// never-materialised im2col matrix. Grid (⌈n·oh·ow / 64⌉,
// ⌈(oc/groups) / 64⌉, groups), block 256.
KERNEL(conv2d_tiled, amt_conv_params, p) {
	__shared__ amt_tiles t;
	int tid = threadIdx.x;
	int tx = tid % 16, ty = tid / 16;
	int g = blockIdx.z;
	int ocg = p.oc / p.groups, icg = p.ic / p.groups;
	int khw = p.kh * p.kw;
	int kdim = icg * khw;
	int ohw = p.oh * p.ow;
	int ncols = p.n * ohw;
	int m0 = blockIdx.y * AMT_TILE, n0 = blockIdx.x * AMT_TILE;
	const float *w = p.w + (long long)g * ocg * kdim;

	// This thread loads column bcol of the im2col tile (rows brow + 4j)
	// and row arow of the weight tile (columns acol..acol+3).
	int bcol = n0 + tid % AMT_TILE, brow = tid / AMT_TILE;
	int bvalid = bcol < ncols;
	int bimg = 0, iy0 = 0, ix0 = 0;
	if (bvalid) {
		bimg = bcol / ohw;
		int pix = bcol - bimg * ohw;
		int oy = pix / p.ow, ox = pix - (pix / p.ow) * p.ow;
		iy0 = oy * p.stride_h - p.pad_h;
		ix0 = ox * p.stride_w - p.pad_w;
	}
	const float *xg = p.x + ((long long)bimg * p.ic + (long long)g * icg) * p.ih * p.iw;
	int arow = tid / 4, acol = (tid % 4) * 4;
	int am = m0 + arow;

	float acc[4][4];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			acc[i][j] = 0.0f;

	for (int k0 = 0; k0 < kdim; k0 += AMT_TILE_K) {
		for (int j = 0; j < 4; j++) {
			int k = k0 + acol + j;
			t.a[acol + j][arow] = (am < ocg && k < kdim) ? w[(long long)am * kdim + k] : 0.0f;
		}
		for (int j = 0; j < 4; j++) {
			int kr = brow + 4 * j;
			int k = k0 + kr;
			float v = 0.0f;
			if (bvalid && k < kdim) {
				int c = k / khw;
				int r = k - c * khw;
				int ky = r / p.kw, kx = r - (r / p.kw) * p.kw;
				int iy = iy0 + ky * p.dil_h, ix = ix0 + kx * p.dil_w;
				if (iy >= 0 && iy < p.ih && ix >= 0 && ix < p.iw)
					v = xg[((long long)c * p.ih + iy) * p.iw + ix];
			}
			t.b[kr][tid % AMT_TILE] = v;
		}
		__syncthreads();
		amt_tile_accumulate(acc, &t, tx, ty);
		__syncthreads();
	}

#pragma unroll
	for (int i = 0; i < 4; i++) {
		int m = m0 + ty + 16 * i;
		if (m >= ocg)
			continue;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			int col = n0 + tx + 16 * j;
			if (col >= ncols)
				continue;
			int b = col / ohw;
			conv_store(p, b, g * ocg + m, col - b * ohw, acc[i][j]);
		}
	}
}

// conv2d_direct: one thread per output element, the reduction in a
// register; for layers with few output channels per group (depthwise),
// where a 64-row weight tile would mostly idle. Grid ⌈n·oc·oh·ow / 256⌉,
// block 256.
KERNEL(conv2d_direct, amt_conv_params, p) {
	int ohw = p.oh * p.ow;
	int i = amt_global_id();
	if (i >= p.n * p.oc * ohw)
		return;
	int pix = i % ohw;
	int t = i / ohw;
	int oc = t % p.oc, b = t / p.oc;
	int oy = pix / p.ow, ox = pix % p.ow;
	int ocg = p.oc / p.groups, icg = p.ic / p.groups;
	int g = oc / ocg;
	const float *xb = p.x + ((long long)b * p.ic + (long long)g * icg) * p.ih * p.iw;
	const float *wo = p.w + (long long)oc * icg * p.kh * p.kw;
	int iy0 = oy * p.stride_h - p.pad_h, ix0 = ox * p.stride_w - p.pad_w;
	float acc = 0.0f;
	for (int c = 0; c < icg; c++) {
		const float *plane = xb + (long long)c * p.ih * p.iw;
		const float *wc = wo + c * p.kh * p.kw;
		for (int ky = 0; ky < p.kh; ky++) {
			int iy = iy0 + ky * p.dil_h;
			if (iy < 0 || iy >= p.ih)
				continue;
			for (int kx = 0; kx < p.kw; kx++) {
				int ix = ix0 + kx * p.dil_w;
				if (ix >= 0 && ix < p.iw)
					acc += wc[ky * p.kw + kx] * plane[iy * p.iw + ix];
			}
		}
	}
	conv_store(p, b, oc, pix, acc);
}
