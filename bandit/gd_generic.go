//go:build !amd64 || purego

package bandit

func gdPass1Lanes(G, x, x2, xin, xr []float32, g2 float32) float32 {
	return gdPass1LanesGo(G, x, x2, xin, xr, g2)
}

func gdPass2Lanes(w, xr []float32, c float32) { gdPass2Go(w, xr, c) }
