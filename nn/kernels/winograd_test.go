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
	for k := 1; k <= 50; k++ {
		// Rows of 1 to 40 tiles, then of 4 and 8 (a whole number of
		// AVX-512's steps of 16/n tile rows, and more) by 4 to 8 rows.
		n, tileRows := k, 1+k%3
		if k > 40 {
			n, tileRows = 4+4*(k%2), 4+(k-41)/2
		}
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

// TestWinogradBlocks checks that a Winograd convolution computed in 1 to 5
// blocks of tile rows (of unequal sizes when they do not divide the tile
// rows) and 1 to 3 groups of output channels, each
// padding its own input rows, is bit for bit the one-block result, with
// every combination of top and left padding (0 to 2) and odd and even
// sizes, also when the buffers were last used for another input.
func TestWinogradBlocks(t *testing.T) {
	forEachSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(45, 46))
		for _, size := range [][2]int{{7, 9}, {10, 6}, {5, 5}, {12, 13}} {
			for pad := range 9 {
				pt, pl := pad/3, pad%3
				s := ConvShape{InC: 8, InH: size[0], InW: size[1], OutC: 21, KH: 3, KW: 3, StrideH: 1, StrideW: 1,
					PadTop: pt, PadLeft: pl, PadBottom: 2 - pt, PadRight: (pl + 1) % 3, DilH: 1, DilW: 1, Groups: 1}
				conv, _, _, src := newRandConv(t, r, convCase{s: s, bias: true, act: Activation{Kind: ActRelu}, n: 1}, stratWinograd)
				other := randSlice(r, len(src))
				osz := s.OutC * s.OutH() * s.OutW()
				res := randSlice(r, osz)
				tilesH := conv.wino.tilesH
				want := make([]float32, osz)
				one := newWinoPlan(tilesH, 1, 1)
				conv.winoBlocks(new(workspace), make([]float32, conv.winoPadLen(tilesH)+32), want, res, src, one, 0, 1, 0, s.OutC, nil)
				for blocks := 1; blocks <= min(5, tilesH); blocks++ {
					for groups := 1; groups <= 3; groups++ {
						p := newWinoPlan(tilesH, blocks, groups)
						sc, padBuf := new(workspace), make([]float32, groups*blocks*conv.winoPadLen(p.rows)+32)
						got := make([]float32, osz)
						for _, in := range [][]float32{other, src} {
							for g := range groups {
								o0, o1 := conv.groupChannels(p, g)
								conv.winoBlocks(sc, padBuf[g*blocks*conv.winoPadLen(p.rows):], got, res, in, p, 0, blocks, o0, o1, nil)
							}
						}
						if !slices.Equal(got, want) {
							t.Fatalf("%+v: %+v differs from one block", s, p)
						}
					}
				}
			}
		}
	})
}
