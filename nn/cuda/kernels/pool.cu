// pool.cu — windowed pooling, reductions along one axis (global pooling,
// ReduceMean) and softmax. One thread per output; sums run sequentially
// in index order, as on the CPU.
#include "amt.h"

// A pooling window: the input plane x and the top-left tap (y0, x0) in
// its coordinates (negative in the padding).
typedef struct {
	const float *x;
	int y0, x0;
} pool_window;

// pool_window_of is the window of output element i of max_pool2d or
// avg_pool2d.
AMT_INLINE pool_window pool_window_of(const amt_pool_params p, int i) {
	int oy, ox;
	pool_window w;
	w.x = amt_plane_pixel(p.x, p.ih, p.iw, p.oh, p.ow, i, &oy, &ox);
	w.y0 = oy * p.stride_h - p.pad_top;
	w.x0 = ox * p.stride_w - p.pad_left;
	return w;
}

// max_pool2d: grid ⌈planes·oh·ow / 256⌉, block 256. Padding never wins;
// a NaN in the window gives NaN (nn/kernels.MaxPool).
KERNEL(max_pool2d, amt_pool_params, p) {
	int i = amt_global_id();
	if (i >= p.planes * (p.oh * p.ow))
		return;
	pool_window w = pool_window_of(p, i);
	float m = -AMT_INF;
	for (int ky = 0; ky < p.kh; ky++) {
		int iy = w.y0 + ky * p.dil_h;
		if (iy < 0 || iy >= p.ih)
			continue;
		for (int kx = 0; kx < p.kw; kx++) {
			int ix = w.x0 + kx * p.dil_w;
			if (ix < 0 || ix >= p.iw)
				continue;
			float v = w.x[iy * p.iw + ix];
			if (v > m || v != v)
				m = v;
		}
	}
	p.y[i] = m;
}

// avg_pool2d: grid ⌈planes·oh·ow / 256⌉, block 256; no dilation. The
// divisor is nn's AveragePool's: the window clipped to the padded input
// with count_include_pad, to the input without.
KERNEL(avg_pool2d, amt_pool_params, p) {
	int i = amt_global_id();
	if (i >= p.planes * (p.oh * p.ow))
		return;
	pool_window w = pool_window_of(p, i);
	int ye = w.y0 + p.kh, xe = w.x0 + p.kw;
	if (ye > p.ih + p.pad_bottom)
		ye = p.ih + p.pad_bottom;
	if (xe > p.iw + p.pad_right)
		xe = p.iw + p.pad_right;
	int area = (ye - w.y0) * (xe - w.x0);
	int ys = w.y0 < 0 ? 0 : w.y0, xs = w.x0 < 0 ? 0 : w.x0;
	if (ye > p.ih)
		ye = p.ih;
	if (xe > p.iw)
		xe = p.iw;
	float s = 0.0f;
	for (int iy = ys; iy < ye; iy++)
		for (int ix = xs; ix < xe; ix++)
			s += w.x[iy * p.iw + ix];
	if (!p.count_include_pad)
		area = (ye - ys) * (xe - xs);
	p.y[i] = s / (float)area;
}

// reduce_axis: y[o, i] = op over k of x[o, k, i]. Grid ⌈outer·inner / 256⌉,
// block 256. Max propagates NaN (Go's max).
KERNEL(reduce_axis, amt_reduce_params, p) {
	int t = amt_global_id();
	if (t >= p.outer * p.inner)
		return;
	int o = t / p.inner, in = t % p.inner;
	const float *x = p.x + (long long)o * p.n * p.inner + in;
	float r;
	if (p.op == AMT_REDUCE_MAX) {
		r = -AMT_INF;
		for (int k = 0; k < p.n; k++) {
			float v = x[(long long)k * p.inner];
			if (v > r || v != v)
				r = v;
			if (r != r)
				break;
		}
	} else {
		r = 0.0f;
		for (int k = 0; k < p.n; k++)
			r += x[(long long)k * p.inner];
		if (p.op == AMT_REDUCE_MEAN)
			r /= (float)p.n;
	}
	p.y[t] = r;
}

// softmax_axis: softmax of x[o, ·, i] for each (o, i): the maximum
// subtracted, exponentials summed in double precision. Grid
// ⌈outer·inner / 256⌉, block 256.
KERNEL(softmax_axis, amt_softmax_params, p) {
	int t = amt_global_id();
	if (t >= p.outer * p.inner)
		return;
	int o = t / p.inner, in = t % p.inner;
	long long base = (long long)o * p.n * p.inner + in;
	const float *x = p.x + base;
	float *y = p.y + base;
	float m = -AMT_INF;
	for (int k = 0; k < p.n; k++) {
		float v = x[(long long)k * p.inner];
		if (v > m || v != v)
			m = v;
	}
	double s = 0.0;
	for (int k = 0; k < p.n; k++) {
		float e = amt_expf(x[(long long)k * p.inner] - m);
		y[(long long)k * p.inner] = e;
		s += e;
	}
	for (int k = 0; k < p.n; k++)
		y[(long long)k * p.inner] = (float)((double)y[(long long)k * p.inner] / s);
}
