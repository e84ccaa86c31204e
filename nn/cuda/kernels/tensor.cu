// tensor.cu — data movement: strided permutation (Transpose), index-map
// gathers (Slice, Pad, Split, Expand, Gather, nearest Resize), block copies
// (Concat) and bilinear resize. One thread per output element: grid
// ⌈n / 256⌉, block 256.
#include "amt.h"

// permute: y[i] = x[Σ idx_d·x_stride_d] for the index idx of i in shape.
KERNEL(permute, amt_permute_params, p) {
	int i = amt_global_id();
	if (i >= p.n)
		return;
	long long ix = 0;
#pragma unroll
	for (int d = AMT_MAX_DIMS - 1, r = i; d >= 0; d--) { // unrolled: no dynamic indexing of p
		if (d >= p.ndim)
			continue;
		ix += (long long)amt_next_coord(&r, p.shape[d]) * p.x_stride[d];
	}
	p.y[i] = p.x[ix];
}

// gather_axes: y[idx] = x[Σ maps[map_off_d + idx_d]·x_stride_d], fill
// where a map entry is negative.
KERNEL(gather_axes, amt_gather_params, p) {
	int i = amt_global_id();
	if (i >= p.n)
		return;
	long long ix = 0;
	int valid = 1;
#pragma unroll
	for (int d = AMT_MAX_DIMS - 1, r = i; d >= 0; d--) { // unrolled: no dynamic indexing of p
		if (d >= p.ndim)
			continue;
		int m = p.maps[p.map_off[d] + amt_next_coord(&r, p.shape[d])];
		if (m < 0)
			valid = 0;
		ix += (long long)m * p.x_stride[d];
	}
	p.y[i] = valid ? p.x[ix] : p.fill;
}

// copy2d: a rows × cols block between strided rows.
KERNEL(copy2d, amt_copy2d_params, p) {
	int i = amt_global_id();
	if (i >= p.rows * p.cols)
		return;
	int r = i / p.cols, j = i % p.cols;
	p.y[p.y_off + (long long)r * p.y_stride + j] = p.x[p.x_off + (long long)r * p.x_stride + j];
}

// resize_linear: bilinear interpolation with precomputed taps, evaluated
// in nn/resize.go's order.
KERNEL(resize_linear, amt_resize_params, p) {
	int i = amt_global_id();
	if (i >= p.planes * (p.oh * p.ow))
		return;
	int oy, ox;
	const float *x = amt_plane_pixel(p.x, p.ih, p.iw, p.oh, p.ow, i, &oy, &ox);
	const float *r0 = x + p.y_idx[2 * oy] * p.iw;
	const float *r1 = x + p.y_idx[2 * oy + 1] * p.iw;
	float yw0 = p.y_w[2 * oy], yw1 = p.y_w[2 * oy + 1];
	int xi0 = p.x_idx[2 * ox], xi1 = p.x_idx[2 * ox + 1];
	float xw0 = p.x_w[2 * ox], xw1 = p.x_w[2 * ox + 1];
	p.y[i] = xw0 * yw0 * r0[xi0] + xw1 * yw0 * r0[xi1] + xw0 * yw1 * r1[xi0] + xw1 * yw1 * r1[xi1];
}
