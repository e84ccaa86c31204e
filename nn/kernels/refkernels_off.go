//go:build !refkernels

package kernels

// refKernels is true in builds with the refkernels tag: Gemm, NewConv's
// convolutions and MaxPool then run the package's first, naive
// implementation (naive.go) instead of the optimised kernels. It exists to
// measure the speed-up of the optimised kernels on whole workloads; results
// agree within float32 rounding.
const refKernels = false
