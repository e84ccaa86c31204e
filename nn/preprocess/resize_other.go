//go:build !amd64 || noasm

package preprocess

// hasAVX2 is false: this build has no SIMD resampling loops.
const hasAVX2 = false

// vsumSIMD does nothing in this build (no SIMD loops): vsumGo does all.
func vsumSIMD(out, src []uint8, offs []int, k []int32) int { return 0 }

// hsumSIMD does nothing in this build (no SIMD loops): hsumGo does all.
func hsumSIMD(out, in []uint8, c *coeffs, safe int) int { return 0 }
