package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWinogradTransforms compares each kernel set's Winograd input and
// output transforms with their Go specification (winoInputGo,
// winoOutputGo) bit for bit, on 1 to 3 rows of 1 to 40 tiles, odd and even
// output heights and widths, with and without residual, every activation,
// and checks that nothing outside the outputs is written.
func TestWinogradTransforms(t *testing.T) {
	forEachSet(t, testWinogradTransforms)
}

func testWinogradTransforms(t *testing.T) {
	ks := activeSet()
	r := rand.New(rand.NewPCG(41, 42))
	for n := 1; n <= 40; n++ {
		tileRows := 1 + n%3
		hw := n + 1
		// Input: 2·tileRows+2 padded rows (even, odd halves) and slack.
		src := randSlice(r, (2*tileRows+2)*2*hw+64)
		vStride := tileRows*n + 32 + r.IntN(3)
		v0 := randSlice(r, 16*vStride)
		want, got := slices.Clone(v0), slices.Clone(v0)
		winoInputGo(want, vStride, src, hw, n, tileRows)
		winoInput(ks, got, vStride, src, hw, n, tileRows)
		for x := 0; x < 16; x++ {
			for i := 0; i < tileRows*n; i++ {
				if a, b := got[x*vStride+i], want[x*vStride+i]; math.Float32bits(a) != math.Float32bits(b) {
					t.Fatalf("%s input n=%d rows=%d: V[%d][%d] = %v, want %v", ks.name, n, tileRows, x, i, a, b)
				}
			}
		}

		for _, outRows := range []int{2 * tileRows, 2*tileRows - 1} {
			for _, cols := range []int{2 * n, 2*n - 1} {
				for a, act := range testActs {
					for _, withRes := range []bool{false, true} {
						name := fmt.Sprintf("%s output n=%d tileRows=%d outRows=%d cols=%d act=%+v res=%v", ks.name, n, tileRows, outRows, cols, act, withRes)
						mStride := tileRows*n + 32
						m := randSlice(r, 16*mStride)
						if a == 0 {
							m[r.IntN(n)] = float32(math.NaN())
						}
						dstStride := cols + 3
						d0 := randSlice(r, (outRows+1)*dstStride+5)
						var res []float32
						if withRes {
							res = randSlice(r, (outRows-1)*dstStride+cols)
						}
						flags, lo, hi, alpha := act.epilogue()
						ep := winoEpilogue{flags: flags, b0: r.Float32() - 0.5, lo: lo, hi: hi, alpha: alpha}
						want, got := slices.Clone(d0), slices.Clone(d0)
						winoOutputGo(want, dstStride, outRows, m, mStride, n, cols, &ep, res, tileRows)
						winoOutput(ks, got, dstStride, outRows, m, mStride, n, cols, &ep, res, tileRows)
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s: value %d (row %d, column %d) = %v, want %v", name, i, i/dstStride, i%dstStride, got[i], want[i])
							}
							if (i/dstStride >= outRows || i%dstStride >= cols) && math.Float32bits(want[i]) != math.Float32bits(d0[i]) {
								t.Fatalf("%s: the specification wrote outside the output at %d", name, i)
							}
						}
					}
				}
			}
		}
	}
}

// TestDeinterleave checks the even/odd split of every kernel set on 1 to
// 3 rows of 0 to 70 values (odd and even), and that it writes nothing
// else.
func TestDeinterleave(t *testing.T) {
	forEachSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(43, 44))
		for w := 0; w <= 70; w++ {
			rows := 1 + w%3
			srcStride, dstStride := w+r.IntN(3), (w+1)/2+r.IntN(3)
			src := randSlice(r, rows*srcStride+1)
			a, b := randSlice(r, rows*dstStride+3), randSlice(r, rows*dstStride+3)
			wa, wb := slices.Clone(a), slices.Clone(b)
			for y := 0; y < rows; y++ {
				for i := 0; i < w; i++ {
					h := wa
					if i%2 == 1 {
						h = wb
					}
					h[y*dstStride+i/2] = src[y*srcStride+i]
				}
			}
			deinterleave(activeSet(), a, b, src, w, rows, srcStride, dstStride)
			if !slices.Equal(a, wa) || !slices.Equal(b, wb) {
				t.Fatalf("w=%d rows=%d: got\n%v\n%v\nwant\n%v\n%v", w, rows, a, b, wa, wb)
			}
		}
	})
}
