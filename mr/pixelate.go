package mr

import "github.com/amt-dev/amt/rgb"

// Pixelate is the pixelate corruption of ImageNet-C and CIFAR-10-C: the
// image is resized to int(W·c)×int(H·c) and back to W×H, both with
// Pillow's BOX filter (Image.resize(..., Image.BOX): Pillow's Resample.c,
// horizontal pass then vertical, coefficients normalised and rounded to
// 22 fractional bits, each pass rounding to uint8). c by severity 1–5 is
// 0.95, 0.9, 0.85, 0.75, 0.65 for images of at most 32×32
// (make_cifar_c.py, which writes int(32·c)) and 0.6, 0.5, 0.4, 0.3, 0.25
// for larger ones (imagenet_c/corruptions.py, int(224·c)). It does not
// move boxes.
type Pixelate struct{ Severity int }

// Name implements Relation ("pixelate:2").
func (c Pixelate) Name() string { return sevName("pixelate", c.Severity) }

// Apply implements Relation.
func (c Pixelate) Apply(src rgb.Image) rgb.Image {
	mustCorruption("pixelate", src, c.Severity)
	k := pick(src, c.Severity, [5]float64{0.95, 0.9, 0.85, 0.75, 0.65}, [5]float64{0.6, 0.5, 0.4, 0.3, 0.25})
	w, h := max(int(float64(src.W)*k), 1), max(int(float64(src.H)*k), 1)
	if src.W == 0 || src.H == 0 {
		return rgb.New(src.W, src.H)
	}
	return resizeBox(resizeBox(src, w, h), src.W, src.H)
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Pixelate) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// pilPrecision is Pillow's PRECISION_BITS for 8-bit images (32 − 8 − 2).
const pilPrecision = 22

// boxCoeffs are Pillow's precompute_coeffs for the box filter (support
// 0.5, box(x) = 1 for −0.5 < x ≤ 0.5) from in to out samples, normalised
// and rounded to fixed point (normalize_coeffs_8bpc): for each output
// sample, its first input index and its weights.
func boxCoeffs(in, out int) ([]int, [][]int32) {
	scale := float64(in) / float64(out)
	fscale := max(scale, 1)
	support := 0.5 * fscale
	starts := make([]int, out)
	ks := make([][]int32, out)
	for xx := 0; xx < out; xx++ {
		center := (float64(xx) + 0.5) * scale
		ss := 1 / fscale
		xmin := max(int(center-support+0.5), 0)
		xmax := min(int(center+support+0.5), in) - xmin
		w := make([]float64, xmax)
		ww := 0.0
		for x := range w {
			t := (float64(x+xmin) - center + 0.5) * ss
			if t > -0.5 && t <= 0.5 {
				w[x] = 1
			}
			ww += w[x]
		}
		k := make([]int32, xmax)
		for x := range w {
			if ww != 0 {
				w[x] /= ww
			}
			if w[x] < 0 {
				k[x] = int32(-0.5 + w[x]*(1<<pilPrecision))
			} else {
				k[x] = int32(0.5 + w[x]*(1<<pilPrecision))
			}
		}
		starts[xx], ks[xx] = xmin, k
	}
	return starts, ks
}

// resizeBox is Pillow's Image.resize((w, h), Image.BOX) of an RGB image:
// a horizontal pass (when the width changes) then a vertical one (when
// the height changes), each output (Σ v·k + 2^21) >> 22 clipped to a byte.
func resizeBox(src rgb.Image, w, h int) rgb.Image {
	img := src
	if w != src.W {
		starts, ks := boxCoeffs(src.W, w)
		dst := rgb.New(w, src.H)
		for y := 0; y < src.H; y++ {
			in := img.Pix[y*src.W*3:]
			out := dst.Pix[y*w*3:]
			for xx := 0; xx < w; xx++ {
				for c := 0; c < 3; c++ {
					s := int64(1) << (pilPrecision - 1)
					for x, k := range ks[xx] {
						s += int64(in[(starts[xx]+x)*3+c]) * int64(k)
					}
					out[xx*3+c] = clip8(s)
				}
			}
		}
		img = dst
	}
	if h != src.H {
		starts, ks := boxCoeffs(src.H, h)
		dst := rgb.New(w, h)
		n := w * 3
		for yy := 0; yy < h; yy++ {
			out := dst.Pix[yy*n : (yy+1)*n]
			for i := range out {
				s := int64(1) << (pilPrecision - 1)
				for y, k := range ks[yy] {
					s += int64(img.Pix[(starts[yy]+y)*n+i]) * int64(k)
				}
				out[i] = clip8(s)
			}
		}
		img = dst
	}
	if img.Pix == nil || (w == src.W && h == src.H) {
		return src.Clone()
	}
	return img
}

// clip8 is Pillow's clip8: a fixed-point sum >> 22, clipped to [0, 255].
func clip8(s int64) uint8 {
	return uint8(min(max(s>>pilPrecision, 0), 255))
}
