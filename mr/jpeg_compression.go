package mr

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"

	"github.com/amt-dev/amt/rgb"
)

// JPEGCompression is the jpeg_compression corruption of ImageNet-C and
// CIFAR-10-C: the image is encoded as a JPEG at quality q and decoded.
// q by severity 1–5 is 80, 65, 58, 50, 40 for images of at most 32×32
// (make_cifar_c.py) and 25, 18, 15, 10, 7 for larger ones
// (imagenet_c/corruptions.py). It does not move boxes.
//
// The reference encodes and decodes with Pillow, that is libjpeg(-turbo):
// 4:2:0, the IJG quality scaling of the standard tables, islow DCTs,
// fancy (triangular) chroma upsampling. amt has no libjpeg: it encodes
// with Go's image/jpeg (4:2:0, the same quantisation tables and the same
// integer forward DCT; its RGB→YCbCr constants and chroma averaging round
// a little differently), decodes the coefficients with Go's decoder
// (whose inverse DCT is not libjpeg's islow), and upsamples the chroma
// and converts to RGB as libjpeg does (h2v2_fancy_upsample, then
// jdcolor.c's ycc_rgb_convert with its 16-bit fixed-point tables). The
// match to Pillow is measured in TestCorruptionGoldens (most values
// within 1–2 levels, not the 1 level of the other deterministic
// corruptions).
type JPEGCompression struct{ Severity int }

// Name implements Relation ("jpeg_compression:2").
func (c JPEGCompression) Name() string { return sevName("jpeg_compression", c.Severity) }

// Apply implements Relation.
func (c JPEGCompression) Apply(src rgb.Image) rgb.Image {
	mustValid("jpeg_compression", src)
	mustSeverity("jpeg_compression", c.Severity)
	q := pick(src, c.Severity, [5]int{80, 65, 58, 50, 40}, [5]int{25, 18, 15, 10, 7})
	w, h := src.W, src.H
	if w == 0 || h == 0 {
		return rgb.New(w, h)
	}
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < w*h; i++ {
		copy(m.Pix[4*i:4*i+3], src.Pix[3*i:3*i+3])
		m.Pix[4*i+3] = 255
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: q}); err != nil {
		panic(fmt.Sprintf("mr: jpeg_compression: encode: %v", err))
	}
	d, err := jpeg.Decode(&buf)
	if err != nil {
		panic(fmt.Sprintf("mr: jpeg_compression: decode: %v", err))
	}
	ycc, ok := d.(*image.YCbCr)
	if !ok || ycc.SubsampleRatio != image.YCbCrSubsampleRatio420 {
		panic(fmt.Sprintf("mr: jpeg_compression: decoded %T, want 4:2:0 YCbCr", d))
	}
	return yccToRGB(ycc, w, h)
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (JPEGCompression) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// yccToRGB converts a 4:2:0 YCbCr image to RGB as libjpeg does by
// default: each chroma plane upsampled by h2v2_fancy_upsample (the edge
// rows and columns replicated), then ycc_rgb_convert.
func yccToRGB(m *image.YCbCr, w, h int) rgb.Image {
	cw, chh := (w+1)/2, (h+1)/2
	cb := fancyUp(m.Cb, m.CStride, cw, chh)
	cr := fancyUp(m.Cr, m.CStride, cw, chh)
	const one = 1 << 16
	fix := func(x float64) int32 { return int32(x*one + 0.5) }
	dst := rgb.New(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			yy := int32(m.Y[y*m.YStride+x])
			b := int32(cb[y*2*cw+x]) - 128
			r := int32(cr[y*2*cw+x]) - 128
			o := dst.Pix[(y*w+x)*3:]
			o[0] = clamp255(yy + (fix(1.40200)*r+one/2)>>16)
			o[1] = clamp255(yy + (-fix(0.34414)*b-fix(0.71414)*r+one/2)>>16)
			o[2] = clamp255(yy + (fix(1.77200)*b+one/2)>>16)
		}
	}
	return dst
}

func clamp255(v int32) uint8 { return uint8(min(max(v, 0), 255)) }

// fancyUp is libjpeg's h2v2_fancy_upsample of a cw×ch plane (stride s) to
// 2cw×2ch: each output sample weighs its nearer input rows 3:1 and then
// its nearer columns 3:1, (9·a + 3·b + 3·c + d + 8 or 7) >> 4, with the
// first and last rows and columns replicated beyond the edge.
func fancyUp(p []uint8, s, cw, ch int) []uint8 {
	out := make([]uint8, 4*cw*ch)
	ow := 2 * cw
	for y := 0; y < ch; y++ {
		for v := 0; v < 2; v++ {
			ny := y - 1
			if v == 1 {
				ny = y + 1
			}
			ny = min(max(ny, 0), ch-1)
			in0, in1 := p[y*s:], p[ny*s:]
			col := func(x int) int32 { return 3*int32(in0[x]) + int32(in1[x]) }
			o := out[(2*y+v)*ow:]
			if cw == 1 {
				c := col(0)
				o[0], o[1] = uint8((c*4+8)>>4), uint8((c*4+7)>>4)
				continue
			}
			this, next := col(0), col(1)
			o[0] = uint8((this*4 + 8) >> 4)
			o[1] = uint8((this*3 + next + 7) >> 4)
			last := this
			this = next
			for x := 1; x < cw-1; x++ {
				next = col(x + 1)
				o[2*x] = uint8((this*3 + last + 8) >> 4)
				o[2*x+1] = uint8((this*3 + next + 7) >> 4)
				last, this = this, next
			}
			o[2*cw-2] = uint8((this*3 + last + 8) >> 4)
			o[2*cw-1] = uint8((this*4 + 7) >> 4)
		}
	}
	return out
}
