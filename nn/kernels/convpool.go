package kernels

import "fmt"

// ConvMaxPool is a convolution followed by a max pooling of its output
// (SqueezeNet's first layer and its pooling; yolov3-tiny's convolutions
// and their 2×2/2 poolings), computed band by band: a few rows of the
// convolution's output are computed into a buffer that stays in cache and
// pooled at once, so that the convolution's whole output (3 MB per image
// for SqueezeNet-224's first layer, 11 MB for yolov3-tiny's) is never
// written to memory and read back. The pooling windows of consecutive
// bands overlap by KH−StrideH rows of the convolution: those are kept from
// one band to the next, not recomputed. (Winograd convolutions pool their
// blocks of tile rows instead: see NewConvMaxPool.)
//
// Every value is computed exactly as Conv.Forward followed by MaxPool
// computes it (the same GEMM, adding the same products in the same order,
// the same maxima): the results are identical. A ConvMaxPool is safe for
// concurrent use.
type ConvMaxPool struct {
	c *Conv
	p PoolShape
	// Banded strategies only:
	wcols int // values per convolution row in a band: the phase planes' width (shifted) or OutW (pointwise)
	rows  int // convolution rows a band holds at most
	band  int // pooled rows per band
	pads  freeList[[]float32]
}

// bandValues is the size of one band's convolution output, in values:
// 256 KiB, a quarter of the L2 cache of current x86 cores, so that the
// band is still there when the pooling reads it.
const bandValues = 64 << 10

// NewConvMaxPool prepares c followed by a max pooling of shape p, whose
// input is c's output. The strategies that compute a run of output rows
// as one run of GEMM columns ("pointwise-gemm" and "shifted-gemm", one
// group) are banded; "winograd-f2x2" pools each block of tile rows as it
// transforms it, for poolings whose windows never span two blocks (at
// most 2 rows at stride 2, no padding above: yolov3-tiny's 2×2/2). For
// other convolutions and poolings, or a pooling whose windows reach past
// the right edge of a shifted convolution's rows, it returns an error and
// the caller runs the two separately.
func NewConvMaxPool(c *Conv, p PoolShape) (*ConvMaxPool, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := c.s
	if p.InH != s.OutH() || p.InW != s.OutW() {
		return nil, fmt.Errorf("kernels: pool input %d×%d differs from the convolution's output %d×%d", p.InH, p.InW, s.OutH(), s.OutW())
	}
	if c.strategy == stratWinograd {
		// Pooled block by block (see winoPool).
		if p.StrideH != 2 || (p.KH-1)*p.DilH > 1 || p.PadTop != 0 {
			return nil, fmt.Errorf("kernels: a winograd-f2x2 convolution is pooled with it only by windows of at most 2 rows at stride 2 without padding above, not %d×%d/%d (dilation %d, padding %d)",
				p.KH, p.KW, p.StrideH, p.DilH, p.PadTop)
		}
		return &ConvMaxPool{c: c, p: p}, nil
	}
	if s.Groups != 1 || (c.strategy != stratPointwise && c.strategy != stratShifted) {
		return nil, fmt.Errorf("kernels: a %s convolution with %d groups cannot be computed in bands of rows", c.strategy, s.Groups)
	}
	cp := &ConvMaxPool{c: c, p: p, wcols: s.OutW()}
	if c.strategy == stratShifted {
		// The band's rows keep the phase planes' width; the pooling reads
		// them as rows that wide, so no window may reach past OutW.
		cp.wcols = c.wph
		if last := (p.OutW-1)*p.StrideW - p.PadLeft + (p.KW-1)*p.DilW; last >= p.InW {
			return nil, fmt.Errorf("kernels: pooling windows reach column %d, past the convolution's %d columns", last, p.InW)
		}
	}
	// The largest band whose convolution rows fit bandValues (at least one
	// pooled row).
	for r := p.OutH; r >= 1; r-- {
		cp.band, cp.rows = r, min(cp.convRows(r), p.InH)
		if c.m*cp.rows*cp.wcols <= bandValues {
			break
		}
	}
	return cp, nil
}

// convRows returns how many convolution rows r consecutive pooled rows
// read (before clipping at the edges).
func (cp *ConvMaxPool) convRows(r int) int {
	p := cp.p
	return (r-1)*p.StrideH + (p.KH-1)*p.DilH + 1
}

