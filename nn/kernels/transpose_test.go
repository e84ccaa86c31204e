package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTranspose compares Transpose with the definition on shapes around
// the 8×8 blocks (edges in both directions), on ConvNeXt's and ViT's
// shapes, and on shapes large enough to be split over goroutines, with
// one value past the end of dst that must stay untouched.
func TestTranspose(t *testing.T) {
	forEachSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 3))
		sizes := []int{1, 2, 7, 8, 9, 15, 16, 17, 24, 31}
		type shape struct{ rows, cols int }
		var shapes []shape
		for _, a := range sizes {
			for _, b := range sizes {
				shapes = append(shapes, shape{a, b})
			}
		}
		shapes = append(shapes, shape{24, 3136}, shape{3136, 24}, shape{96, 784}, shape{197, 96}, shape{255, 169}, shape{8, 4099})
		for _, s := range shapes {
			src := randSlice(r, s.rows*s.cols)
			dst := randSlice(r, s.rows*s.cols+1)
			want := slices.Clone(dst)
			for i := 0; i < s.rows; i++ {
				for j := 0; j < s.cols; j++ {
					want[j*s.rows+i] = src[i*s.cols+j]
				}
			}
			Transpose(dst, src, s.rows, s.cols)
			if !slices.Equal(dst, want) {
				t.Fatalf("%d×%d: transpose differs", s.rows, s.cols)
			}
		}
	})
}

// BenchmarkTranspose times Transpose on ConvNeXt's first-stage shapes
// (NCHW to NHWC and back) and a ViT token matrix.
func BenchmarkTranspose(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, s := range []struct{ rows, cols int }{{24, 3136}, {3136, 24}, {96, 784}, {197, 96}} {
		src, dst := randSlice(r, s.rows*s.cols), make([]float32, s.rows*s.cols)
		b.Run(fmt.Sprintf("%dx%d", s.rows, s.cols), func(b *testing.B) {
			b.SetBytes(int64(8 * len(src)))
			for i := 0; i < b.N; i++ {
				Transpose(dst, src, s.rows, s.cols)
			}
		})
	}
}
