package mr

import "github.com/amt-dev/amt/rgb"

// The lossy part of a baseline JPEG round trip as libjpeg(-turbo) does it
// with Pillow's defaults (4:2:0, islow DCTs, fancy upsampling): entropy
// coding is lossless, so encoding and decoding reduce to these integer
// steps, written after the IJG's jccolor.c, jcsample.c, jfdctint.c,
// jcdctmgr.c, jidctint.c, jdsample.c and jdcolor.c (libjpeg 6b, whose
// arithmetic libjpeg-turbo's SIMD code reproduces).

// jpegStdLuma and jpegStdChroma are the IJG's standard quantisation
// tables (JPEG Annex K), in natural (row-major) order.
var (
	jpegStdLuma = [64]int32{
		16, 11, 10, 16, 24, 40, 51, 61,
		12, 12, 14, 19, 26, 58, 60, 55,
		14, 13, 16, 24, 40, 57, 69, 56,
		14, 17, 22, 29, 51, 87, 80, 62,
		18, 22, 37, 56, 68, 109, 103, 77,
		24, 35, 55, 64, 81, 104, 113, 92,
		49, 64, 78, 87, 103, 121, 120, 101,
		72, 92, 95, 98, 112, 100, 103, 99}
	jpegStdChroma = [64]int32{
		17, 18, 24, 47, 99, 99, 99, 99,
		18, 21, 26, 66, 99, 99, 99, 99,
		24, 26, 56, 99, 99, 99, 99, 99,
		47, 66, 99, 99, 99, 99, 99, 99,
		99, 99, 99, 99, 99, 99, 99, 99,
		99, 99, 99, 99, 99, 99, 99, 99,
		99, 99, 99, 99, 99, 99, 99, 99,
		99, 99, 99, 99, 99, 99, 99, 99}
)

// jpegQuant scales a standard table to quality q as jpeg_set_quality
// does with force_baseline: scale 5000/q below 50, else 200 − 2q; entries
// (v·scale + 50)/100 clamped to [1, 255].
func jpegQuant(std *[64]int32, q int) [64]int32 {
	q = min(max(q, 1), 100)
	scale := int32(200 - 2*q)
	if q < 50 {
		scale = int32(5000 / q)
	}
	var t [64]int32
	for i, v := range std {
		t[i] = min(max((v*scale+50)/100, 1), 255)
	}
	return t
}

// libjpegRoundTrip returns src encoded at quality q and decoded, as
// Pillow's save(..., 'JPEG', quality=q) and open do with libjpeg.
func libjpegRoundTrip(src rgb.Image, q int) rgb.Image {
	w, h := src.W, src.H
	ql, qc := jpegQuant(&jpegStdLuma, q), jpegQuant(&jpegStdChroma, q)
	// Planes padded by repeating the last column and row: luma to whole
	// blocks, the full-resolution chroma to whole 16×16 MCUs.
	cw, chh := (w+1)/2, (h+1)/2
	cbw, cbh := (cw+7)/8*8, (chh+7)/8*8
	lw, lh := (w+7)/8*8, (h+7)/8*8
	fw, fh := 2*cbw, 2*cbh
	y := make([]int32, lw*lh)
	cb := make([]int32, fw*fh)
	cr := make([]int32, fw*fh)
	const one, half = 1 << 16, 1 << 15
	fix := func(x float64) int32 { return int32(x*one + 0.5) }
	for py := 0; py < max(lh, fh); py++ {
		sy := min(py, h-1)
		for px := 0; px < max(lw, fw); px++ {
			sx := min(px, w-1)
			p := src.Pix[(sy*w+sx)*3:]
			r, g, b := int32(p[0]), int32(p[1]), int32(p[2])
			if py < lh && px < lw {
				y[py*lw+px] = (fix(0.29900)*r + fix(0.58700)*g + fix(0.11400)*b + half) >> 16
			}
			if py < fh && px < fw {
				cb[py*fw+px] = (-fix(0.16874)*r - fix(0.33126)*g + fix(0.5)*b + 128<<16 + half - 1) >> 16
				cr[py*fw+px] = (fix(0.5)*r - fix(0.41869)*g - fix(0.08131)*b + 128<<16 + half - 1) >> 16
			}
		}
	}
	// h2v2_downsample: (a + b + c + d + bias) >> 2, bias 1, 2, 1, 2, …
	down := func(p []int32) []int32 {
		out := make([]int32, cbw*cbh)
		for i := 0; i < cbh; i++ {
			r0, r1 := p[2*i*fw:], p[(2*i+1)*fw:]
			bias := int32(1)
			for j := 0; j < cbw; j++ {
				out[i*cbw+j] = (r0[2*j] + r0[2*j+1] + r1[2*j] + r1[2*j+1] + bias) >> 2
				bias ^= 3
			}
		}
		return out
	}
	cb, cr = down(cb), down(cr)
	jpegBlocks(y, lw, lh, &ql)
	jpegBlocks(cb, cbw, cbh, &qc)
	jpegBlocks(cr, cbw, cbh, &qc)
	// Decoder: fancy upsampling and ycc_rgb_convert.
	u8 := func(p []int32) []uint8 {
		out := make([]uint8, len(p))
		for i, v := range p {
			out[i] = uint8(v)
		}
		return out
	}
	ucb := fancyUp(u8(cb), cbw, cw, chh)
	ucr := fancyUp(u8(cr), cbw, cw, chh)
	dst := rgb.New(w, h)
	for yy := 0; yy < h; yy++ {
		for x := 0; x < w; x++ {
			Y := y[yy*lw+x]
			b := int32(ucb[yy*2*cw+x]) - 128
			r := int32(ucr[yy*2*cw+x]) - 128
			o := dst.Pix[(yy*w+x)*3:]
			o[0] = clamp255(Y + (fix(1.40200)*r+half)>>16)
			o[1] = clamp255(Y + (-fix(0.34414)*b-fix(0.71414)*r+half)>>16)
			o[2] = clamp255(Y + (fix(1.77200)*b+half)>>16)
		}
	}
	return dst
}

