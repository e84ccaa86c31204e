package kernels

import (
	"errors"
	"fmt"
)

// Depthwise is a depthwise 2-D convolution of stride 1 or 2 (one filter
// per channel, Groups = InC = OutC: ConvNeXt's 7×7, MobileNet's and
// EfficientNet's 3×3 and 5×5), prepared for running: each channel's input
// plane is copied into a zero-padded buffer (for a horizontal stride of 2,
// split into its even and odd columns, each convolved with the kernel's
// even or odd taps at stride 1), then each output row is computed in
// chunks of 32 values whose accumulators stay in registers over all the
// kernel taps (AVX2+FMA assembly with the avx2 and avx512 kernel sets,
// depthwise_amd64.s; Go with the generic set and elsewhere; like a Conv, a
// Depthwise keeps the kernel set in use when it was prepared). Channels
// are split over the cores. A Depthwise is safe for concurrent use.
type Depthwise struct {
	s      ConvShape
	ks     *kernelSet // the kernel set in use when it was prepared
	weight []float32  // OutC·KH·KW, BatchNormalization already folded in by the caller
	bias   []float32  // OutC values (zeros if none)
	act    Activation
	// Geometry: output rows in chunks of 32; the padded plane has ph rows
	// of pw values; with a horizontal stride of 2 its even and odd columns
	// are planes of pp values per row, and the kernel's even and odd
	// columns (kwe and kwo of them) are in we and wo.
	pw, ph, pp, chunks int
	kwe, kwo           int
	we, wo             []float32
}

// dwChunk is the number of output values the row kernel computes at once.
const dwChunk = 32

// DepthwiseFits reports whether s is a convolution Depthwise runs.
func DepthwiseFits(s ConvShape) bool {
	return s.Validate() == nil && s.Groups == s.InC && s.OutC == s.InC &&
		(s.StrideH == 1 || s.StrideH == 2) && (s.StrideW == 1 || s.StrideW == 2) && s.DilH == 1 && s.DilW == 1
}

// NewDepthwise prepares a depthwise convolution (see DepthwiseFits) with
// weights in ONNX layout [C,1,KH,KW], an optional bias of C values, and an
// activation applied after the bias (and the residual of ForwardAdd).
func NewDepthwise(s ConvShape, weight, bias []float32, act Activation) (*Depthwise, error) {
	if !DepthwiseFits(s) {
		return nil, fmt.Errorf("kernels: NewDepthwise: shape %+v is not a depthwise convolution of stride 1 or 2", s)
	}
	if len(weight) != s.OutC*s.KH*s.KW {
		return nil, fmt.Errorf("kernels: NewDepthwise: %d weights, want %d", len(weight), s.OutC*s.KH*s.KW)
	}
	if bias != nil && len(bias) != s.OutC {
		return nil, errors.New("kernels: NewDepthwise: bias length differs from the channels")
	}
	d := &Depthwise{s: s, ks: activeSet(), weight: append([]float32(nil), weight...), bias: make([]float32, s.OutC), act: act}
	copy(d.bias, bias)
	d.chunks = (s.OutW() + dwChunk - 1) / dwChunk
	d.ph = (s.OutH()-1)*s.StrideH + s.KH
	d.pw = max(d.chunks*dwChunk*s.StrideW+s.KW, s.PadLeft+s.InW)
	if s.StrideW == 2 {
		d.pw += d.pw % 2
		d.pp = d.pw / 2
		d.kwe, d.kwo = (s.KW+1)/2, s.KW/2
		d.we = make([]float32, s.OutC*s.KH*d.kwe)
		d.wo = make([]float32, s.OutC*s.KH*d.kwo)
		for c := 0; c < s.OutC; c++ {
			for ky := 0; ky < s.KH; ky++ {
				for kx := 0; kx < s.KW; kx++ {
					w := weight[(c*s.KH+ky)*s.KW+kx]
					if kx%2 == 0 {
						d.we[(c*s.KH+ky)*d.kwe+kx/2] = w
					} else {
						d.wo[(c*s.KH+ky)*d.kwo+kx/2] = w
					}
				}
			}
		}
	}
	return d, nil
}

// Shape returns the convolution's shape.
func (d *Depthwise) Shape() ConvShape { return d.s }

