package nn

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTranspose compares transpose (merged axes, tiled 2-D paths) with the
// general loop on random shapes (with axes of size 1) and permutations,
// and checks the merging on the layouts of exported models.
func TestTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 18))
	for iter := 0; iter < 3000; iter++ {
		nd := 1 + r.IntN(5)
		shape := make([]int, nd)
		for k := range shape {
			shape[k] = []int{1, 2, 3, 5, 17, 20}[r.IntN(6)]
		}
		perm := r.Perm(nd)
		in := make([]int64, numel(shape))
		for k := range in {
			in[k] = int64(k)
		}
		want, got := make([]int64, len(in)), make([]int64, len(in))
		transposeGeneral(want, in, shape, perm)
		transpose(got, in, shape, perm)
		if !slices.Equal(got, want) {
			t.Fatalf("shape %v perm %v: got %v, want %v", shape, perm, got, want)
		}
	}
	for _, c := range []struct {
		shape, perm, ms, mp []int
	}{
		{[]int{1, 24, 56, 56}, []int{0, 2, 3, 1}, []int{24, 3136}, []int{1, 0}},            // NCHW → NHWC
		{[]int{1, 56, 56, 24}, []int{0, 3, 1, 2}, []int{3136, 24}, []int{1, 0}},            // and back
		{[]int{197, 4, 96}, []int{1, 0, 2}, []int{197, 4, 96}, []int{1, 0, 2}},             // [L,N,E] → [N,L,E]
		{[]int{2, 3, 4, 5}, []int{0, 1, 2, 3}, []int{120}, []int{0}},                       // identity
		{[]int{2, 3, 4, 5}, []int{3, 1, 0, 2}, []int{2, 3, 4, 5}, []int{3, 1, 0, 2}},       // general
		{[]int{4, 197, 3, 32}, []int{0, 2, 1, 3}, []int{4, 197, 3, 32}, []int{0, 2, 1, 3}}, // heads
	} {
		ms, mp := mergeAxes(c.shape, c.perm)
		if !slices.Equal(ms, c.ms) || !slices.Equal(mp, c.mp) {
			t.Errorf("mergeAxes(%v, %v) = %v, %v; want %v, %v", c.shape, c.perm, ms, mp, c.ms, c.mp)
		}
	}
}