// jpegBlocks replaces every 8×8 block of the w×h plane p (sample values
// 0–255; w and h multiples of 8) by its JPEG reconstruction under the
// quantisation table qt: level shift, jpeg_fdct_islow, quantisation with
// rounding to nearest (ties away from zero) by 8·qt, dequantisation,
// jpeg_idct_islow, range limit.
func jpegBlocks(p []int32, w, h int, qt *[64]int32) {
	var blk [64]int32
	for by := 0; by < h; by += 8 {
		for bx := 0; bx < w; bx += 8 {
			for i := 0; i < 8; i++ {
				for j := 0; j < 8; j++ {
					blk[i*8+j] = p[(by+i)*w+bx+j] - 128
				}
			}
			fdctIslow(&blk)
			for i, c := range blk {
				d := 8 * qt[i]
				if c < 0 {
					c = -((-c + d>>1) / d)
				} else {
					c = (c + d>>1) / d
				}
				blk[i] = c * qt[i]
			}
			idctIslow(&blk)
			for i := 0; i < 8; i++ {
				for j := 0; j < 8; j++ {
					p[(by+i)*w+bx+j] = blk[i*8+j]
				}
			}
		}
	}
}

// The islow DCTs' fixed-point constants (CONST_BITS 13).
const (
	jcBits   = 13
	jpPass1  = 2
	fix0_298 = 2446
	fix0_390 = 3196
	fix0_541 = 4433
	fix0_765 = 6270
	fix0_899 = 7373
	fix1_175 = 9633
	fix1_501 = 12299
	fix1_847 = 15137
	fix1_961 = 16069
	fix2_053 = 16819
	fix2_562 = 20995
	fix3_072 = 25172
)

func descale(x int32, n uint) int32 { return (x + 1<<(n-1)) >> n }