// Forward computes dst = MaxPool(act(conv(src) + bias)) for a batch of n
// images. src is [n, InC, InH, InW] and dst is [n, OutC, pool OutH, pool
// OutW]. Forward panics when a slice is shorter than that.
func (cp *ConvMaxPool) Forward(dst, src []float32, n int) {
	c, s, p := cp.c, cp.c.s, cp.p
	isz, osz := s.InC*s.InH*s.InW, s.OutC*p.OutH*p.OutW
	if n < 0 || len(src) < n*isz || len(dst) < n*osz {
		panic(fmt.Sprintf("kernels: ConvMaxPool.Forward: %d images need %d input and %d output values, have %d and %d",
			n, n*isz, n*osz, len(src), len(dst)))
	}
	if n == 0 {
		return
	}
	flops.Add(uint64(n) * c.Flops())
	enter()
	defer leave()
	if c.strategy == stratWinograd {
		call := c.calls.get()
		for b := 0; b < n; b++ {
			call.pool = winoPool{dst: dst[b*osz : (b+1)*osz], p: p}
			c.forwardWinograd(call, nil, src[b*isz:(b+1)*isz], nil, &call.pool)
		}
		call.pool = winoPool{}
		c.calls.put(call)
		return
	}
	var pad []float32
	if c.strategy == stratShifted {
		buf := cp.pads.get()
		if *buf == nil {
			// padInput leaves the borders as they are: zero from here on.
			*buf = make([]float32, c.padLen)
		}
		defer cp.pads.put(buf)
		pad = *buf
	}
	bands := ceilDiv(p.OutH, cp.band)
	w := min(workers(int(c.Flops())), bands)
	for b := 0; b < n; b++ {
		in, out := src[b*isz:(b+1)*isz], dst[b*osz:(b+1)*osz]
		if pad != nil {
			c.padImage(pad, in, s.InC)
		}
		if w <= 1 {
			sc := workspaces.get()
			cp.bands(out, in, pad, 0, bands, sc)
			workspaces.put(sc)
			continue
		}
		parallelFor(bands, w, func(k0, k1 int, sc *workspace) { cp.bands(out, in, pad, k0, k1, sc) })
	}
}

// bands computes bands [k0, k1) of one image's output: the pooled rows
// [k0·band, min(k1·band, OutH)). in is the image and pad its padded copy
// (shifted strategy).
func (cp *ConvMaxPool) bands(out, in, pad []float32, k0, k1 int, sc *workspace) {
	c, p := cp.c, cp.p
	wc, plane := cp.wcols, cp.rows*cp.wcols // a band's channel o is at buf[o·plane:]
	buf := scratch.get(c.m*plane + 2*plane)
	defer scratch.put(buf)
	conv, tmp := (*buf)[:c.m*plane], (*buf)[c.m*plane:]
	var g gemmOp
	var mat matrixB
	var sh shiftB
	have0, have1 := 0, 0 // convolution rows held: [have0, have1) at rows 0… of each plane
	for k := k0; k < k1; k++ {
		r0, r1 := k*cp.band, min((k+1)*cp.band, p.OutH)
		lo := r0*p.StrideH - p.PadTop // first row of the first window, maybe in the padding
		y0, y1 := max(lo, 0), min(lo+cp.convRows(r1-r0), p.InH)
		keep := 0
		if have0 <= y0 && y0 < have1 {
			// The rows that the previous band's last windows share with
			// this band's first ones.
			keep = have1 - y0
			if y0 > have0 {
				for o := 0; o < c.m; o++ {
					copy(conv[o*plane:o*plane+keep*wc], conv[o*plane+(y0-have0)*wc:o*plane+(have1-have0)*wc])
				}
			}
		}
		if y := y0 + keep; y < y1 {
			g = gemmOp{ks: c.ks, m: c.m, n: (y1 - y) * wc, k: c.k, kc: c.kc, ap: c.ap, c: conv[keep*wc:], ldc: plane, bias: c.bias, act: c.act}
			if c.strategy == stratShifted {
				sh = shiftB{pad: pad[y*wc:], offs: c.offs, maxOff: c.maxOff}
				g.b = &sh
			} else {
				mat = matrixB{b: in[y*wc:], ldb: c.n, offs: c.offs}
				g.b = &mat
			}
			g.block(0, c.m, 0, g.n, sc.buf.b[:])
		}
		have0, have1 = y0, y1
		// The band's pooling: its rows (the padded-width ones, see
		// NewConvMaxPool), its pooled rows, the padding above the first.
		ps := p
		ps.InH, ps.InW, ps.OutH, ps.PadTop = y1-y0, wc, r1-r0, y0-lo
		osz := p.OutH * p.OutW
		for o := 0; o < c.m; o++ {
			maxPoolPlane(out[o*osz+r0*p.OutW:o*osz+r1*p.OutW], conv[o*plane:o*plane+(y1-y0)*wc], tmp, ps, c.ks)
		}
	}
}
