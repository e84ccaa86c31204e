//go:build amd64 && !purego

package bandit

// gdPass1SSE is gdPass1Go on the first len(G)/4·4 elements with SSE
// (RSQRTPS plus one Newton step, as VW's SSE path); it returns their sum.
//
//go:noescape
func gdPass1SSE(G, x, x2, xin, xr []float32, g2 float32) float32

// gdPass2SSE is gdPass2Go on the first len(w)/4·4 elements with SSE.
//
//go:noescape
func gdPass2SSE(w, xr []float32, c float32)

func gdPass1(G, x, x2, xin, xr []float32, g2 float32) float32 {
	n := len(G)
	m := n &^ 3
	s := gdPass1SSE(G[:m], x[:m], x2[:m], xin[:m], xr[:m], g2)
	if m < n {
		s += gdPass1Go(G[m:n], x[m:n], x2[m:n], xin[m:n], xr[m:n], g2)
	}
	return s
}

func gdPass2(w, xr []float32, c float32) {
	n := len(w)
	m := n &^ 3
	gdPass2SSE(w[:m], xr[:m], c)
	if m < n {
		gdPass2Go(w[m:n], xr[m:n], c)
	}
}