// fdctIslow is libjpeg's jpeg_fdct_islow (jfdctint.c): rows, then
// columns; the output is scaled up by 8.
func fdctIslow(d *[64]int32) {
	for pass := 0; pass < 2; pass++ {
		step, stride := 8, 1 // rows: elements 1 apart
		if pass == 1 {
			step, stride = 1, 8
		}
		for k := 0; k < 8; k++ {
			b := k * step
			e := func(i int) *int32 { return &d[b+i*stride] }
			tmp0 := *e(0) + *e(7)
			tmp7 := *e(0) - *e(7)
			tmp1 := *e(1) + *e(6)
			tmp6 := *e(1) - *e(6)
			tmp2 := *e(2) + *e(5)
			tmp5 := *e(2) - *e(5)
			tmp3 := *e(3) + *e(4)
			tmp4 := *e(3) - *e(4)
			tmp10, tmp13 := tmp0+tmp3, tmp0-tmp3
			tmp11, tmp12 := tmp1+tmp2, tmp1-tmp2
			var sh uint = jcBits - jpPass1
			if pass == 0 {
				*e(0) = (tmp10 + tmp11) << jpPass1
				*e(4) = (tmp10 - tmp11) << jpPass1
			} else {
				sh = jcBits + jpPass1
				*e(0) = descale(tmp10+tmp11, jpPass1)
				*e(4) = descale(tmp10-tmp11, jpPass1)
			}
			z1 := (tmp12 + tmp13) * fix0_541
			*e(2) = descale(z1+tmp13*fix0_765, sh)
			*e(6) = descale(z1+tmp12*-fix1_847, sh)
			o7, o5, o3, o1 := oddPart(tmp4, tmp5, tmp6, tmp7)
			*e(7) = descale(o7, sh)
			*e(5) = descale(o5, sh)
			*e(3) = descale(o3, sh)
			*e(1) = descale(o1, sh)
		}
	}
}

// idctIslow is libjpeg's jpeg_idct_islow (jidctint.c) of dequantised
// coefficients: columns into a work array scaled by 2^PASS1_BITS, then
// rows, descaled by 2^(PASS1_BITS+3), + 128 and range-limited.
func idctIslow(d *[64]int32) {
	var ws [64]int32
	for pass := 0; pass < 2; pass++ {
		in, out := d, &ws
		step, stride := 1, 8 // columns: elements 8 apart
		var sh uint = jcBits - jpPass1
		if pass == 1 {
			in, out = &ws, d
			step, stride = 8, 1
			sh = jcBits + jpPass1 + 3
		}
		for k := 0; k < 8; k++ {
			b := k * step
			e := func(i int) int32 { return in[b+i*stride] }
			z2, z3 := e(2), e(6)
			z1 := (z2 + z3) * fix0_541
			tmp2 := z1 + z3*-fix1_847
			tmp3 := z1 + z2*fix0_765
			tmp0 := (e(0) + e(4)) << jcBits
			tmp1 := (e(0) - e(4)) << jcBits
			tmp10, tmp13 := tmp0+tmp3, tmp0-tmp3
			tmp11, tmp12 := tmp1+tmp2, tmp1-tmp2
			tmp0, tmp1, tmp2, tmp3 = oddPart(e(7), e(5), e(3), e(1))
			o := func(i int, v int32) {
				v = descale(v, sh)
				if pass == 1 {
					v = rangeLimit(v)
				}
				out[b+i*stride] = v
			}
			o(0, tmp10+tmp3)
			o(7, tmp10-tmp3)
			o(1, tmp11+tmp2)
			o(6, tmp11-tmp2)
			o(2, tmp12+tmp1)
			o(5, tmp12-tmp1)
			o(3, tmp13+tmp0)
			o(4, tmp13-tmp0)
		}
	}
}

// oddPart is the odd part shared by jfdctint.c and jidctint.c (the
// rotation through z1…z5): for the inputs t0…t3 (tmp4…tmp7 of the forward
// DCT, elements 7, 5, 3, 1 of the inverse) it returns the undescaled
// results t0·FIX(0.298631336) + z1 + z3, t1·FIX(2.053119869) + z2 + z4,
// t2·FIX(3.072711026) + z2 + z3 and t3·FIX(1.501321110) + z1 + z4.
// The arithmetic is int32, so the grouping of the sums does not matter.
func oddPart(t0, t1, t2, t3 int32) (o0, o1, o2, o3 int32) {
	z1 := t0 + t3
	z2 := t1 + t2
	z3 := t0 + t2
	z4 := t1 + t3
	z5 := (z3 + z4) * fix1_175
	t0 *= fix0_298
	t1 *= fix2_053
	t2 *= fix3_072
	t3 *= fix1_501
	z1 *= -fix0_899
	z2 *= -fix2_562
	z3 *= -fix1_961
	z4 *= -fix0_390
	z3 += z5
	z4 += z5
	return t0 + z1 + z3, t1 + z2 + z4, t2 + z2 + z3, t3 + z1 + z4
}

// rangeLimit is jidctint's range_limit[x & RANGE_MASK] with the centre
// added: x taken modulo 1024 into [−512, 512), + 128, clamped to a byte.
func rangeLimit(x int32) int32 {
	x &= 1023
	if x >= 512 {
		x -= 1024
	}
	return min(max(x+128, 0), 255)
}
