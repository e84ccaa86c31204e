package bandit

import "math"

// The two per-weight loops of gdState.update. Their arithmetic is defined
// here, in Go, operation by operation, and every platform computes exactly
// it: gdPass1Lanes and gdPass2Lanes are assembly on amd64 (SSE, and AVX2
// for gdPass1Lanes where the host has it) and the Go functions below
// elsewhere (or with the purego build tag); the Go versions are always
// compiled so that tests compare them bit for bit.
//
// The inverse square root of VW's per-weight rule is computed exactly, as a
// division by a correctly rounded square root. VW 8.x approximates it (with
// SSE's RSQRTSS, or the fast inverse square root without SSE), and so did
// amt (RSQRTPS plus a Newton step) until it was found that the instruction is
// not the same on every x86: its results are implementation-specific (Intel
// and AMD processors differ in the last bits), which can move a learning
// agent's choices, and so the committed results, with the host's vendor
// (a coarser approximation, the purego build's, moved two committed cover
// runs).
// IEEE square root and division give the same bits on every host. Products
// are converted explicitly before they are added, so that no compiler fuses
// them into multiply-adds (the Go specification allows fusion otherwise).

// gdPass1 accumulates G[i] += g2·x2[i] (capped at 3e38), sets
// xr[i] = xin[i]/√max(G[i], 1e-30) and returns Σ x[i]·xr[i]. All slices
// have len(G) elements. The sum is taken in four lanes over the first
// len(G)/4·4 elements (lane l adds the elements i ≡ l mod 4 in order,
// reduced as (l0+l2)+(l1+l3)), plus the rest in order. Absent features have
// xin = 0 and contribute nothing.
func gdPass1(G, x, x2, xin, xr []float32, g2 float32) float32 {
	return gdPass1With(gdPass1Lanes, G, x, x2, xin, xr, g2)
}

// gdPass1Go is gdPass1 computed in Go alone.
func gdPass1Go(G, x, x2, xin, xr []float32, g2 float32) float32 {
	return gdPass1With(gdPass1LanesGo, G, x, x2, xin, xr, g2)
}

// gdPass1With is gdPass1 with lanes computing its four-lane part.
func gdPass1With(lanes func(G, x, x2, xin, xr []float32, g2 float32) float32, G, x, x2, xin, xr []float32, g2 float32) float32 {
	n := len(G)
	x, x2, xin, xr = x[:n], x2[:n], xin[:n], xr[:n]
	m := n &^ 3
	s := lanes(G[:m], x[:m], x2[:m], xin[:m], xr[:m], g2)
	if m < n {
		s += gdPass1Tail(G[m:], x[m:], x2[m:], xin[m:], xr[m:], g2)
	}
	return s
}

// gdStep is gdPass1's arithmetic for element i; it returns x[i]·xr[i].
func gdStep(G, x, x2, xin, xr []float32, g2 float32, i int) float32 {
	g := min(G[i]+float32(g2*x2[i]), 3e38)
	G[i] = g
	v := xin[i] / float32(math.Sqrt(float64(max(g, 1e-30))))
	xr[i] = v
	return float32(x[i] * v)
}

// gdPass1LanesGo is gdPass1's four-lane part (len(G) a multiple of 4).
func gdPass1LanesGo(G, x, x2, xin, xr []float32, g2 float32) float32 {
	var s0, s1, s2, s3 float32
	for i := 0; i+4 <= len(G); i += 4 {
		s0 += gdStep(G, x, x2, xin, xr, g2, i)
		s1 += gdStep(G, x, x2, xin, xr, g2, i+1)
		s2 += gdStep(G, x, x2, xin, xr, g2, i+2)
		s3 += gdStep(G, x, x2, xin, xr, g2, i+3)
	}
	return (s0 + s2) + (s1 + s3)
}

// gdPass1Tail is gdPass1 on the last len(G)%4 elements, in order.
func gdPass1Tail(G, x, x2, xin, xr []float32, g2 float32) float32 {
	var s float32
	for i := range G {
		s += gdStep(G, x, x2, xin, xr, g2, i)
	}
	return s
}

// gdPass2 sets w[i] = clamp(w[i] + c·xr[i], −1e20, 1e20).
func gdPass2(w, xr []float32, c float32) {
	n := len(w)
	m := n &^ 3
	gdPass2Lanes(w[:m], xr[:m], c)
	gdPass2Go(w[m:], xr[m:n], c)
}

// gdPass2Go is gdPass2 computed in Go alone.
func gdPass2Go(w, xr []float32, c float32) {
	xr = xr[:len(w)]
	for i := range w {
		w[i] = min(max(w[i]+float32(c*xr[i]), -1e20), 1e20)
	}
}