// Forward computes n images: dst [n, C, OutH, OutW] from src [n, C, InH, InW].
func (d *Depthwise) Forward(dst, src []float32, n int) { d.forward(dst, src, nil, n) }

// ForwardAdd is Forward adding res (dst's shape; may be dst) before the
// activation.
func (d *Depthwise) ForwardAdd(dst, src, res []float32, n int) { d.forward(dst, src, res, n) }

func (d *Depthwise) forward(dst, src, res []float32, n int) {
	s := d.s
	c := s.InC
	isz, osz := s.InH*s.InW, s.OutH()*s.OutW()
	if len(src) < n*c*isz || len(dst) < n*c*osz || (res != nil && len(res) < n*c*osz) {
		panic(fmt.Sprintf("kernels: Depthwise: buffers too short for %d images of %+v", n, s))
	}
	planes := n * c
	w := min(planes, freeThreads())
	if planes*osz*s.KH*s.KW < 1<<16 {
		w = 1
	}
	enter()
	defer leave()
	ParallelFor(planes, w, func(p0, p1 int) {
		buf := dwScratch.get(2*d.ph*d.pw + d.chunks*dwChunk)
		defer dwScratch.put(buf)
		pad, row := (*buf)[:d.ph*d.pw], (*buf)[d.ph*d.pw:d.ph*d.pw+d.chunks*dwChunk]
		phases := (*buf)[d.ph*d.pw+d.chunks*dwChunk:]
		for p := p0; p < p1; p++ {
			var r []float32
			if res != nil {
				r = res[p*osz : (p+1)*osz]
			}
			d.plane(dst[p*osz:(p+1)*osz], src[p*isz:(p+1)*isz], r, p%c, pad, row, phases)
		}
	})
}

// dwScratch recycles the padded planes and row buffers.
var dwScratch floatList

// plane computes one channel's output plane.
func (d *Depthwise) plane(dst, src, res []float32, ch int, pad, row, phases []float32) {
	s := d.s
	clear(pad)
	for y := 0; y < min(s.InH, d.ph-s.PadTop); y++ {
		copy(pad[(y+s.PadTop)*d.pw+s.PadLeft:(y+s.PadTop+1)*d.pw], src[y*s.InW:(y+1)*s.InW])
	}
	var even, odd []float32
	if s.StrideW == 2 {
		even, odd = phases[:d.ph*d.pp], phases[d.ph*d.pp:2*d.ph*d.pp]
		for i := 0; i < d.ph*d.pp; i++ {
			even[i], odd[i] = pad[2*i], pad[2*i+1]
		}
	}
	w := d.weight[ch*s.KH*s.KW : (ch+1)*s.KH*s.KW]
	b := d.bias[ch]
	ow := s.OutW()
	for y := 0; y < s.OutH(); y++ {
		r0 := y * s.StrideH
		if s.StrideW == 1 {
			dwRow(d.ks, row, pad[r0*d.pw:], d.pw, w, s.KH, s.KW, d.chunks, b, false)
		} else {
			dwRow(d.ks, row, even[r0*d.pp:], d.pp, d.we[ch*s.KH*d.kwe:], s.KH, d.kwe, d.chunks, b, false)
			if d.kwo > 0 {
				dwRow(d.ks, row, odd[r0*d.pp:], d.pp, d.wo[ch*s.KH*d.kwo:], s.KH, d.kwo, d.chunks, 0, true)
			}
		}
		if res != nil { // before writing dst, which res may be
			for x, v := range res[y*ow : (y+1)*ow] {
				row[x] += v
			}
		}
		o := dst[y*ow : (y+1)*ow]
		copy(o, row)
		d.act.Apply(o)
	}
}

// dwRowGo sets out[x] = bias + Σ w[ky·kw+kx]·in[ky·stride+x+kx] for x <
// chunks·32, or adds the sum to out with acc.
func dwRowGo(out, in []float32, stride int, w []float32, kh, kw, chunks int, bias float32, acc bool) {
	out = out[:chunks*dwChunk]
	if !acc {
		for x := range out {
			out[x] = bias
		}
	}
	for ky := 0; ky < kh; ky++ {
		r := in[ky*stride:]
		for kx := 0; kx < kw; kx++ {
			wv := w[ky*kw+kx]
			src := r[kx : kx+len(out)]
			for x := range out {
				out[x] += wv * src[x]
			}
		}
	}
}
