//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/nn/kernels"
)

type poolCase struct {
	k, stride, dil int
	pads           [4]int // top, left, bottom, right
	ceil           bool
	include        bool // count_include_pad (average)
}

// poolShape computes the output size as nn's pooling does (ceil_mode
// included) and returns the kernels.PoolShape.
func (c poolCase) shape(h, w int) kernels.PoolShape {
	out := func(in, pb, pe int) int {
		span := in + pb + pe - ((c.k-1)*c.dil + 1)
		o := span/c.stride + 1
		if c.ceil {
			o = (span+c.stride-1)/c.stride + 1
			if (o-1)*c.stride >= in+pb {
				o--
			}
		}
		return o
	}
	return kernels.PoolShape{InH: h, InW: w, OutH: out(h, c.pads[0], c.pads[2]), OutW: out(w, c.pads[1], c.pads[3]),
		KH: c.k, KW: c.k, StrideH: c.stride, StrideW: c.stride, PadTop: c.pads[0], PadLeft: c.pads[1],
		DilH: c.dil, DilW: c.dil}
}

var poolCases = []poolCase{
	{k: 3, stride: 2, dil: 1, ceil: true},               // SqueezeNet
	{k: 2, stride: 2, dil: 1},                           // yolov3-tiny
	{k: 2, stride: 1, dil: 1, pads: [4]int{0, 0, 1, 1}}, // yolov3-tiny's last, padded
	{k: 3, stride: 1, dil: 1, pads: [4]int{1, 1, 1, 1}}, // torchvision
	{k: 3, stride: 2, dil: 1, pads: [4]int{1, 1, 1, 1}, ceil: true, include: true},
	{k: 3, stride: 3, dil: 1, pads: [4]int{2, 0, 1, 2}, include: true},
	{k: 3, stride: 2, dil: 2, pads: [4]int{2, 2, 2, 2}}, // max only
	{k: 1, stride: 1, dil: 1},
}

// refAvgPool is nn's AveragePool loop.
func refAvgPool(src []float32, planes int, s kernels.PoolShape, pb, pr int, include bool) []float32 {
	ih, iw, oh, ow := s.InH, s.InW, s.OutH, s.OutW
	out := make([]float32, planes*oh*ow)
	for p := 0; p < planes; p++ {
		in := src[p*ih*iw:]
		for y := 0; y < oh; y++ {
			y0 := y*s.StrideH - s.PadTop
			for x := 0; x < ow; x++ {
				x0 := x*s.StrideW - s.PadLeft
				ye, xe := min(y0+s.KH, ih+pb), min(x0+s.KW, iw+pr)
				area := (ye - y0) * (xe - x0)
				ys, xs := max(y0, 0), max(x0, 0)
				ye, xe = min(ye, ih), min(xe, iw)
				var sum float32
				for iy := ys; iy < ye; iy++ {
					for _, v := range in[iy*iw+xs : iy*iw+xe] {
						sum += v
					}
				}
				if !include {
					area = (ye - ys) * (xe - xs)
				}
				out[p*oh*ow+y*ow+x] = sum / float32(area)
			}
		}
	}
	return out
}

func TestPool(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(3, 1))
		for _, c := range poolCases {
			for _, hw := range [][2]int{{13, 13}, {8, 11}, {1, 5}} {
				s := c.shape(hw[0], hw[1])
				if s.Validate() != nil {
					continue
				}
				planes := 5
				x := randFloats(r, planes*s.InH*s.InW)
				x[len(x)/2] = float32(math.NaN()) // a NaN wins its windows
				name := fmt.Sprintf("%+v %dx%d", c, hw[0], hw[1])
				xb := upload(t, d, x)
				out := alloc(t, d, planes*s.OutH*s.OutW)

				want := make([]float32, planes*s.OutH*s.OutW)
				kernels.MaxPool(want, x, planes, s)
				must(t, d.MaxPool(out, xb, planes, s))
				closeTo(t, "MaxPool "+name, download(t, d, out, len(want)), want, 0)

				if c.dil != 1 {
					continue
				}
				x[len(x)/2] = 0.5
				must(t, d.Write(xb, x))
				want = refAvgPool(x, planes, s, c.pads[2], c.pads[3], c.include)
				must(t, d.AvgPool(out, xb, planes, s, c.pads[2], c.pads[3], c.include))
				closeTo(t, "AvgPool "+name, download(t, d, out, len(want)), want, 1e-6)
			}
		}
	})
}

