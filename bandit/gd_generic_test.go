//go:build !amd64 || purego

package bandit

// gdLanes lists this platform's implementations of gdPass1Lanes.
func gdLanes() map[string]func(G, x, x2, xin, xr []float32, g2 float32) float32 {
	return map[string]func(G, x, x2, xin, xr []float32, g2 float32) float32{"go": gdPass1LanesGo}
}
