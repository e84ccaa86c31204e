package kernels

import "slices"

// shiftLayout returns the B row offsets of the shifted strategy (see
// shiftB) for phase planes of ph rows, the largest of them, and the size
// of the padded buffer that the GEMM over rows output rows reads (the
// planes, or the columns it reads past them).
func (c *Conv) shiftLayout(ph, rows int) (offs []int, maxOff, padLen int) {
	s := c.s
	icg, plane := s.InC/s.Groups, ph*c.wph
	offs = make([]int, c.k)
	for t := 0; t < s.KH*s.KW; t++ {
		dy, dx := t/s.KW*s.DilH, t%s.KW*s.DilW
		for ch := 0; ch < icg; ch++ {
			phase := (ch*s.StrideH+dy%s.StrideH)*s.StrideW + dx%s.StrideW
			o := phase*plane + dy/s.StrideH*c.wph + dx/s.StrideW
			offs[t*icg+ch] = o
			maxOff = max(maxOff, o)
		}
	}
	nr := c.ks.nr
	return offs, maxOff, max(icg*s.StrideH*s.StrideW*plane, roundUp(rows*c.wph, nr)+maxOff+nr)
}

// padImage runs padInput over channels [0, icg) and the whole height, on
// several goroutines when the copy is large.
func (c *Conv) padImage(pad, in []float32, icg int) {
	if w := copyWorkers(icg * c.s.InH * c.s.InW); w > 1 {
		ParallelFor(icg, w, func(ch0, ch1 int) { c.padInput(pad, in, ch0, ch1, 0, c.hph, c.hph) })
		return
	}
	c.padInput(pad, in, 0, icg, 0, c.hph, c.hph)
}

// padInput scatters one group's input channels into the zero-padded,
// phase-split buffer pad: padded pixel (row, col) of channel ch goes to
// phase plane (ch, row mod StrideH, col mod StrideW) at (row/StrideH,
// col/StrideW). Phases that no kernel tap reads are skipped. The borders of
// pad are zero and stay so. It copies channels [ch0, ch1) and the rows
// [r0, r1) of the phase planes, into planes of ph rows whose row 0 is
// phase-plane row r0 (the whole image: 0, hph, hph; a band of output
// rows: see shiftBands).
func (c *Conv) padInput(pad, in []float32, ch0, ch1, r0, r1, ph int) {
	s := c.s
	sh, sw := s.StrideH, s.StrideW
	plane := ph * c.wph
	// The input rows whose padded rows fall in phase-plane rows [r0, r1).
	y0, y1 := max(0, r0*sh-s.PadTop), min(s.InH, r1*sh-s.PadTop)
	if y0 >= y1 {
		return
	}
	if sh == 1 && sw == 1 {
		// One phase: a plain copy of the rows into the padded planes.
		for ch := ch0; ch < ch1; ch++ {
			d := pad[ch*plane+(y0+s.PadTop-r0)*c.wph+s.PadLeft:]
			src := in[ch*s.InH*s.InW : (ch+1)*s.InH*s.InW]
			for y := y0; y < y1; y++ {
				copy(d[(y-y0)*c.wph:(y-y0)*c.wph+s.InW], src[y*s.InW:(y+1)*s.InW])
			}
		}
		return
	}
	if sh == 2 && sw == 2 {
		// Each row phase of a channel: every other input row, its columns
		// split into the two column phases by one vector copy (also when
		// no tap reads one of them, as in a 1×1 stride-2 convolution: its
		// plane is there, unread, and the vector copy is faster than a
		// scalar loop over the other).
		px := s.PadLeft % 2 // the column phase of input column 0
		for ch := ch0; ch < ch1; ch++ {
			for rp := 0; rp < 2; rp++ {
				if !c.rowPhase[rp] {
					continue
				}
				ya := y0 + ((rp-y0-s.PadTop)%2+2)%2 // first input row of this row phase
				if ya >= y1 {
					continue
				}
				rows := (y1 - ya + 1) / 2
				base := (ch*2+rp)*2*plane + ((ya+s.PadTop)/2-r0)*c.wph
				a := pad[base+px*plane+s.PadLeft/2:]         // even input columns
				b := pad[base+(1-px)*plane+(s.PadLeft+1)/2:] // odd ones
				deinterleave(c.ks, a, b, in[(ch*s.InH+ya)*s.InW:], s.InW, rows, 2*s.InW, c.wph)
			}
		}
		return
	}
	// Rows that split evenly into every column phase of a stride of 8 or
	// more (no left padding, a width of sw·wph: patch embeddings such as
	// ViT's 16×16, whose kernel is their stride): a row is a wph×sw matrix
	// whose transpose holds the phases' rows one after the other, moved by
	// transposeCols' 8×8 register blocks through a buffer on the stack
	// instead of a strided loop per phase (narrower strides have no whole
	// 8×8 block: the loop is faster). With a stride that is a multiple of
	// 8 and at least 8 patches a row, transposeStrip8 writes the transpose
	// straight into the phase planes (plane values apart), in strips of 8
	// patches, the last at wph − 8 (overlapping the one before when wph is
	// no multiple of 8: values written twice, the same) instead of through the
	// buffer and a copy per phase, which saves a pass over the input.
	var buf [transposeRowMax]float32
	whole := s.PadLeft == 0 && s.InW == sw*c.wph && s.InW <= len(buf) && !slices.Contains(c.colPhase, false)
	even := sw >= 8 && whole
	strips := even && sw%8 == 0 && c.wph >= 8 && c.ks.isa != isaGeneric
	// Stride 4 on such rows (ConvNeXt's 4×4 patchify stem): deinterleave
	// twice, the row into its even and odd columns (phases 0 and 2, 1 and
	// 3, interleaved), then each of those into its two phases' planes,
	// with vector shuffles instead of the strided scalar loop per phase.
	quad := sw == 4 && whole
	for ch := ch0; ch < ch1; ch++ {
		for y := y0; y < y1; y++ {
			row := y + s.PadTop
			if !c.rowPhase[row%sh] {
				continue
			}
			src := in[(ch*s.InH+y)*s.InW : (ch*s.InH+y+1)*s.InW]
			base := (ch*sh+row%sh)*sw*plane + (row/sh-r0)*c.wph
			if sw == 1 {
				copy(pad[base+s.PadLeft:], src)
				continue
			}
			if strips {
				// Patches [i, i+8) of the row, i stepping by 8 and last at
				// wph−8: D[px][x'] = src[x'·sw + px] at pad[base + px·plane
				// + x'].
				_ = pad[base+(sw-1)*plane+c.wph-1]
				for i := 0; ; i = min(i+8, c.wph-8) {
					transposeStrip8(&pad[base+i], &src[i*sw], sw, plane, sw/8)
					if i == c.wph-8 {
						break
					}
				}
				continue
			}
			if quad {
				half := 2 * c.wph
				t := buf[:s.InW]
				deinterleave(c.ks, t[:half], t[half:], src, s.InW, 1, s.InW, half)
				deinterleave(c.ks, pad[base:], pad[base+2*plane:], t[:half], half, 1, half, c.wph)
				deinterleave(c.ks, pad[base+plane:], pad[base+3*plane:], t[half:], half, 1, half, c.wph)
				continue
			}
			if even {
				t := buf[:s.InW]
				transposeCols(t, src, c.wph, sw, 0, sw)
				for px := 0; px < sw; px++ {
					copy(pad[base+px*plane:base+px*plane+c.wph], t[px*c.wph:])
				}
				continue
			}
			for px := 0; px < sw; px++ {
				if !c.colPhase[px] {
					continue
				}
				// Input columns x with (x+PadLeft) mod sw = px.
				x0 := ((px-s.PadLeft)%sw + sw) % sw
				if x0 >= len(src) {
					continue
				}
				dst := pad[base+px*plane+(x0+s.PadLeft)/sw:]
				for i, x := 0, x0; x < len(src); i, x = i+1, x+sw {
					dst[i] = src[x]
				}
			}
		}
	}
}

