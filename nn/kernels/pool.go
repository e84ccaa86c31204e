package kernels

import "fmt"

// PoolShape describes a 2-D pooling window sliding over NCHW planes (ONNX
// MaxPool). The output size is given, not derived, since it depends on
// ceil_mode; windows may extend past the input (padding or ceil_mode) but
// must each overlap it.
type PoolShape struct {
	InH, InW         int // input plane size
	OutH, OutW       int // output plane size
	KH, KW           int // window size
	StrideH, StrideW int
	PadTop, PadLeft  int // the bottom/right padding is implied by OutH/OutW
	DilH, DilW       int
}

// Validate checks that the shape is well formed and that every window
// overlaps the input.
func (s PoolShape) Validate() error {
	switch {
	case s.InH <= 0 || s.InW <= 0 || s.OutH <= 0 || s.OutW <= 0 || s.KH <= 0 || s.KW <= 0:
		return fmt.Errorf("kernels: pool shape %+v: sizes must be positive", s)
	case s.StrideH <= 0 || s.StrideW <= 0 || s.DilH <= 0 || s.DilW <= 0:
		return fmt.Errorf("kernels: pool shape %+v: strides and dilations must be positive", s)
	case s.PadTop < 0 || s.PadLeft < 0:
		return fmt.Errorf("kernels: pool shape %+v: pads must be non-negative", s)
	}
	for _, d := range [2]struct{ in, out, k, st, pad, dil int }{
		{s.InH, s.OutH, s.KH, s.StrideH, s.PadTop, s.DilH},
		{s.InW, s.OutW, s.KW, s.StrideW, s.PadLeft, s.DilW},
	} {
		lo, hi := windowRange(0, d.k, d.st, d.pad, d.dil, d.in)
		lo2, hi2 := windowRange(d.out-1, d.k, d.st, d.pad, d.dil, d.in)
		if lo >= hi || lo2 >= hi2 {
			return fmt.Errorf("kernels: pool shape %+v: a window lies entirely in the padding", s)
		}
	}
	return nil
}

// windowRange returns the taps [lo, hi) of window o whose input index
// o·stride − pad + tap·dil lies in [0, in).
func windowRange(o, k, stride, pad, dil, in int) (lo, hi int) {
	start := o*stride - pad
	lo = max(0, ceilDiv(-start, dil))
	hi = min(k, ceilDiv(in-start, dil))
	return lo, hi
}

// MaxPool computes, for each of planes input planes of src (InH×InW), the
// maximum over every window of the input values it covers (padding never
// wins) into dst (OutH×OutW per plane). A NaN in a window gives NaN. It
// panics when the shape is invalid or a slice is too short.
func MaxPool(dst, src []float32, planes int, s PoolShape) {
	if err := s.Validate(); err != nil {
		panic(err.Error())
	}
	isz, osz := s.InH*s.InW, s.OutH*s.OutW
	if planes < 0 || len(src) < planes*isz || len(dst) < planes*osz {
		panic(fmt.Sprintf("kernels: MaxPool: %d planes need %d input and %d output values, have %d and %d",
			planes, planes*isz, planes*osz, len(src), len(dst)))
	}
	if planes == 0 {
		return
	}
	if refKernels {
		naiveMaxPool(dst, src, planes, s)
		return
	}
	enter()
	defer leave()
	w := workers(planes * osz * s.KH * s.KW * 16)
	if w <= 1 {
		maxPoolPlanes(dst, src, s, 0, planes)
		return
	}
	ParallelFor(planes, w, func(p0, p1 int) { maxPoolPlanes(dst, src, s, p0, p1) })
}

// maxPoolPlanes pools planes [p0, p1).
func maxPoolPlanes(dst, src []float32, s PoolShape, p0, p1 int) {
	isz, osz := s.InH*s.InW, s.OutH*s.OutW
	buf := scratch.get(2 * s.InH * s.InW)
	tmp := *buf
	ks := activeSet()
	for p := p0; p < p1; p++ {
		maxPoolPlane(dst[p*osz:(p+1)*osz], src[p*isz:(p+1)*isz], tmp, s, ks)
	}
	scratch.put(buf)
}

// interior returns the outputs [o0, o1) whose windows lie entirely inside
// an input of size in.
func interior(out, in, k, stride, pad, dil int) (o0, o1 int) {
	o0 = min(out, ceilDiv(pad, stride))
	o1 = o0
	if last := in - 1 - (k-1)*dil + pad; last >= 0 {
		o1 = max(o0, min(out, last/stride+1))
	}
	return o0, o1
}

