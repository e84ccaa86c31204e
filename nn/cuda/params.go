//go:build gpu

package cuda

// The kernels amt launches, and their parameter blocks: each struct
// mirrors one of kernels/params.h field by field (a pointer is a uint64
// CUdeviceptr, int an int32, float a float32). TestParamsMatchHeader
// checks the two against each other and against the PTX.

// kernel indexes Device.fns.
type kernel int

const (
	kConv2dTiled kernel = iota
	kConv2dDirect
	kGemmTiled
	kMaxPool2d
	kAvgPool2d
	kReduceAxis
	kSoftmaxAxis
	kUnary
	kChannelAffine
	kBinary
	kPermute
	kGatherAxes
	kCopy2d
	kResizeLinear
	numKernels
)

var kernelNames = [numKernels]string{
	"conv2d_tiled", "conv2d_direct", "gemm_tiled", "max_pool2d", "avg_pool2d", "reduce_axis",
	"softmax_axis", "unary", "channel_affine", "binary", "permute", "gather_axes", "copy2d",
	"resize_linear",
}

func (k kernel) name() string { return kernelNames[k] }

// maxDims is AMT_MAX_DIMS.
const maxDims = 6

// convParams is amt_conv_params.
type convParams struct {
	X, W, Bias, Scale, Shift, Res, Y uint64
	N, IC, IH, IW                    int32
	OC, OH, OW                       int32
	KH, KW                           int32
	StrideH, StrideW                 int32
	PadH, PadW                       int32
	DilH, DilW                       int32
	Groups                           int32
	YOffset, YBatchStride            int32
	Act                              int32
	Alpha, Lo, Hi                    float32
}

// gemmParams is amt_gemm_params.
type gemmParams struct {
	A, B, C, Y                         uint64
	M, N, K                            int32
	TransA, TransB                     int32
	LDA, LDB, LDCRow, LDCCol, LDY      int32
	StrideA, StrideB, StrideC, StrideY int32
	Batch                              int32
	Act                                int32
	Alpha, Beta, ActAlpha, Lo, Hi      float32
	Pad                                int32
}

// poolParams is amt_pool_params.
type poolParams struct {
	X, Y                                 uint64
	Planes, IH, IW, OH, OW               int32
	KH, KW                               int32
	StrideH, StrideW                     int32
	PadTop, PadLeft, PadBottom, PadRight int32
	DilH, DilW                           int32
	CountIncludePad                      int32
}

// reduceParams is amt_reduce_params.
type reduceParams struct {
	X, Y            uint64
	Outer, N, Inner int32
	Op              int32
}

// softmaxParams is amt_softmax_params.
type softmaxParams struct {
	X, Y            uint64
	Outer, N, Inner int32
	Pad             int32
}

// unaryParams is amt_unary_params.
type unaryParams struct {
	X, Y        uint64
	N           int32
	Op          int32
	Alpha, Beta float32
}

// affineParams is amt_affine_params.
type affineParams struct {
	X, Scale, Shift, Y uint64
	N, C, Inner        int32
	Pad                int32
}

// binaryParams is amt_binary_params.
type binaryParams struct {
	A, B, Y     uint64
	N, NDim, Op int32
	Shape       [maxDims]int32
	AStride     [maxDims]int32
	BStride     [maxDims]int32
	Pad         int32
}

// permuteParams is amt_permute_params.
type permuteParams struct {
	X, Y    uint64
	N, NDim int32
	Shape   [maxDims]int32
	XStride [maxDims]int32
}

// gatherParams is amt_gather_params.
type gatherParams struct {
	X, Maps, Y uint64
	N, NDim    int32
	Shape      [maxDims]int32
	XStride    [maxDims]int32
	MapOff     [maxDims]int32
	Fill       float32
	Pad        int32
}

// copy2dParams is amt_copy2d_params.
type copy2dParams struct {
	X, Y                         uint64
	Rows, Cols                   int32
	XOff, XStride, YOff, YStride int32
}

// resizeParams is amt_resize_params.
type resizeParams struct {
	X, YIdx, YW, XIdx, XW, Y uint64
	Planes, IH, IW, OH, OW   int32
	Pad                      int32
}
