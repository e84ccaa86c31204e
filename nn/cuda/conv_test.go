//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/nn/kernels"
)

// randFloats returns n values uniform in [-1, 1).
func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = 2*r.Float32() - 1
	}
	return x
}

// closeTo reports values differing by more than tol·max(1, |want|) (NaN
// matches NaN), the rule the model goldens use.
func closeTo(t testing.TB, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(w) && math.IsNaN(g) || g == w {
			continue
		}
		if math.Abs(g-w) <= tol*math.Max(1, math.Abs(w)) {
			continue
		}
		if bad < 5 {
			t.Errorf("%s: [%d] = %g, want %g", what, i, g, w)
		}
		bad++
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d values differ", what, bad, len(got))
	}
}

type convCase struct {
	name     string
	s        kernels.ConvShape
	n        int
	bias     bool
	scale    bool // per-channel scale and shift
	residual bool
	act      kernels.Activation
}

// shape fills a ConvShape's defaults (stride, dilation, groups 1).
func shape(inC, inH, inW, outC, kh, kw int, f func(*kernels.ConvShape)) kernels.ConvShape {
	s := kernels.ConvShape{InC: inC, InH: inH, InW: inW, OutC: outC, KH: kh, KW: kw,
		StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1}
	if f != nil {
		f(&s)
	}
	return s
}

func pad(t, l, b, r int) func(*kernels.ConvShape) {
	return func(s *kernels.ConvShape) { s.PadTop, s.PadLeft, s.PadBottom, s.PadRight = t, l, b, r }
}

var relu = kernels.Activation{Kind: kernels.ActRelu}

var convCases = []convCase{
	{name: "pointwise", s: shape(8, 10, 10, 70, 1, 1, nil), n: 2, bias: true, act: relu},
	{name: "3x3 pad 1", s: shape(16, 9, 11, 64, 3, 3, pad(1, 1, 1, 1)), n: 3, bias: true},
	{name: "stride 2 asymmetric pads", s: shape(3, 15, 13, 20, 3, 3, func(s *kernels.ConvShape) {
		s.StrideH, s.StrideW = 2, 2
		pad(1, 0, 2, 1)(s)
	}), n: 2, bias: true, act: kernels.Activation{Kind: kernels.ActLeakyRelu, Alpha: 0.1}},
	{name: "dilation 2", s: shape(5, 12, 12, 33, 3, 3, func(s *kernels.ConvShape) {
		s.DilH, s.DilW = 2, 2
		pad(2, 2, 2, 2)(s)
	}), n: 1, act: kernels.Activation{Kind: kernels.ActClip, Min: -0.5, Max: 0.7}},
	{name: "1x5 stride 1x2", s: shape(4, 7, 20, 17, 1, 5, func(s *kernels.ConvShape) {
		s.StrideW = 2
		pad(0, 2, 0, 2)(s)
	}), n: 2, bias: true},
	{name: "groups 3", s: shape(12, 8, 8, 24, 3, 3, func(s *kernels.ConvShape) {
		s.Groups = 3
		pad(1, 1, 1, 1)(s)
	}), n: 2, bias: true, act: relu},
	{name: "depthwise stride 2", s: shape(32, 14, 14, 32, 3, 3, func(s *kernels.ConvShape) {
		s.Groups, s.StrideH, s.StrideW = 32, 2, 2
		pad(1, 1, 1, 1)(s)
	}), n: 2, bias: true, act: kernels.Activation{Kind: kernels.ActClip, Min: 0, Max: 6}},
	{name: "groups 2 wide", s: shape(64, 6, 6, 160, 3, 3, func(s *kernels.ConvShape) {
		s.Groups = 2
		pad(1, 1, 1, 1)(s)
	}), n: 1, bias: true},
	{name: "5x5 long reduction", s: shape(37, 5, 5, 65, 5, 5, pad(2, 2, 2, 2)), n: 2},
	{name: "bias scale shift residual", s: shape(8, 8, 8, 16, 3, 3, pad(1, 1, 1, 1)), n: 3,
		bias: true, scale: true, residual: true, act: relu},
	{name: "residual without bias", s: shape(64, 4, 4, 64, 1, 1, nil), n: 2, residual: true,
		act: kernels.Activation{Kind: kernels.ActLeakyRelu, Alpha: 0.2}},
	{name: "one pixel", s: shape(3, 1, 1, 2, 1, 1, nil), n: 1, bias: true},
	{name: "batch of 7 SqueezeNet-like", s: shape(16, 13, 13, 64, 3, 3, pad(1, 1, 1, 1)), n: 7, bias: true, act: relu},
}

