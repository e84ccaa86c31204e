//go:build !amd64 || purego

package bandit

func gdPass1(G, x, x2, xin, xr []float32, g2 float32) float32 {
	return gdPass1Go(G, x, x2, xin, xr, g2)
}

func gdPass2(w, xr []float32, c float32) { gdPass2Go(w, xr, c) }
