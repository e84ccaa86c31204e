// elementwise.cu — element-wise unary and broadcasting binary operations.
// One thread per output element: grid ⌈n / 256⌉, block 256.
#include "amt.h"

#if AMT_UNARY_RELU != AMT_ACT_RELU || AMT_UNARY_LEAKY_RELU != AMT_ACT_LEAKY_RELU ||                         \
    AMT_UNARY_CLIP != AMT_ACT_CLIP
#error "unary_op applies Relu, LeakyRelu and Clip as fused activations: their codes must agree"
#endif

AMT_INLINE float unary_op(int op, float x, float alpha, float beta) {
	switch (op) {
	case AMT_UNARY_RELU:
	case AMT_UNARY_LEAKY_RELU:
	case AMT_UNARY_CLIP: // the fused activation of the same code
		return amt_activate(x, op, alpha, alpha, beta);
	case AMT_UNARY_SIGMOID:
		return amt_sigmoidf(x);
	case AMT_UNARY_TANH:
		return amt_tanhf(x);
	case AMT_UNARY_EXP:
		return amt_expf(x);
	case AMT_UNARY_LOG:
		return amt_logf(x);
	case AMT_UNARY_SQRT:
		return amt_sqrtf(x);
	case AMT_UNARY_NEG:
		return -x;
	case AMT_UNARY_ABS:
		return amt_fabsf(x);
	case AMT_UNARY_FLOOR:
		return amt_floorf(x);
	case AMT_UNARY_CEIL:
		return amt_ceilf(x);
	case AMT_UNARY_RECIPROCAL:
		return 1.0f / x;
	case AMT_UNARY_ELU:
		return x < 0.0f ? alpha * amt_expm1f(x) : x;
	case AMT_UNARY_HARD_SIGMOID: {
		float v = alpha * x + beta;
		if (v > 1.0f)
			v = 1.0f;
		return v < 0.0f ? 0.0f : v;
	}
	case AMT_UNARY_AFFINE:
		return alpha * x + beta;
	}
	return x; // AMT_UNARY_COPY
}

// unary: y[i] = f(x[i]); y may be x.
KERNEL(unary, amt_unary_params, p) {
	int i = amt_global_id();
	if (i < p.n)
		p.y[i] = unary_op(p.op, p.x[i], p.alpha, p.beta);
}

// channel_affine: y[i] = x[i]·scale[c] + shift[c]; y may be x.
KERNEL(channel_affine, amt_affine_params, p) {
	int i = amt_global_id();
	if (i >= p.n)
		return;
	int c = (i / p.inner) % p.c;
	p.y[i] = p.x[i] * p.scale[c] + p.shift[c];
}

AMT_INLINE float binary_op(int op, float a, float b) {
	switch (op) {
	case AMT_BINARY_SUB:
		return a - b;
	case AMT_BINARY_MUL:
		return a * b;
	case AMT_BINARY_DIV:
		return a / b;
	case AMT_BINARY_POW:
		return amt_powf(a, b);
	}
	return a + b;
}

// binary: y = f(a, b) with broadcasting strides; y may be a or b when it
// has that operand's shape.
KERNEL(binary, amt_binary_params, p) {
	int i = amt_global_id();
	if (i >= p.n)
		return;
	long long ia = 0, ib = 0;
#pragma unroll
	for (int d = AMT_MAX_DIMS - 1, r = i; d >= 0; d--) { // unrolled: no dynamic indexing of p
		if (d >= p.ndim)
			continue;
		int c = amt_next_coord(&r, p.shape[d]);
		ia += (long long)c * p.a_stride[d];
		ib += (long long)c * p.b_stride[d];
	}
	p.y[i] = binary_op(p.op, p.a[ia], p.b[ib]);
}