// refConv is the CPU engine's convolution (nn/kernels) followed by the
// scale and shift, the residual and the activation in float32.
func refConv(t testing.TB, c convCase, w, bias, scale, shift, res, x []float32) []float32 {
	t.Helper()
	kc, err := kernels.NewConv(c.s, w, bias, kernels.Activation{})
	must(t, err)
	ohw := c.s.OutH() * c.s.OutW()
	out := make([]float32, c.n*c.s.OutC*ohw)
	kc.Forward(out, x, c.n)
	for i := range out {
		oc := i / ohw % c.s.OutC
		if scale != nil {
			out[i] = out[i]*scale[oc] + shift[oc]
		}
		if res != nil {
			out[i] += res[i]
		}
		c.act.Apply(out[i : i+1])
	}
	return out
}

func TestConv(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(1, 17))
		for _, c := range convCases {
			s := c.s
			isz, osz := s.InC*s.InH*s.InW, s.OutC*s.OutH()*s.OutW()
			spec := ConvSpec{Shape: s, Weight: randFloats(r, s.OutC*s.InC/s.Groups*s.KH*s.KW), Act: c.act}
			if c.bias {
				spec.Bias = randFloats(r, s.OutC)
			}
			if c.scale {
				spec.Scale, spec.Shift = randFloats(r, s.OutC), randFloats(r, s.OutC)
			}
			x := randFloats(r, c.n*isz)
			var res []float32
			if c.residual {
				res = randFloats(r, c.n*osz)
			}
			want := refConv(t, c, spec.Weight, spec.Bias, spec.Scale, spec.Shift, res, x)
			conv, err := d.NewConv(spec)
			must(t, err)
			xb := upload(t, d, x)
			for _, direct := range []bool{false, true} {
				conv.direct = direct
				name := fmt.Sprintf("%s/%s", c.name, conv.Strategy())
				out := alloc(t, d, c.n*osz)
				if res != nil {
					must(t, d.Write(out, res))
					must(t, conv.ForwardAdd(out, xb, out, c.n)) // in place: res is dst
				} else {
					must(t, conv.Forward(out, xb, c.n))
				}
				closeTo(t, name, download(t, d, out, c.n*osz), want, 1e-4)
			}
			must(t, conv.Free())
		}
	})
}

// TestConvInto writes two convolutions into the channel slots of one
// output (a Concat along channels without a copy), as SqueezeNet's fire
// modules do.
func TestConvInto(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(1, 18))
		n := 3
		a := convCase{s: shape(6, 7, 7, 10, 1, 1, nil), n: n, bias: true, act: relu}
		b := convCase{s: shape(6, 7, 7, 12, 3, 3, pad(1, 1, 1, 1)), n: n, bias: true, act: relu}
		x := randFloats(r, n*6*7*7)
		xb := upload(t, d, x)
		ohw := 7 * 7
		stride := (10 + 12) * ohw
		out := alloc(t, d, n*stride)
		want := make([]float32, n*stride)
		off := 0
		for _, c := range []convCase{a, b} {
			w, bias := randFloats(r, c.s.OutC*c.s.InC*c.s.KH*c.s.KW), randFloats(r, c.s.OutC)
			ref := refConv(t, c, w, bias, nil, nil, nil, x)
			osz := c.s.OutC * ohw
			for i := 0; i < n; i++ {
				copy(want[i*stride+off:], ref[i*osz:(i+1)*osz])
			}
			conv, err := d.NewConv(ConvSpec{Shape: c.s, Weight: w, Bias: bias, Act: c.act})
			must(t, err)
			must(t, conv.ForwardInto(out, off, stride, xb, n))
			must(t, conv.Free())
			off += osz
		}
		closeTo(t, "concatenated outputs", download(t, d, out, n*stride), want, 1e-4)
	})
}

func TestConvErrors(t *testing.T) {
	d, _ := openFake(t, "")
	s := shape(4, 5, 5, 8, 3, 3, nil)
	w := make([]float32, 8*4*9)
	for _, c := range []struct {
		name string
		spec ConvSpec
	}{
		{"bad shape", ConvSpec{Shape: shape(4, 5, 5, 8, 7, 7, nil), Weight: make([]float32, 8*4*49)}},
		{"short weight", ConvSpec{Shape: s, Weight: w[1:]}},
		{"short bias", ConvSpec{Shape: s, Weight: w, Bias: make([]float32, 7)}},
		{"scale without shift", ConvSpec{Shape: s, Weight: w, Scale: make([]float32, 8)}},
		{"unknown activation", ConvSpec{Shape: s, Weight: w, Act: kernels.Activation{Kind: 9}}},
	} {
		if _, err := d.NewConv(c.spec); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	conv, err := d.NewConv(ConvSpec{Shape: s, Weight: w})
	must(t, err)
	defer conv.Free()
	small := alloc(t, d, 10)
	in := alloc(t, d, 2*4*25)
	out := alloc(t, d, 2*8*9)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"short input", conv.Forward(out, small, 1)},
		{"short output", conv.Forward(small, in, 1)},
		{"two images, one in", conv.Forward(out, in.Slice(0, 100), 2)},
		{"negative batch", conv.Forward(out, in, -1)},
		{"overlapping slots", conv.ForwardInto(out, 10, 72, in, 2)},
		{"nil residual", conv.ForwardAdd(out, in, nil, 1)},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