func TestReduceSoftmax(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(3, 2))
		for _, sz := range [][3]int{{1, 1, 1}, {7, 13, 1}, {3, 10, 17}, {60, 1000, 1}, {2, 169, 1}} {
			outer, n, inner := sz[0], sz[1], sz[2]
			x := randFloats(r, outer*n*inner)
			for i := range x {
				x[i] *= 10
			}
			if len(x) > 10 {
				x[3] = float32(math.NaN())
			}
			xb := upload(t, d, x)
			out := alloc(t, d, outer*inner)
			for _, op := range []ReduceOp{ReduceSum, ReduceMean, ReduceMax} {
				want := make([]float32, outer*inner)
				for o := 0; o < outer; o++ {
					for i := 0; i < inner; i++ {
						var s float32
						m := float32(math.Inf(-1))
						for k := 0; k < n; k++ {
							v := x[(o*n+k)*inner+i]
							s += v
							m = max(m, v)
						}
						switch op {
						case ReduceSum:
							want[o*inner+i] = s
						case ReduceMean:
							want[o*inner+i] = s / float32(n)
						case ReduceMax:
							want[o*inner+i] = m
						}
					}
				}
				must(t, d.Reduce(op, out, xb, outer, n, inner))
				closeTo(t, fmt.Sprintf("Reduce %d %v", op, sz), download(t, d, out, len(want)), want, 0)
			}

			// Softmax, against nn's (float64 exponentials and sum).
			want := make([]float32, len(x))
			for o := 0; o < outer; o++ {
				for i := 0; i < inner; i++ {
					base := o*n*inner + i
					m := float32(math.Inf(-1))
					for k := 0; k < n; k++ {
						m = max(m, x[base+k*inner])
					}
					var s float64
					for k := 0; k < n; k++ {
						e := math.Exp(float64(x[base+k*inner] - m))
						want[base+k*inner] = float32(e)
						s += e
					}
					for k := 0; k < n; k++ {
						want[base+k*inner] = float32(float64(want[base+k*inner]) / s)
					}
				}
			}
			sm := alloc(t, d, len(x))
			must(t, d.Softmax(sm, xb, outer, n, inner))
			closeTo(t, fmt.Sprintf("Softmax %v", sz), download(t, d, sm, len(x)), want, 1e-6)
			must(t, d.Softmax(xb, xb, outer, n, inner)) // in place
			closeTo(t, fmt.Sprintf("Softmax in place %v", sz), download(t, d, xb, len(x)), want, 1e-6)
		}
	})
}

func TestPoolErrors(t *testing.T) {
	d, _ := openFake(t, "")
	b := alloc(t, d, 100)
	s := kernels.PoolShape{InH: 5, InW: 5, OutH: 2, OutW: 2, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}
	bad := s
	bad.PadTop = 9 // windows entirely in the padding
	dil := s
	dil.DilH = 2
	for _, c := range []struct {
		name string
		err  error
	}{
		{"invalid shape", d.MaxPool(b, b, 1, bad)},
		{"short input", d.MaxPool(b, b, 5, s)},
		{"negative planes", d.MaxPool(b, b, -1, s)},
		{"dilated average", d.AvgPool(b, b, 1, dil, 0, 0, false)},
		{"negative pads", d.AvgPool(b, b, 1, s, -1, 0, false)},
		{"unknown reduction", d.Reduce(9, b, b, 1, 1, 1)},
		{"empty reduction", d.Reduce(ReduceSum, b, b, 1, 0, 1)},
		{"short softmax", d.Softmax(b, b, 10, 11, 1)},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
