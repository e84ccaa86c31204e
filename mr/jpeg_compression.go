package mr

import "github.com/amt-dev/amt/rgb"

// JPEGCompression is the jpeg_compression corruption of ImageNet-C and
// CIFAR-10-C: the image is encoded as a JPEG at quality q and decoded.
// q by severity 1–5 is 80, 65, 58, 50, 40 for images of at most 32×32
// (make_cifar_c.py) and 25, 18, 15, 10, 7 for larger ones
// (imagenet_c/corruptions.py). It does not move boxes.
//
// The reference encodes and decodes with Pillow, that is libjpeg(-turbo),
// with its defaults: 4:2:0, the IJG quality scaling of the standard
// tables, islow DCTs, fancy (triangular) chroma upsampling. Entropy coding
// is lossless, so amt does not write a JPEG file: it carries out the lossy
// integer steps of that round trip (libjpegRoundTrip), which reproduces
// Pillow's output exactly on the goldens. (Go's image/jpeg, tried first,
// differs from libjpeg in colour conversion, chroma averaging, inverse DCT
// and chroma upsampling: up to 26 levels, 1–22 % of values beyond 1.)
type JPEGCompression struct{ Severity int }

// Name implements Relation ("jpeg_compression:2").
func (c JPEGCompression) Name() string { return sevName("jpeg_compression", c.Severity) }

// Apply implements Relation.
func (c JPEGCompression) Apply(src rgb.Image) rgb.Image {
	mustCorruption("jpeg_compression", src, c.Severity)
	q := pick(src, c.Severity, [5]int{80, 65, 58, 50, 40}, [5]int{25, 18, 15, 10, 7})
	w, h := src.W, src.H
	if w == 0 || h == 0 {
		return rgb.New(w, h)
	}
	return libjpegRoundTrip(src, q)
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (JPEGCompression) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// clamp255 clamps to a byte.
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
