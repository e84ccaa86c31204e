//go:build !amd64 || noasm

package mr

import "github.com/amt-dev/amt/rgb"

// simdKernel names the warp kernel in use (for benchmarks and reports).
const simdKernel = "go"

// warpSIMD reports false: this build has no SIMD warp kernel.
func warpSIMD(dst, src rgb.Image, m mat3) bool { return false }
