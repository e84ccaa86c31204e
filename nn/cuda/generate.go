package cuda

// The PTX of the kernels is generated with clang 14 (Debian's clang-14; no
// CUDA toolkit) and committed; TestPTXUpToDate checks it matches the
// sources.
//
//go:generate go run gen_ptx.go
