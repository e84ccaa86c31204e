// Package kernels holds amt's single-precision CPU compute kernels: GEMM,
// convolution and max pooling, used by the ONNX operators in package nn
// through custom Gorgonia ops. The API here is the contract between the
// importer and the kernels; implementations behind it (portable Go, amd64
// assembly) may be swapped without touching the importer.
//
// All matrices are row-major float32, images NCHW. Kernels may use several
// goroutines (up to runtime.GOMAXPROCS) for one call, fewer when other
// kernel calls are running at the same time (callers that already run
// images in parallel do not oversubscribe the CPU); the results never
// depend on the split. They are safe for concurrent use.
//
// # Design
//
// GEMM is blocked and packed in the BLIS/GotoBLAS manner around a
// register-blocked micro-kernel. The left operand (the weights of a
// convolution) is packed once into 4-row panels; the right operand is read
// through a table of row offsets, so that a convolution's input can be used
// in place. The micro-kernel's epilogue adds the bias and applies
// Relu/LeakyRelu/Clip while the tile is in registers.
//
// The innermost loops come in kernel sets, chosen at run time from the
// CPU's features (golang.org/x/sys/cpu): "avx512" (8×48 tiles in 24 ZMM
// accumulators, masked edges), "avx2" (4×24 tiles in 12 YMM accumulators,
// AVX2+FMA) and "generic" (portable Go, also the only set on other
// architectures and with the noasm build tag). The environment variable
// AMT_KERNELS or Use chooses one by name; KernelSet names the one in use.
// The blocking, and so the order in which every element of C adds up its
// products, is the same for every set: the assembly sets give
// bit-identical results (tested), the portable one agrees within float32
// rounding (Go does not fuse multiply-adds on amd64).
//
// NewConv picks a strategy per layer shape (see Conv): pointwise GEMM for
// 1×1 convolutions, a "shifted" GEMM on the zero-padded, stride-phase-split
// input for other kernels (no im2col at all), Winograd F(2×2, 3×3) for 3×3
// layers with many channels, direct loops for depthwise-like groups, and an
// im2col fused into the packing of B for the rest.
//
// Conv.ForwardAdd adds a residual (ResNet's skip connection) before the
// activation: the GEMM strategies accumulate into an output pre-set to the
// residual (the shifted strategy into its padded-width output), Winograd
// and direct add it in their output loops, so that Conv → Add → Relu needs
// no pass over the output of its own.
//
// The build tag refkernels swaps every kernel for the package's first,
// naive implementation (naive.go: explicit im2col and a row-by-row
// parallel GEMM), the baseline of before/after measurements on whole
// workloads (go build -tags refkernels ./cmd/amt).
//
// Benchmarks (GFLOP/s for the real layer shapes of the shipped models,
// against the first, naive implementation):
//
//	go test ./nn/kernels -run '^$' -bench 'ConvModel|Kernel' -count 5
package kernels

import "fmt"

// Gemm computes C = alpha·op(A)·op(B) + beta·C where op(X) is X or Xᵀ.
// op(A) is m×k, op(B) is k×n and C is m×n; lda, ldb and ldc are the row
// strides of A, B and C as stored. When beta is 0, C is overwritten (its
// old contents, even NaN, are ignored). Gemm panics when a slice is too
// short for its dimensions and stride.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernels: Gemm: negative size m=%d n=%d k=%d", m, n, k))
	}
	if m == 0 || n == 0 {
		return
	}
	checkMatrix("A", a, lda, transA, m, k)
	checkMatrix("B", b, ldb, transB, k, n)
	checkMatrix("C", c, ldc, false, m, n)
	flops.Add(2 * uint64(m) * uint64(n) * uint64(k))
	if k == 0 || alpha == 0 {
		scaleC(c, ldc, m, n, beta)
		return
	}
	if refKernels {
		naiveGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	g := gemmOp{ks: activeSet(), m: m, n: n, k: k, b: &matrixB{b: b, ldb: ldb, trans: transB}, c: c, ldc: ldc}
	switch beta {
	case 0:
	case 1:
		g.acc = true
	default:
		scaleC(c, ldc, m, n, beta)
		g.acc = true
	}
	buf := scratch.get(packedASize(m, k))
	g.ap, g.kc = *buf, depthBlock(m)
	packA(g.ap, a, lda, transA, m, k, g.kc, alpha)
	enter()
	g.run()
	leave()
	scratch.put(buf)
}

