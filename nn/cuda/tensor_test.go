//go:build gpu

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/nn/internal/shapes"
)

// refTranspose is nn's transpose: output axis i is input axis perm[i].
func refTranspose(x []float32, shape, perm []int) []float32 {
	st := shapes.Strides(shape)
	os := make([]int, len(shape))
	for i, p := range perm {
		os[i] = shape[p]
	}
	out := make([]float32, len(x))
	idx := make([]int, len(os))
	for i := range out {
		rem := i
		for k := len(os) - 1; k >= 0; k-- {
			idx[k] = rem % os[k]
			rem /= os[k]
		}
		off := 0
		for k, p := range perm {
			off += idx[k] * st[p]
		}
		out[i] = x[off]
	}
	return out
}

func TestTranspose(t *testing.T) {
	cases := []struct{ shape, perm []int }{
		{[]int{3, 5}, []int{1, 0}},
		{[]int{2, 3, 4}, []int{0, 2, 1}},
		{[]int{2, 3, 4}, []int{2, 0, 1}},
		{[]int{1, 4, 1, 6}, []int{3, 1, 2, 0}},
		{[]int{2, 2, 3, 2, 2, 3}, []int{5, 3, 1, 0, 2, 4}},
		{[]int{2, 2, 2, 2, 2, 2, 2}, []int{0, 1, 2, 3, 4, 6, 5}}, // rank 7, collapsible
		{[]int{4}, []int{0}},
	}
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(5, 1))
		for _, c := range cases {
			n := 1
			for _, v := range c.shape {
				n *= v
			}
			x := randFloats(r, n)
			out := alloc(t, d, n)
			must(t, d.Transpose(out, upload(t, d, x), c.shape, c.perm))
			closeTo(t, fmt.Sprintf("Transpose %v by %v", c.shape, c.perm), download(t, d, out, n), refTranspose(x, c.shape, c.perm), 0)
		}
		b := alloc(t, d, 6)
		if err := d.Transpose(b, b, []int{2, 3}, []int{0, 0}); err == nil {
			t.Error("a non-permutation: no error")
		}
	})
}

// refGather is nn's gatherAxes.
func refGather(x []float32, shape []int, maps [][]int, fill float32) []float32 {
	st := shapes.Strides(shape)
	n := 1
	for _, m := range maps {
		n *= len(m)
	}
	out := make([]float32, n)
	idx := make([]int, len(maps))
	for i := range out {
		rem := i
		for k := len(maps) - 1; k >= 0; k-- {
			idx[k] = rem % len(maps[k])
			rem /= len(maps[k])
		}
		off, ok := 0, true
		for k, m := range maps {
			if m[idx[k]] < 0 {
				ok = false
			}
			off += m[idx[k]] * st[k]
		}
		out[i] = fill
		if ok {
			out[i] = x[off]
		}
	}
	return out
}

func TestGather(t *testing.T) {
	iota := func(a, b, step int) []int {
		var m []int
		for i := a; (step > 0 && i < b) || (step < 0 && i > b); i += step {
			m = append(m, i)
		}
		return m
	}
	cases := []struct {
		name  string
		shape []int
		maps  [][]int
		fill  float32
	}{
		{"slice", []int{2, 5, 6}, [][]int{{0, 1}, iota(1, 4, 1), iota(5, -1, -2)}, 0},
		{"pad", []int{1, 3, 4}, [][]int{{0}, {-1, 0, 1, 2, -1}, {-1, -1, 0, 1, 2, 3, -1}}, 0.25},
		{"nearest upsample ×2", []int{2, 3, 3}, [][]int{{0, 1}, {0, 0, 1, 1, 2, 2}, {0, 0, 1, 1, 2, 2}}, 0},
		{"expand", []int{1, 4}, [][]int{{0, 0, 0}, iota(0, 4, 1)}, 0},
		{"edge pad", []int{5}, [][]int{{0, 0, 0, 1, 2, 3, 4, 4}}, 0},
		{"empty", []int{3, 3}, [][]int{{}, {0, 1}}, 0},
	}
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(5, 2))
		for _, c := range cases {
			n := 1
			for _, v := range c.shape {
				n *= v
			}
			x := randFloats(r, n)
			g, err := d.NewGather(c.shape, c.maps, c.fill)
			must(t, err)
			want := refGather(x, c.shape, c.maps, c.fill)
			out := alloc(t, d, max(len(want), 1))
			must(t, g.Run(out, upload(t, d, x)))
			closeTo(t, c.name, download(t, d, out, len(want)), want, 0)
			must(t, g.Free())
		}
		if _, err := d.NewGather([]int{2, 3}, [][]int{{0}, {3}}, 0); err == nil {
			t.Error("a map entry beyond its axis: no error")
		}
		if _, err := d.NewGather([]int{2, 3}, [][]int{{0}}, 0); err == nil {
			t.Error("too few maps: no error")
		}
	})
}