// maxPoolPlane pools one plane. The maxima over every window position are
// computed for the whole plane with a few vectorised passes (first along
// rows: h[i] = max over the window's columns of src[i+kx·DilW], then along
// columns: v[i] = max over its rows of h[i+ky·DilH·InW], both on the plane
// as one flat array; the values of positions whose window crosses the
// plane's right edge are garbage and never read), then sampled at the
// strides; with a vertical stride, only the rows of v that are sampled
// are computed. Windows cut by the border are done one by one. tmp holds
// 2·InH·InW values.
func maxPoolPlane(dst, src, tmp []float32, s PoolShape, ks *kernelSet) {
	maxInto := ks.maxInto
	w := s.InW
	n := s.InH * w
	y0, y1 := interior(s.OutH, s.InH, s.KH, s.StrideH, s.PadTop, s.DilH)
	x0, x1 := interior(s.OutW, w, s.KW, s.StrideW, s.PadLeft, s.DilW)
	if k := s.KH; y1 > y0 && x1 > x0 && ks.isa != isaGeneric && (k == 2 || k == 3) && s.KW == k &&
		s.StrideH == 2 && s.StrideW == 2 && s.DilH == 1 && s.DilW == 1 {
		// One pass over the interior (SqueezeNet's 3×3/2, yolov3-tiny's 2×2/2).
		maxPoolS2(ks, dst[y0*s.OutW+x0:], src[(2*y0-s.PadTop)*w+2*x0-s.PadLeft:], w, s.OutW, y1-y0, x1-x0, k)
		y1 = y0 // done
	}
	if y1 > y0 && x1 > x0 {
		y0, y1 := y0, y1 // the rows left to sample from a full v
		h := src[:n]
		if s.KW > 1 {
			h = tmp[:n-(s.KW-1)*s.DilW]
			maxInto(h, src, src[s.DilW:])
			for kx := 2; kx < s.KW; kx++ {
				maxInto(h, h, src[kx*s.DilW:])
			}
		}
		if s.KH > 1 && s.StrideH > 1 {
			// Only every StrideH-th row of v is read: compute those rows,
			// over the columns the interior outputs read, one at a time.
			c0 := x0*s.StrideW - s.PadLeft
			vr := tmp[n : n+(x1-1-x0)*s.StrideW+1]
			step := s.DilH * w
			for y := y0; y < y1; y++ {
				r := (y*s.StrideH-s.PadTop)*w + c0
				maxInto(vr, h[r:], h[r+step:])
				for ky := 2; ky < s.KH; ky++ {
					maxInto(vr, vr, h[r+ky*step:])
				}
				out := dst[y*s.OutW+x0 : y*s.OutW+x1]
				for x, j := 0, 0; x < len(out); x, j = x+1, j+s.StrideW {
					out[x] = vr[j]
				}
			}
			y1 = y0 // done
		}
		v := h
		if s.KH > 1 && y1 > y0 {
			step := s.DilH * w
			v = tmp[n : n+len(h)-(s.KH-1)*step]
			maxInto(v, h, h[step:])
			for ky := 2; ky < s.KH; ky++ {
				maxInto(v, v, h[ky*step:])
			}
		}
		for y := y0; y < y1; y++ {
			out := dst[y*s.OutW+x0 : y*s.OutW+x1]
			row := v[(y*s.StrideH-s.PadTop)*w+x0*s.StrideW-s.PadLeft:]
			if s.StrideW == 1 {
				copy(out, row)
				continue
			}
			for x, j := 0, 0; x < len(out); x, j = x+1, j+s.StrideW {
				out[x] = row[j]
			}
		}
	}
	// Windows cut by the border.
	edge := func(y, x int) {
		ylo, yhi := windowRange(y, s.KH, s.StrideH, s.PadTop, s.DilH, s.InH)
		xlo, xhi := windowRange(x, s.KW, s.StrideW, s.PadLeft, s.DilW, w)
		iy := y*s.StrideH - s.PadTop
		ix := x*s.StrideW - s.PadLeft
		m := src[(iy+ylo*s.DilH)*w+ix+xlo*s.DilW]
		for ky := ylo; ky < yhi; ky++ {
			row := src[(iy+ky*s.DilH)*w : (iy+ky*s.DilH+1)*w]
			for kx := xlo; kx < xhi; kx++ {
				m = max(m, row[ix+kx*s.DilW])
			}
		}
		dst[y*s.OutW+x] = m
	}
	y0, y1 = interior(s.OutH, s.InH, s.KH, s.StrideH, s.PadTop, s.DilH)
	for y := 0; y < s.OutH; y++ {
		if y >= y0 && y < y1 && x1 > x0 {
			for x := 0; x < x0; x++ {
				edge(y, x)
			}
			for x := x1; x < s.OutW; x++ {
				edge(y, x)
			}
			continue
		}
		for x := 0; x < s.OutW; x++ {
			edge(y, x)
		}
	}
}

// maxPoolS2 pools rows×n outputs with k×k windows (k = 2 or 3) and stride
// 2 lying inside the input: dst[y·outW + x] = max of src[(2y+i)·inW + 2x+j]
// for i, j < k, NaN when any is NaN.
func maxPoolS2(ks *kernelSet, dst, src []float32, inW, outW, rows, n, k int) {
	_ = dst[(rows-1)*outW+n-1]
	_ = src[(2*(rows-1)+k-1)*inW+2*(n-1)+k-1]
	switch {
	case ks.isa == isaAVX512 && k == 3:
		maxPool3s2AVX512(&dst[0], &src[0], inW, outW, rows, n)
	case ks.isa == isaAVX512:
		maxPool2s2AVX512(&dst[0], &src[0], inW, outW, rows, n)
	case ks.isa == isaAVX2 && k == 3:
		maxPool3s2AVX2(&dst[0], &src[0], inW, outW, rows, n)
	case ks.isa == isaAVX2:
		maxPool2s2AVX2(&dst[0], &src[0], inW, outW, rows, n)
	default:
		maxPoolS2Go(dst, src, inW, outW, rows, n, k)
	}
}

// maxPoolS2Go is the specification of maxPoolS2.
func maxPoolS2Go(dst, src []float32, inW, outW, rows, n, k int) {
	for y := 0; y < rows; y++ {
		for x := 0; x < n; x++ {
			m := src[2*y*inW+2*x]
			for i := 0; i < k; i++ {
				for j := 0; j < k; j++ {
					v := src[(2*y+i)*inW+2*x+j]
					if v != v || m != m {
						m = v + m // NaN
					} else {
						m = max(m, v)
					}
				}
			}
			dst[y*outW+x] = m
		}
	}
}
