package mr

import (
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// Snow is the snow corruption of ImageNet-C and CIFAR-10-C: with
// x = float32(v)/255 and parameters (μ, s, z, t, r, σ, b),
//
//  1. a snow layer N(μ, s²)^{H×W} (float64) is zoomed by z about its
//     centre (clipped_zoom, as in ZoomBlur but in float64), values below t
//     set to 0, then clipped to [0, 1], ×255 and truncated to 8 bits;
//  2. the layer is motion-blurred by ImageMagick's MotionBlurImage(r, σ,
//     angle) with angle uniform in [−135, −45) (see MotionBlur), then
//     /255;
//  3. x becomes b·x + (1−b)·max(x, 1.5·gray(x) + 0.5) in float32, gray
//     OpenCV's RGB2GRAY (0.299 R + 0.587 G + 0.114 B in float32);
//  4. out = x + layer + layer rotated by 180°, clipped, ×255, truncated.
//
// (μ, s, z, t, r, σ, b) by severity 1–5 is (0.1, 0.2, 1, 0.6, 8, 3, 0.95),
// (0.1, 0.2, 1, 0.5, 10, 4, 0.9), (0.15, 0.3, 1.75, 0.55, 10, 4, 0.9),
// (0.25, 0.3, 2.25, 0.6, 12, 6, 0.85), (0.3, 0.3, 1.25, 0.65, 14, 12, 0.8)
// for images of at most 32×32 (make_cifar_c.py) and
// (0.1, 0.3, 3, 0.5, 10, 4, 0.8), (0.2, 0.3, 2, 0.5, 12, 4, 0.7),
// (0.55, 0.3, 4, 0.9, 12, 8, 0.7), (0.55, 0.3, 4.5, 0.85, 12, 8, 0.65),
// (0.55, 0.3, 2.5, 0.85, 12, 12, 0.55) for larger ones
// (imagenet_c/corruptions.py). Against the reference itself (ImageMagick
// 6.9.11, OpenCV 4.6; testdata/corruptions/check_reference.py) at most
// 0.002 % of the values differ, by 1 level. It is Random: the layer's
// normals row-major, then the angle's uniform. It does not move boxes.
type Snow struct{ Severity int }

// Name implements Relation ("snow:2").
func (c Snow) Name() string { return sevName("snow", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c Snow) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c Snow) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image { return c.apply(src, rngDraws{rng}) }

func (c Snow) apply(src rgb.Image, d draws) rgb.Image {
	mustCorruption("snow", src, c.Severity)
	p := pick(src, c.Severity,
		[5][7]float64{{0.1, 0.2, 1, 0.6, 8, 3, 0.95}, {0.1, 0.2, 1, 0.5, 10, 4, 0.9}, {0.15, 0.3, 1.75, 0.55, 10, 4, 0.9}, {0.25, 0.3, 2.25, 0.6, 12, 6, 0.85}, {0.3, 0.3, 1.25, 0.65, 14, 12, 0.8}},
		[5][7]float64{{0.1, 0.3, 3, 0.5, 10, 4, 0.8}, {0.2, 0.3, 2, 0.5, 12, 4, 0.7}, {0.55, 0.3, 4, 0.9, 12, 8, 0.7}, {0.55, 0.3, 4.5, 0.85, 12, 8, 0.65}, {0.55, 0.3, 2.5, 0.85, 12, 12, 0.55}})
	w, h := src.W, src.H
	if w == 0 || h == 0 {
		return rgb.New(w, h)
	}
	// 1. The layer.
	layer := clippedZoom64(normals(w*h, p[0], p[1], d), w, h, p[2])
	flakes := make([]uint8, w*h)
	for i, v := range layer {
		if v < p[3] {
			v = 0
		}
		flakes[i] = uint8(min(max(v, 0), 1) * 255)
	}
	// 2. Motion blur.
	angle := -135 + 90*d.Uniform()
	blurred := make([]uint8, w*h)
	magickMotionBlur(blurred, flakes, w, h, 1, p[4], p[5], angle)
	// 3 and 4.
	b := float32(p[6])
	nb := float32(1 - p[6])
	dst := rgb.New(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			px := src.Pix[i*3:]
			r, g, bl := float32(px[0])/255, float32(px[1])/255, float32(px[2])/255
			gray := r*0.299 + g*0.587 + bl*0.114
			gray = gray*1.5 + 0.5
			s1, s2 := float64(blurred[i])/255, float64(blurred[(h-1-y)*w+(w-1-x)])/255
			for c, v := range [3]float32{r, g, bl} {
				v = b*v + nb*max(v, gray)
				dst.Pix[i*3+c] = toByte((float64(v) + s1) + s2)
			}
		}
	}
	return dst
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Snow) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// clippedZoom64 is the reference's clipped_zoom(layer, z) of a
// single-channel float64 w×h layer (scipy.ndimage.zoom, order 1, in
// float64; see ZoomBlur).
func clippedZoom64(x []float64, w, h int, z float64) []float64 {
	ay, ax := newZoomAxis(h, z), newZoomAxis(w, z)
	out := make([]float64, len(x))
	for y := 0; y < h; y++ {
		r0, r1 := x[ay.lo[y]*w:], x[ay.hi[y]*w:]
		wy0, wy1 := ay.w0[y], ay.w1[y]
		for xx := 0; xx < w; xx++ {
			l, r := ax.lo[xx], ax.hi[xx]
			wx0, wx1 := ax.w0[xx], ax.w1[xx]
			out[y*w+xx] = r0[l]*wy0*wx0 + r0[r]*wy0*wx1 + r1[l]*wy1*wx0 + r1[r]*wy1*wx1
		}
	}
	return out
}
