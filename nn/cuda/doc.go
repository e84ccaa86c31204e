// Package cuda runs amt's tensor operations on an NVIDIA GPU through the
// CUDA driver API, without cgo: the driver library (libcuda.so.1, which
// every NVIDIA driver installs) is loaded at run time with
// github.com/ebitengine/purego, and the kernels are amt's own, written in
// CUDA C (kernels/*.cu), compiled to PTX by clang and embedded; the driver
// JIT-compiles the PTX for the GPU at hand when a Device is opened. No
// CUDA toolkit, cuBLAS or cuDNN is needed, to build or to run.
//
// Everything that touches the driver is behind the gpu build tag, so that
// the default build stays a static binary that loads nothing; without the
// tag, Open returns ErrNotBuilt. (The tag is not "cuda": Gorgonia's own
// files use that one, and with it pull in gorgonia.org/cu, which needs
// cgo.)
//
// # Operations
//
// A Device owns a context and one stream; Buffers are device memory of
// 32-bit values. The operations cover what the shipped models and the
// torchvision CNNs need, with the semantics of amt's CPU engine (package
// nn and nn/kernels): convolution with the fused bias, per-channel
// scale/shift, residual addition and Relu/LeakyRelu/Clip (Conv), GEMM
// with transposes, a broadcast C term and an activation (GemmEx), max and
// average pooling (ceil_mode and count_include_pad through the caller's
// shapes), reductions along an axis (global pooling), softmax, element-wise
// unary functions, per-channel affine maps, broadcasting binary
// operations, transposes, index-map gathers (Slice, Pad, Split, Expand,
// Gather, nearest Resize), concatenation and bilinear resize. All queue on
// the stream; Read waits for them and reports any kernel fault.
//
// # Kernels
//
// The kernels use only the subset of CUDA C that is also C (kernels/amt.h
// explains), so that the same sources compile for the GPU (clang-14
// -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_70;
// go generate runs it, TestPTXUpToDate checks the committed PTX) and, for
// the tests, for the host. Convolutions with more than 16 output channels
// per group and GEMMs are tiled 64×64×16 through shared memory, 4×4
// outputs per thread; the other kernels compute one output per thread.
// Transcendental functions are Cephes' single-precision algorithms written
// out (no libdevice), so they round the same way on every GPU.
//
// # Testing without a GPU
//
// The tests build a fake libcuda.so.1 (fakecuda/) with the system C
// compiler: it implements the driver calls amt makes on host memory and
// runs the same kernel sources compiled for the host, each block's threads
// as fibers so that __syncthreads and shared memory behave as on a GPU.
// It checks what a driver checks (contexts, launch limits, copy ranges,
// PTX entries against the host kernels) and injects failures: no device,
// out of memory, a faulting kernel. Tests that need a real GPU run where
// libcuda.so.1 opens and skip elsewhere; AMT_GPU=1 makes their absence a
// failure.
package cuda
