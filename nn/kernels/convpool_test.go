package kernels

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestConvMaxPool checks that the banded convolution and pooling (and the
// Winograd one pooled block by block) gives exactly (bit for bit) what
// Conv.Forward followed by MaxPool gives, for random shapes, every band
// size (bands of one pooled row up to the whole image, so that the rows
// kept between bands are exercised), batches of several images, odd
// output heights, and real layers of SqueezeNet and yolov3-tiny.
func TestConvMaxPool(t *testing.T) { forEachSet(t, testConvMaxPool) }

func testConvMaxPool(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	type tcase struct {
		name string
		s    ConvShape
		p    PoolShape
	}
	var cases []tcase
	for len(cases) < 60 {
		k := 1 + 2*r.IntN(2)
		st := 1 + r.IntN(2)
		s := ConvShape{InC: 1 + r.IntN(6), InH: 5 + r.IntN(20), InW: 5 + r.IntN(20), OutC: 1 + r.IntN(20), KH: k, KW: k,
			StrideH: st, StrideW: st, DilH: 1, DilW: 1, Groups: 1}
		if k == 3 && r.IntN(2) == 0 {
			s.PadTop, s.PadLeft, s.PadBottom, s.PadRight = 1, 1, 1, 1
		}
		pk := 2 + r.IntN(2)
		p := PoolShape{InH: s.OutH(), InW: s.OutW(), KH: pk, KW: pk, StrideH: 1 + r.IntN(2), StrideW: 1 + r.IntN(2),
			PadTop: r.IntN(2), PadLeft: r.IntN(2), DilH: 1 + r.IntN(2), DilW: 1}
		p.OutH = (p.InH+p.PadTop-(p.KH-1)*p.DilH-1)/p.StrideH + 1
		p.OutW = (p.InW+p.PadLeft-(p.KW-1)*p.DilW-1)/p.StrideW + 1
		if s.Validate() != nil || p.OutH <= 0 || p.OutW <= 0 || p.Validate() != nil {
			continue
		}
		cases = append(cases, tcase{fmt.Sprintf("random%d", len(cases)), s, p})
	}
	cases = append(cases,
		tcase{"squeezenet/conv1+pool", ConvShape{InC: 3, InH: 224, InW: 224, OutC: 64, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, Groups: 1},
			PoolShape{InH: 111, InW: 111, OutH: 55, OutW: 55, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
		tcase{"yolo/conv1+pool", ConvShape{InC: 3, InH: 416, InW: 416, OutC: 16, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1},
			PoolShape{InH: 416, InW: 416, OutH: 208, OutW: 208, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
		tcase{"yolo/conv4+pool", ConvShape{InC: 64, InH: 52, InW: 52, OutC: 128, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1},
			PoolShape{InH: 52, InW: 52, OutH: 26, OutW: 26, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
		tcase{"odd rows, ceil mode", ConvShape{InC: 8, InH: 13, InW: 11, OutC: 12, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1},
			PoolShape{InH: 13, InW: 11, OutH: 7, OutW: 6, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
		tcase{"odd rows, floor mode", ConvShape{InC: 8, InH: 13, InW: 11, OutC: 12, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1},
			PoolShape{InH: 13, InW: 11, OutH: 6, OutW: 5, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
	)
	banded := 0
	for _, tc := range cases {
		s, p := tc.s, tc.p
		w := randSlice(r, s.OutC*s.InC*s.KH*s.KW)
		bias := randSlice(r, s.OutC)
		act := testActs[r.IntN(len(testActs))]
		n := 1 + r.IntN(3)
		src := randSlice(r, n*s.InC*s.InH*s.InW)
		for _, st := range []strategy{stratShifted, stratPointwise, stratWinograd, stratIm2col} {
			c, err := newConv(s, w, bias, act, st)
			if err != nil {
				continue // pointwise needs a 1×1 stride-1 unpadded kernel, Winograd 3×3 stride 1
			}
			// The reference: the whole convolution, then the pooling.
			conv := make([]float32, n*s.OutC*s.OutH()*s.OutW())
			c.Forward(conv, src, n)
			want := make([]float32, n*s.OutC*p.OutH*p.OutW)
			MaxPool(want, conv, n*s.OutC, p)
			cp, err := NewConvMaxPool(c, p)
			if st == stratIm2col {
				if err == nil || !strings.Contains(err.Error(), "cannot be computed in bands") {
					t.Errorf("%s: NewConvMaxPool with strategy %s: err = %v, want an error", tc.name, st, err)
				}
				continue
			}
			if st == stratWinograd && (p.StrideH != 2 || (p.KH-1)*p.DilH > 1 || p.PadTop != 0) {
				if err == nil || !strings.Contains(err.Error(), "is pooled with it only by windows of at most 2 rows") {
					t.Errorf("%s: NewConvMaxPool with strategy %s, pool %+v: err = %v, want an error", tc.name, st, p, err)
				}
				continue
			}
			if err != nil {
				if st == stratShifted && c.wph != s.OutW() && strings.Contains(err.Error(), "past the convolution's") {
					continue // windows reaching into the padded-width columns
				}
				t.Fatalf("%s: NewConvMaxPool with strategy %s: %v", tc.name, st, err)
			}
			banded++
			bands := []int{cp.band}
			if p.OutH <= 30 && st != stratWinograd {
				bands = []int{1, 2, 3, p.OutH}
			}
			for _, band := range bands {
				cp.band, cp.rows = band, min(cp.convRows(band), p.InH)
				got := make([]float32, len(want))
				cp.Forward(got, src, n)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s, %s, band of %d rows, %d images: value %d = %v, want %v", tc.name, st, band, n, i, got[i], want[i])
					}
				}
			}
		}
	}
	if banded < 40 {
		t.Errorf("only %d cases could be banded", banded)
	}
}

// TestNewConvMaxPoolErrors checks the convolutions and poolings that are
// not banded.
func TestNewConvMaxPoolErrors(t *testing.T) {
	if refKernels {
		t.Skip("refkernels build: every convolution uses the reference strategy, which is never banded")
	}
	conv := func(s ConvShape, st strategy) *Conv {
		c, err := newConv(s, make([]float32, s.OutC*s.InC/s.Groups*s.KH*s.KW), nil, Activation{}, st)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	s3 := conv3(16, 16, 10, 1)
	pool := PoolShape{InH: 10, InW: 10, OutH: 5, OutW: 5, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}
	for _, tc := range []struct {
		name string
		c    *Conv
		p    PoolShape
		want string
	}{
		{"winograd, 3x3 pool", conv(s3, stratWinograd), PoolShape{InH: 10, InW: 10, OutH: 4, OutW: 4, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}, "is pooled with it only by windows of at most 2 rows at stride 2 without padding above, not 3×3/2"},
		{"im2col", conv(s3, stratIm2col), pool, "im2col-gemm convolution with 1 groups cannot be computed in bands"},
		{"grouped", conv(ConvShape{InC: 16, InH: 10, InW: 10, OutC: 16, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 2}, stratShifted), pool, "with 2 groups"},
		{"other input size", conv(s3, stratShifted), PoolShape{InH: 11, InW: 10, OutH: 5, OutW: 5, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}, "pool input 11×10 differs from the convolution's output 10×10"},
		{"right edge", conv(s3, stratShifted), PoolShape{InH: 10, InW: 10, OutH: 10, OutW: 10, KH: 2, KW: 2, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1}, "pooling windows reach column 10, past the convolution's 10 columns"},
		{"invalid pool", conv(s3, stratShifted), PoolShape{InH: 10, InW: 10, OutH: 5, OutW: 5, KH: 2, KW: 2, DilH: 1, DilW: 1}, "strides and dilations must be positive"},
	} {
		if _, err := NewConvMaxPool(tc.c, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
