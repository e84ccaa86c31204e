package bandit

// The two per-weight loops of gdState.update. gdPass1 and gdPass2 are
// assembly (SSE) on amd64 and gdPass1Go / gdPass2Go elsewhere (or with
// the purego build tag); the Go versions are always compiled so tests can
// compare them.

// gdPass1Go accumulates G[i] += g2·x2[i] (capped at 3e38), sets
// xr[i] = xin[i]/√G[i] and returns Σ x[i]·xr[i]. All slices have len(G)
// elements. The inverse square root is VW's fast approximation with one
// Newton step; G is floored at 1e-30 inside it (absent features have
// xin = 0 and contribute nothing).
func gdPass1Go(G, x, x2, xin, xr []float32, g2 float32) float32 {
	n := len(G)
	x, x2, xin, xr = x[:n], x2[:n], xin[:n], xr[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		g0 := min(G[i]+g2*x2[i], 3e38)
		g1 := min(G[i+1]+g2*x2[i+1], 3e38)
		g2_ := min(G[i+2]+g2*x2[i+2], 3e38)
		g3 := min(G[i+3]+g2*x2[i+3], 3e38)
		G[i], G[i+1], G[i+2], G[i+3] = g0, g1, g2_, g3
		v0 := xin[i] * rsqrt(max(g0, 1e-30))
		v1 := xin[i+1] * rsqrt(max(g1, 1e-30))
		v2 := xin[i+2] * rsqrt(max(g2_, 1e-30))
		v3 := xin[i+3] * rsqrt(max(g3, 1e-30))
		xr[i], xr[i+1], xr[i+2], xr[i+3] = v0, v1, v2, v3
		s0 += x[i] * v0
		s1 += x[i+1] * v1
		s2 += x[i+2] * v2
		s3 += x[i+3] * v3
	}
	for ; i < n; i++ {
		gi := min(G[i]+g2*x2[i], 3e38)
		G[i] = gi
		v := xin[i] * rsqrt(max(gi, 1e-30))
		xr[i] = v
		s0 += x[i] * v
	}
	return (s0 + s1) + (s2 + s3)
}

// gdPass2Go sets w[i] = clamp(w[i] + c·xr[i], −1e20, 1e20).
func gdPass2Go(w, xr []float32, c float32) {
	xr = xr[:len(w)]
	for i := range w {
		w[i] = min(max(w[i]+c*xr[i], -1e20), 1e20)
	}
}
