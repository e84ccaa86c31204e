package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDepthwise compares Depthwise, with every kernel set, with the naive
// convolution on the depthwise layers of ConvNeXt, MobileNet and
// EfficientNet and odd sizes, with a bias, an activation and a residual.
func TestDepthwise(t *testing.T) { forEachSet(t, testDepthwise) }

func testDepthwise(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct{ c, h, w, k, pad, sh, sw int }{
		{24, 56, 56, 7, 3, 1, 1}, {5, 7, 9, 7, 3, 1, 1}, {8, 14, 14, 3, 1, 1, 1}, {3, 5, 33, 5, 2, 1, 1}, {4, 3, 2, 3, 1, 1, 1},
		{2, 6, 70, 3, 0, 1, 1}, {2, 4, 4, 1, 0, 1, 1},
		{16, 112, 112, 3, 1, 2, 2}, {5, 9, 11, 5, 2, 2, 2}, {3, 8, 7, 3, 1, 2, 1}, {3, 7, 8, 3, 0, 1, 2}, {2, 5, 66, 5, 2, 2, 2}, {2, 4, 5, 1, 0, 2, 2}, {2, 6, 6, 2, 0, 2, 2},
	} {
		s := ConvShape{InC: c.c, InH: c.h, InW: c.w, OutC: c.c, KH: c.k, KW: c.k, StrideH: c.sh, StrideW: c.sw, DilH: 1, DilW: 1,
			PadTop: c.pad, PadLeft: c.pad, PadBottom: c.pad, PadRight: c.pad, Groups: c.c}
		if !DepthwiseFits(s) {
			t.Fatalf("%+v: does not fit", s)
		}
		rnd := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			return x
		}
		const n = 2
		w, b := rnd(c.c*c.k*c.k), rnd(c.c)
		src := rnd(n * c.c * c.h * c.w)
		osz := c.c * s.OutH() * s.OutW()
		res := rnd(n * osz)
		for _, act := range []Activation{{}, {Kind: ActRelu}, {Kind: ActClip, Min: 0, Max: 6}} {
			d, err := NewDepthwise(s, w, b, act)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float32, n*osz)
			naiveConv(s, w, b, Activation{}, want, src, n)
			wantRes := make([]float32, len(want))
			for i := range want {
				wantRes[i] = want[i] + res[i]
			}
			act.Apply(want)
			act.Apply(wantRes)
			got := make([]float32, n*osz)
			d.Forward(got, src, n)
			gotRes := make([]float32, n*osz)
			d.ForwardAdd(gotRes, src, res, n)
			inPlace := append([]float32(nil), res...)
			d.ForwardAdd(inPlace, src, inPlace, n) // res aliasing dst
			for i := range want {
				if inPlace[i] != gotRes[i] {
					t.Fatalf("%+v: residual in place: element %d is %g, want %g", c, i, inPlace[i], gotRes[i])
				}
				if math.Abs(float64(got[i]-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) ||
					math.Abs(float64(gotRes[i]-wantRes[i])) > 1e-5*(1+math.Abs(float64(wantRes[i]))) {
					t.Fatalf("%+v act %v: element %d: got %g (with residual %g), want %g (%g)", c, act.Kind, i, got[i], gotRes[i], want[i], wantRes[i])
				}
			}
		}
	}
	if _, err := NewDepthwise(ConvShape{InC: 2, InH: 4, InW: 4, OutC: 2, KH: 3, KW: 3, StrideH: 3, StrideW: 3, DilH: 1, DilW: 1, Groups: 2}, make([]float32, 18), nil, Activation{}); err == nil {
		t.Error("stride 3: no error")
	}
}