// checkMatrix panics unless x holds a rows×cols matrix (cols×rows when
// trans) with row stride ld.
func checkMatrix(name string, x []float32, ld int, trans bool, rows, cols int) {
	if trans {
		rows, cols = cols, rows
	}
	if rows == 0 || cols == 0 {
		return
	}
	if ld < cols {
		panic(fmt.Sprintf("kernels: Gemm: leading dimension of %s is %d, want at least %d", name, ld, cols))
	}
	if need := (rows-1)*ld + cols; len(x) < need {
		panic(fmt.Sprintf("kernels: Gemm: %s has %d values, a %d×%d matrix with stride %d needs %d", name, len(x), rows, cols, ld, need))
	}
}

// scaleC sets C = beta·C (C = 0 when beta is 0, whatever C held).
func scaleC(c []float32, ldc, m, n int, beta float32) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// scratch recycles the float32 scratch slices of Gemm (packed A) and
// MaxPool (row buffers) across calls.
var scratch floatList

// ActKind names an activation fused into a kernel's epilogue.
type ActKind int

const (
	ActNone      ActKind = iota
	ActRelu              // max(x, 0)
	ActLeakyRelu         // x if x ≥ 0 else Alpha·x
	ActClip              // min(max(x, Min), Max) (so Max when Min > Max, as ONNX Clip)
)

// Activation is an element-wise activation applied after bias addition.
type Activation struct {
	Kind     ActKind
	Alpha    float32 // LeakyRelu slope
	Min, Max float32 // Clip bounds
}

// Apply applies the activation to x in place.
func (a Activation) Apply(x []float32) {
	switch a.Kind {
	case ActRelu:
		for i, v := range x {
			if v < 0 {
				x[i] = 0
			}
		}
	case ActLeakyRelu:
		for i, v := range x {
			if v < 0 {
				x[i] = a.Alpha * v
			}
		}
	case ActClip:
		for i, v := range x {
			if v < a.Min {
				v = a.Min
			}
			if v > a.Max {
				v = a.Max
			}
			x[i] = v
		}
	}
}

// ConvShape describes a 2-D convolution over NCHW tensors (ONNX Conv).
type ConvShape struct {
	InC, InH, InW                        int // input channels and spatial size
	OutC                                 int // output channels (feature maps)
	KH, KW                               int // kernel size
	StrideH, StrideW                     int
	PadTop, PadLeft, PadBottom, PadRight int
	DilH, DilW                           int
	Groups                               int
}

// OutH returns the output height.
func (s ConvShape) OutH() int {
	return (s.InH+s.PadTop+s.PadBottom-(s.DilH*(s.KH-1)+1))/s.StrideH + 1
}

// OutW returns the output width.
func (s ConvShape) OutW() int {
	return (s.InW+s.PadLeft+s.PadRight-(s.DilW*(s.KW-1)+1))/s.StrideW + 1
}

// Validate checks that the shape is well formed.
func (s ConvShape) Validate() error {
	switch {
	case s.InC <= 0 || s.InH <= 0 || s.InW <= 0 || s.OutC <= 0 || s.KH <= 0 || s.KW <= 0:
		return fmt.Errorf("kernels: conv shape %+v: sizes must be positive", s)
	case s.StrideH <= 0 || s.StrideW <= 0 || s.DilH <= 0 || s.DilW <= 0 || s.Groups <= 0:
		return fmt.Errorf("kernels: conv shape %+v: strides, dilations and groups must be positive", s)
	case s.PadTop < 0 || s.PadLeft < 0 || s.PadBottom < 0 || s.PadRight < 0:
		return fmt.Errorf("kernels: conv shape %+v: pads must be non-negative", s)
	case s.InC%s.Groups != 0 || s.OutC%s.Groups != 0:
		return fmt.Errorf("kernels: conv shape %+v: channels not divisible by %d groups", s, s.Groups)
	case s.InH+s.PadTop+s.PadBottom < s.DilH*(s.KH-1)+1 || s.InW+s.PadLeft+s.PadRight < s.DilW*(s.KW-1)+1:
		return fmt.Errorf("kernels: conv shape %+v: the (dilated) kernel is larger than the padded input", s)
	case s.OutH() <= 0 || s.OutW() <= 0:
		return fmt.Errorf("kernels: conv shape %+v: empty output", s)
	}
	return nil
}

// ParallelFor runs f over [0, n) split into at most w contiguous, non-empty
// chunks of equal size (the last may be shorter), the first on the calling
// goroutine, and returns when all are done.
func ParallelFor(n, w int, f func(i0, i1 int)) {
	w = min(w, n)
	if w <= 1 {
		f(0, n)
		return
	}
	chunk := (n + w - 1) / w
	w = (n + chunk - 1) / chunk
	done := make(chan struct{}, w-1)
	for t := 1; t < w; t++ {
		i0, i1 := t*chunk, min((t+1)*chunk, n)
		go func() {
			f(i0, i1)
			done <- struct{}{}
		}()
	}
	f(0, chunk)
	for t := 1; t < w; t++ {
		<-done
	}
}