func TestConcat(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(5, 3))
		for _, c := range []struct {
			shapes [][]int
			axis   int
		}{
			{[][]int{{2, 3, 4}, {2, 5, 4}}, 1},
			{[][]int{{2, 3}, {1, 3}, {4, 3}}, 0},
			{[][]int{{3, 2, 1}, {3, 2, 7}}, 2},
			{[][]int{{60, 64, 13, 13}, {60, 64, 13, 13}}, 1}, // SqueezeNet's fire module, batched
		} {
			var srcs []*Buffer
			var data [][]float32
			for _, s := range c.shapes {
				n := 1
				for _, v := range s {
					n *= v
				}
				x := randFloats(r, n)
				data = append(data, x)
				srcs = append(srcs, upload(t, d, x))
			}
			// Reference: nn's concat.
			outer := 1
			for _, v := range c.shapes[0][:c.axis] {
				outer *= v
			}
			var want []float32
			for i := 0; i < outer; i++ {
				for k := range c.shapes {
					blk := len(data[k]) / outer
					want = append(want, data[k][i*blk:(i+1)*blk]...)
				}
			}
			out := alloc(t, d, len(want))
			must(t, d.Concat(out, srcs, c.shapes, c.axis))
			closeTo(t, fmt.Sprintf("Concat %v axis %d", c.shapes, c.axis), download(t, d, out, len(want)), want, 0)
		}
		b := alloc(t, d, 12)
		if err := d.Concat(b, []*Buffer{b, b}, [][]int{{2, 3}, {3, 3}}, 1); err == nil {
			t.Error("mismatched shapes: no error")
		}
		if err := d.Copy2D(b, 0, 2, b, 0, 4, 2, 3); err == nil {
			t.Error("rows wider than their stride: no error")
		}
	})
}

func TestResizeLinear(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		r := rand.New(rand.NewPCG(5, 4))
		planes, ih, iw := 3, 5, 4
		taps := func(out, in int) []Tap {
			ts := make([]Tap, out)
			for i := range ts {
				i0 := r.IntN(in)
				i1 := min(i0+1, in-1)
				w1 := r.Float32()
				ts[i] = Tap{I0: i0, I1: i1, W0: 1 - w1, W1: w1}
			}
			return ts
		}
		ys, xs := taps(9, ih), taps(7, iw)
		x := randFloats(r, planes*ih*iw)
		want := make([]float32, planes*len(ys)*len(xs))
		for p := 0; p < planes; p++ {
			src := x[p*ih*iw:]
			for y, yt := range ys {
				r0, r1 := src[yt.I0*iw:], src[yt.I1*iw:]
				for xx, xt := range xs {
					want[(p*len(ys)+y)*len(xs)+xx] = xt.W0*yt.W0*r0[xt.I0] + xt.W1*yt.W0*r0[xt.I1] +
						xt.W0*yt.W1*r1[xt.I0] + xt.W1*yt.W1*r1[xt.I1]
				}
			}
		}
		rs, err := d.NewResizeLinear(planes, ih, iw, ys, xs)
		must(t, err)
		defer rs.Free()
		out := alloc(t, d, len(want))
		must(t, rs.Run(out, upload(t, d, x)))
		closeTo(t, "resize", download(t, d, out, len(want)), want, 1e-6)
		if _, err := d.NewResizeLinear(planes, ih, iw, []Tap{{I0: 0, I1: ih}}, xs); err == nil {
			t.Error("a tap outside the input: no error")
		}
	})
}
