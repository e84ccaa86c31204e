//go:build ignore

// gen_ptx compiles kernels/*.cu to kernels/*.ptx (go generate ./nn/cuda).
package main

import (
	"log"

	"github.com/amt-dev/amt/nn/cuda/internal/ptxgen"
)

func main() {
	if err := ptxgen.Generate("kernels"); err != nil {
		log.Fatal(err)
	}
}
