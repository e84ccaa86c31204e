//go:build amd64 && !purego

package bandit

import "golang.org/x/sys/cpu"

// gdPass1Lanes is gdPass1LanesGo (len(G) a multiple of 4) in AVX2 where the
// host has it, else in SSE.
func gdPass1Lanes(G, x, x2, xin, xr []float32, g2 float32) float32 {
	if hasAVX2 {
		return gdPass1LanesAVX2(G, x, x2, xin, xr, g2)
	}
	return gdPass1LanesSSE(G, x, x2, xin, xr, g2)
}

var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func gdPass1LanesSSE(G, x, x2, xin, xr []float32, g2 float32) float32

//go:noescape
func gdPass1LanesAVX2(G, x, x2, xin, xr []float32, g2 float32) float32

// gdPass2Lanes is gdPass2Go in SSE (len(w) a multiple of 4).
//
//go:noescape
func gdPass2Lanes(w, xr []float32, c float32)