// transposeRowMax is the widest input row padInput splits into its column
// phases by a transpose (values).
const transposeRowMax = 1024

// shiftB is the B operand of the shifted strategy: row p (tap, channel) of
// column j is pad[j+offs[p]], j indexing the output positions over the
// phase planes' width.
type shiftB struct {
	pad    []float32
	offs   []int
	maxOff int
}

func (sb *shiftB) panel(_ []float32, p0, kc, j, _, _ int) ([]float32, []int, int) {
	return sb.pad[j:], sb.offs[p0 : p0+kc], sb.maxOff
}

// imageB is the im2col matrix of one image (one group's channels) as a
// GEMM operand, packed block by block without being materialised.
type imageB struct {
	c  *Conv
	in []float32 // icg channels of InH×InW
}

func (ib *imageB) panel(buf []float32, p0, kc, j, _, nr int) ([]float32, []int, int) {
	c, s := ib.c, ib.c.s
	kk := s.KH * s.KW
	h, w := s.InH, s.InW
	q := j / nr
	segs := c.segs[c.segStart[q]:c.segStart[q+1]]
	end := int(segs[len(segs)-1].col + segs[len(segs)-1].len)
	d := buf[:kc*nr]
	for p := 0; p < kc; p++ {
		ch, tap := (p0+p)/kk, (p0+p)%kk
		dy, dx := int32(tap/s.KW*s.DilH), int32(tap%s.KW*s.DilW)
		plane := ib.in[ch*h*w : (ch+1)*h*w]
		dp := d[p*nr : (p+1)*nr]
		if end < nr {
			clear(dp[end:])
		}
		for _, sg := range segs {
			out := dp[sg.col : sg.col+sg.len]
			iy := int(sg.iy + dy)
			if iy < 0 || iy >= h {
				clear(out)
				continue
			}
			row := plane[iy*w : (iy+1)*w]
			ix := int(sg.ix + dx)
			if s.StrideW == 1 {
				lo, hi := max(0, -ix), min(len(out), w-ix)
				if lo >= hi {
					clear(out)
					continue
				}
				if lo == 0 && hi == nr {
					copy(out, row[ix:ix+nr])
					continue
				}
				clear(out[:lo])
				copy(out[lo:hi], row[ix+lo:ix+hi])
				clear(out[hi:])
				continue
			}
			sw := s.StrideW
			lo, hi := max(0, ceilDiv(-ix, sw)), min(len(out), ceilDiv(w-ix, sw))
			if lo >= hi {
				clear(out)
				continue
			}
			clear(out[:lo])
			src := row[ix+lo*sw : ix+(hi-1)*sw+1]
			dst := out[lo:hi]
			if sw == 2 {
				for t := range dst {
					dst[t] = src[2*t]
				}
			} else {
				for t := range dst {
					dst[t] = src[t*sw]
				}
			}
			clear(out[hi:])
		}
	}
	return d, packedOffsets(nr)[:kc], (kc - 1) * nr
}
