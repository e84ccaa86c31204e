//go:build ignore

// gen_amd64 writes the generated amd64 assembly of package kernels:
//
//	go generate ./nn/kernels   (or, here: go run gen_*amd64.go)
//
// The program is this file (main, output helpers) and one file per emitted
// family: gen_gemm_amd64.go, gen_winograd_amd64.go (with the transforms in
// gen_winoinput_amd64.go and gen_winooutput_amd64.go), gen_pool_amd64.go
// and gen_gemv_amd64.go.
//
// gemm_avx512_amd64.s: the AVX-512 GEMM micro-kernels, one per tile shape
// R×16V, R ∈ {4, 8} rows and V ∈ {1, 2, 3} vectors of 16 columns, with the
// semantics of kernelGo: a depth loop of rank-1 updates (the accumulator
// of every element sees the products in depth order, one FMA each, exactly
// as the AVX2 kernel: the two give bit-identical results), then the
// epilogue (accumulate C, bias, activation) and a store of the first rows
// rows, the last vector masked by K1.
//
// winograd_amd64.s: the Winograd F(2×2, 3×3) input and output transforms
// of one row of tiles, for AVX-512 (16 tiles per step) and AVX2 (8), with
// the semantics of winoInputGo and winoOutputGo (the same additions in the
// same order: bit-identical results).
//
// gemv_amd64.s: sgemvFMA, a GEMM of one column of B (a matrix–vector
// product) over packed A panels, for the narrow column panels left over at
// the right of a GEMM, with the semantics of the micro-kernels (each
// element the same chain of FMAs in depth order, the same epilogue
// instructions): bit-identical to computing the column in a tile.
//
// The code is generated because the variants differ only in register
// counts and vector widths.
package main

import (
	"bytes"
	"fmt"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

func main() {
	gemmFile()
	write("gemm_avx512_amd64.s")
	winogradFile()
	write("winograd_amd64.s")
	poolFile()
	write("pool_amd64.s")
	gemvFile()
	write("gemv_amd64.s")
}

func write(name string) {
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out.Reset()
}
