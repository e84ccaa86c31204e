package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refMaxPool is the straightforward max pooling: every in-range tap of
// every window, NaN propagating.
func refMaxPool(src []float32, planes int, s PoolShape) []float32 {
	out := make([]float32, planes*s.OutH*s.OutW)
	for p := 0; p < planes; p++ {
		for y := 0; y < s.OutH; y++ {
			for x := 0; x < s.OutW; x++ {
				m, any := float32(math.Inf(-1)), false
				for ky := 0; ky < s.KH; ky++ {
					iy := y*s.StrideH - s.PadTop + ky*s.DilH
					if iy < 0 || iy >= s.InH {
						continue
					}
					for kx := 0; kx < s.KW; kx++ {
						ix := x*s.StrideW - s.PadLeft + kx*s.DilW
						if ix < 0 || ix >= s.InW {
							continue
						}
						v := src[(p*s.InH+iy)*s.InW+ix]
						if v != v || m != m {
							m = float32(math.NaN())
						} else if v > m {
							m = v
						}
						any = true
					}
				}
				if !any {
					panic("empty window")
				}
				out[(p*s.OutH+y)*s.OutW+x] = m
			}
		}
	}
	return out
}

// TestMaxPoolRandom compares MaxPool with the reference on random shapes
// with padding, ceil-mode output sizes, strides and dilations, and NaNs.
func TestMaxPoolRandom(t *testing.T) { forEachSet(t, testMaxPoolRandom) }

func testMaxPoolRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	tested := 0
	for it := 0; tested < 300 && it < 10000; it++ {
		s := PoolShape{
			InH: edgeSizes[r.IntN(len(edgeSizes))], InW: edgeSizes[r.IntN(len(edgeSizes))],
			KH: 1 + r.IntN(3), KW: 1 + r.IntN(3), StrideH: 1 + r.IntN(3), StrideW: 1 + r.IntN(3),
			PadTop: r.IntN(2), PadLeft: r.IntN(2), DilH: 1 + r.IntN(2), DilW: 1 + r.IntN(2),
		}
		ceil := r.IntN(2) == 1
		size := func(in, k, st, pad, dil int) int {
			span := in + 2*pad - (k-1)*dil - 1
			if span < 0 {
				return 0
			}
			if ceil {
				return (span+st-1)/st + 1
			}
			return span/st + 1
		}
		s.OutH, s.OutW = size(s.InH, s.KH, s.StrideH, s.PadTop, s.DilH), size(s.InW, s.KW, s.StrideW, s.PadLeft, s.DilW)
		if s.Validate() != nil {
			continue
		}
		tested++
		planes := 1 + r.IntN(3)
		src := randSlice(r, planes*s.InH*s.InW)
		if r.IntN(4) == 0 {
			src[r.IntN(len(src))] = float32(math.NaN())
		}
		want := refMaxPool(src, planes, s)
		got := make([]float32, len(want))
		MaxPool(got, src, planes, s)
		for i := range want {
			if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("%+v planes %d: element %d = %v, want %v", s, planes, i, got[i], want[i])
			}
		}
	}
	if tested < 300 {
		t.Fatalf("only %d valid shapes", tested)
	}
}

// TestMaxPoolModelShapes checks SqueezeNet's 3×3/2 ceil-mode pools and
// yolov3-tiny's 2×2 pools (including its 2×2/1 pool with one padded column).
func TestMaxPoolModelShapes(t *testing.T) { forEachSet(t, testMaxPoolModelShapes) }

func testMaxPoolModelShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, s := range []PoolShape{
		{InH: 111, InW: 111, OutH: 55, OutW: 55, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1},
		{InH: 55, InW: 55, OutH: 27, OutW: 27, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1},
		{InH: 416, InW: 416, OutH: 208, OutW: 208, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1},
		{InH: 13, InW: 13, OutH: 13, OutW: 13, KH: 2, KW: 2, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1},
	} {
		src := randSlice(r, 3*s.InH*s.InW)
		want := refMaxPool(src, 3, s)
		got := make([]float32, len(want))
		MaxPool(got, src, 3, s)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: element %d = %v, want %v", s, i, got[i], want[i])
			}
		}
	}
}

// TestMaxPoolErrors checks the panics of bad shapes and short slices.
func TestMaxPoolErrors(t *testing.T) {
	ok := PoolShape{InH: 4, InW: 4, OutH: 2, OutW: 2, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}
	padded := ok
	padded.OutW = 4 // the last windows lie in the padding
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"padding window", func() { MaxPool(make([]float32, 8), make([]float32, 16), 1, padded) }, "entirely in the padding"},
		{"zero stride", func() { s := ok; s.StrideH = 0; MaxPool(make([]float32, 4), make([]float32, 16), 1, s) }, "strides and dilations must be positive"},
		{"short src", func() { MaxPool(make([]float32, 8), make([]float32, 31), 2, ok) }, "2 planes need 32 input and 8 output values, have 31 and 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Errorf("panic %v, want one containing %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

// TestMaxPoolS2 compares each kernel set's one-pass stride-2 pooling with
// its specification on 1 to 40 outputs per row, 1 to 3 rows, with NaNs.
func TestMaxPoolS2(t *testing.T) {
	forEachSet(t, func(t *testing.T) {
		ks := activeSet()
		r := rand.New(rand.NewPCG(45, 46))
		for _, k := range []int{2, 3} {
			for n := 1; n <= 40; n++ {
				rows := 1 + n%3
				inW := 2*n + k - 2 + r.IntN(3)
				outW := n + r.IntN(3)
				src := randSlice(r, (2*(rows-1)+k)*inW)
				if n%5 == 0 {
					src[r.IntN(len(src))] = float32(math.NaN())
				}
				want := randSlice(r, rows*outW)
				got := slices.Clone(want)
				maxPoolS2Go(want, src, inW, outW, rows, n, k)
				maxPoolS2(ks, got, src, inW, outW, rows, n, k)
				for i := range got {
					if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
						t.Fatalf("k=%d n=%d rows=%d: value %d (row %d, column %d) = %v, want %v", k, n, rows, i, i/outW, i%outW, got[i], want[i])
					}
				}
			}
		}
	})
}
