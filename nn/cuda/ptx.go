//go:build gpu

package cuda

import "embed"

// ptxFS holds the kernels compiled to PTX (kernels/*.ptx, made from
// kernels/*.cu by go generate); the driver JIT-compiles them for the GPU
// at Open.
//
//go:embed kernels/*.ptx
var ptxFS embed.FS
