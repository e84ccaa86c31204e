//go:build !amd64 || purego

package bandit

// gdPass1Lanes is gdPass1LanesGo: this build has no assembly for it.
func gdPass1Lanes(G, x, x2, xin, xr []float32, g2 float32) float32 {
	return gdPass1LanesGo(G, x, x2, xin, xr, g2)
}

// gdPass2Lanes is gdPass2Go on len(w)/4·4 elements, as on amd64.
func gdPass2Lanes(w, xr []float32, c float32) { gdPass2Go(w, xr, c) }
