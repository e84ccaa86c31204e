// params.h — the argument of every kernel: one struct each, passed by
// value (cuLaunchKernel's kernelParams[0] points to it).
//
// The Go side (../params.go) mirrors each struct field by field; a test
// parses this file and checks names, types and order against the Go
// structs, and the struct sizes against the .param sizes in the PTX. Keep
// to the field types that test knows: pointers (8 bytes, a CUdeviceptr),
// int, float and int arrays of AMT_MAX_DIMS, and keep every struct's size
// a multiple of 8.
#ifndef AMT_PARAMS_H
#define AMT_PARAMS_H

// AMT_MAX_DIMS is the largest tensor rank the shape-generic kernels
// (broadcasting, transpose, gather) handle.
#define AMT_MAX_DIMS 6

// Fused activations (the kinds of nn/kernels.ActKind, same values).
#define AMT_ACT_NONE 0
#define AMT_ACT_RELU 1
#define AMT_ACT_LEAKY_RELU 2
#define AMT_ACT_CLIP 3

// conv2d_tiled and conv2d_direct: y = act(conv(x, w) + bias, ·scale + shift,
// + res) over NCHW tensors. bias, scale/shift (both or neither) and res
// may be NULL. Output image b, channel c, pixel p is written at
// y[b·y_batch_stride + y_offset + c·oh·ow + p] (a Concat's slot when the
// stride is larger than oc·oh·ow); res is read at the same place.
typedef struct {
	const float *x;
	const float *w;
	const float *bias;
	const float *scale;
	const float *shift;
	const float *res;
	float *y;
	int n, ic, ih, iw;
	int oc, oh, ow;
	int kh, kw;
	int stride_h, stride_w;
	int pad_h, pad_w;
	int dil_h, dil_w;
	int groups;
	int y_offset, y_batch_stride;
	int act;
	float alpha, lo, hi;
} amt_conv_params;

// gemm_tiled: for each z in [0, batch):
// y[i·ldy + j] = alpha·Σ_k op(a)[i,k]·op(b)[k,j] + beta·c[i·ldc_row + j·ldc_col]
// then act, where op(x) is x or xᵀ as stored (row-major, leading
// dimensions lda, ldb) and matrix z starts at z·stride_* of each pointer.
// c may be NULL (no term), or y itself (ldc_row = ldy, ldc_col = 1), or a
// broadcast bias (strides 0).
typedef struct {
	const float *a;
	const float *b;
	const float *c;
	float *y;
	int m, n, k;
	int trans_a, trans_b;
	int lda, ldb, ldc_row, ldc_col, ldy;
	int stride_a, stride_b, stride_c, stride_y;
	int batch;
	int act;
	float alpha, beta, act_alpha, lo, hi;
	int pad;
} amt_gemm_params;

// max_pool2d and avg_pool2d over planes NCHW planes. Output (oy, ox)
// covers input rows oy·stride_h − pad_top + ky·dil_h (and columns
// likewise); taps outside the input are skipped. avg_pool2d divides by
// the number of taps inside the input, or, with count_include_pad, by
// the window clipped to the padded input (pad_bottom, pad_right).
typedef struct {
	const float *x;
	float *y;
	int planes, ih, iw, oh, ow;
	int kh, kw;
	int stride_h, stride_w;
	int pad_top, pad_left, pad_bottom, pad_right;
	int dil_h, dil_w;
	int count_include_pad;
} amt_pool_params;

// Reductions of x viewed as [outer, n, inner] over the middle axis into y
// [outer, inner], summed sequentially in index order.
#define AMT_REDUCE_SUM 0
#define AMT_REDUCE_MEAN 1
#define AMT_REDUCE_MAX 2

typedef struct {
	const float *x;
	float *y;
	int outer, n, inner;
	int op;
} amt_reduce_params;

// softmax of x viewed as [outer, n, inner] along the middle axis.
typedef struct {
	const float *x;
	float *y;
	int outer, n, inner;
	int pad;
} amt_softmax_params;

