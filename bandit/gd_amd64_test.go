//go:build amd64 && !purego

package bandit

// gdLanes lists this platform's implementations of gdPass1Lanes that the
// host can run.
func gdLanes() map[string]func(G, x, x2, xin, xr []float32, g2 float32) float32 {
	m := map[string]func(G, x, x2, xin, xr []float32, g2 float32) float32{"sse": gdPass1LanesSSE}
	if hasAVX2 {
		m["avx2"] = gdPass1LanesAVX2
	}
	return m
}
