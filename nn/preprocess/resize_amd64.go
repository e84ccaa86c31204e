//go:build amd64 && !noasm

package preprocess

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether the AVX2 resampling loops can run on this CPU.
var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func vsumAVX2(dst *uint8, n int, src *uint8, offs *int, k *int32, taps int)

//go:noescape
func hsumAVX2(dst *uint8, outs int, src *uint8, start *int, n *int, k *int32, ksize int)

// vsumSIMD computes the leading multiple of 32 bytes of vsum (see vsumGo)
// with AVX2 and returns how many it did.
func vsumSIMD(out, src []uint8, offs []int, k []int32) int {
	n := len(out) &^ 31
	if !hasAVX2 || n == 0 || len(k) == 0 {
		return 0
	}
	for _, o := range offs[:len(k)] {
		_ = src[o+n-1] // every row's bytes inside src
	}
	vsumAVX2(&out[0], n, &src[0], &offs[0], &k[0], len(k))
	return n
}

// hsumSIMD computes outputs [0, safe) of a row of hsum (see hsumGo) with
// AVX2 and returns how many it did. safe (c.simdPrefix) must leave the
// last pixel of the row to the caller, and each of those outputs must read
// pixels before the last input pixel only (the loop reads and writes 4
// bytes per pixel).
func hsumSIMD(out, in []uint8, c *coeffs, safe int) int {
	if !hasAVX2 || safe == 0 {
		return 0
	}
	_ = out[3*safe]                         // the 4th byte of the last pixel written
	_ = in[3*(c.start[safe-1]+c.n[safe-1])] // the 4th byte of the last pixel read
	_ = c.k[(safe-1)*c.ksize+c.n[safe-1]-1]
	hsumAVX2(&out[0], safe, &in[0], &c.start[0], &c.n[0], &c.k[0], c.ksize)
	return safe
}