// Element-wise unary operations: y[i] = f(x[i]) for i < n. Relu,
// LeakyRelu and Clip have the codes of the fused activations (AMT_ACT_*).
#define AMT_UNARY_COPY 0
#define AMT_UNARY_RELU 1
#define AMT_UNARY_LEAKY_RELU 2 // alpha
#define AMT_UNARY_CLIP 3       // [alpha, beta]
#define AMT_UNARY_SIGMOID 4
#define AMT_UNARY_TANH 5
#define AMT_UNARY_EXP 6
#define AMT_UNARY_LOG 7
#define AMT_UNARY_SQRT 8
#define AMT_UNARY_NEG 9
#define AMT_UNARY_ABS 10
#define AMT_UNARY_FLOOR 11
#define AMT_UNARY_CEIL 12
#define AMT_UNARY_RECIPROCAL 13
#define AMT_UNARY_ELU 14          // alpha
#define AMT_UNARY_HARD_SIGMOID 15 // max(0, min(1, alpha·x + beta))
#define AMT_UNARY_AFFINE 16       // alpha·x + beta

typedef struct {
	const float *x;
	float *y;
	int n;
	int op;
	float alpha, beta;
} amt_unary_params;

// channel_affine: y[i] = x[i]·scale[c] + shift[c] with c = (i / inner) % c
// (a BatchNormalization that could not be folded into a convolution).
typedef struct {
	const float *x;
	const float *scale;
	const float *shift;
	float *y;
	int n, c, inner;
	int pad;
} amt_affine_params;

// Element-wise binary operations with numpy broadcasting: y has shape
// shape[0..ndim) and y[i] = f(a[Σ idx_d·a_stride_d], b[Σ idx_d·b_stride_d])
// (stride 0 along broadcast axes).
#define AMT_BINARY_ADD 0
#define AMT_BINARY_SUB 1
#define AMT_BINARY_MUL 2
#define AMT_BINARY_DIV 3
#define AMT_BINARY_POW 4

typedef struct {
	const float *a;
	const float *b;
	float *y;
	int n, ndim, op;
	int shape[AMT_MAX_DIMS];
	int a_stride[AMT_MAX_DIMS];
	int b_stride[AMT_MAX_DIMS];
	int pad;
} amt_binary_params;

// permute: y has shape shape[0..ndim) and
// y[i] = x[Σ idx_d·x_stride_d]: Transpose (x_stride the permuted strides
// of the input) and any other strided copy.
typedef struct {
	const float *x;
	float *y;
	int n, ndim;
	int shape[AMT_MAX_DIMS];
	int x_stride[AMT_MAX_DIMS];
} amt_permute_params;

// gather_axes: y has shape shape[0..ndim) and
// y[idx] = x[Σ maps[map_off_d + idx_d]·x_stride_d], or fill where any map
// entry is negative: Slice, Pad, Split, Expand, Gather and
// nearest-neighbour Resize (nn's gatherAxes).
typedef struct {
	const float *x;
	const int *maps;
	float *y;
	int n, ndim;
	int shape[AMT_MAX_DIMS];
	int x_stride[AMT_MAX_DIMS];
	int map_off[AMT_MAX_DIMS];
	float fill;
	int pad;
} amt_gather_params;

// copy2d: y[y_off + r·y_stride + j] = x[x_off + r·x_stride + j] for
// r < rows, j < cols (one input of a Concat, or a strided block copy).
typedef struct {
	const float *x;
	float *y;
	int rows, cols;
	int x_off, x_stride, y_off, y_stride;
} amt_copy2d_params;

// resize_linear: bilinear resize of planes ih×iw planes to oh×ow with
// precomputed taps (nn/resize.go's arithmetic): row oy reads input rows
// y_idx[2·oy], y_idx[2·oy+1] with weights y_w[2·oy], y_w[2·oy+1], and
// columns likewise.
typedef struct {
	const float *x;
	const int *y_idx;
	const float *y_w;
	const int *x_idx;
	const float *x_w;
	float *y;
	int planes, ih, iw, oh, ow;
	int pad;
} amt_resize_params;

#endif
