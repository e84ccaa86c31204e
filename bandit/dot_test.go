package bandit

import (
	"math"
	"math/rand/v2"
	"testing"
)

// mulRows is dot64 row by row, bit for bit, for every row count (the
// four-row blocks and the rest), offset and length.
func TestMulRowsMatchesDot64(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, tc := range []struct{ rows, stride, off, n int }{
		{0, 4, 0, 4}, {1, 7, 0, 7}, {3, 9, 2, 6}, {4, 5, 0, 5}, {5, 12, 1, 11},
		{8, 76, 0, 76}, {11, 200, 76, 75}, {13, 3, 3, 0},
	} {
		a := make([]float64, tc.rows*tc.stride+tc.off+tc.n)
		for i := range a {
			a[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4))
		}
		x := make([]float64, tc.n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		got := make([]float64, tc.rows)
		mulRows(got, a, tc.stride, tc.off, x)
		for i, g := range got {
			want := dot64(a[i*tc.stride+tc.off:][:tc.n], x)
			if math.Float64bits(g) != math.Float64bits(want) {
				t.Errorf("%+v: row %d: %v, dot64 %v", tc, i, g, want)
			}
		}
	}
}
