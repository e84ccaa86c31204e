package mr

import (
	"math"

	"github.com/amt-dev/amt/rgb"
)

// ZoomBlur is the zoom_blur corruption of ImageNet-C and CIFAR-10-C: with
// x = float32(v/255), the mean of x and of clipped_zoom(x, z) for every
// factor z of np.arange(1, stop, step) — summed and divided in float32 —
// clipped, ×255 and truncated. clipped_zoom crops the central
// ceil(n/z) samples of each axis, zooms them by z with
// scipy.ndimage.zoom(order=1) (linear, output size round(n'·z), sample i
// at input coordinate i·(n'−1)/(size−1), computed in double and stored as
// float32) and trims the result to the central n. (stop, step) by
// severity 1–5 is (1.06, 0.01), (1.11, 0.01), (1.16, 0.01),
// (1.21, 0.01), (1.26, 0.01) for images of at most 32×32
// (make_cifar_c.py) and (1.11, 0.01), (1.16, 0.01), (1.21, 0.02),
// (1.26, 0.02), (1.31, 0.03) for larger ones (imagenet_c/corruptions.py).
// The reference crops both axes by the height (its images are square);
// amt crops each axis by its own length, the same for square images. It
// does not move boxes.
type ZoomBlur struct{ Severity int }

// Name implements Relation ("zoom_blur:2").
func (c ZoomBlur) Name() string { return sevName("zoom_blur", c.Severity) }

// Apply implements Relation.
func (c ZoomBlur) Apply(src rgb.Image) rgb.Image {
	mustCorruption("zoom_blur", src, c.Severity)
	p := pick(src, c.Severity,
		[5][2]float64{{1.06, .01}, {1.11, .01}, {1.16, .01}, {1.21, .01}, {1.26, .01}},
		[5][2]float64{{1.11, .01}, {1.16, .01}, {1.21, .02}, {1.26, .02}, {1.31, .03}})
	w, h := src.W, src.H
	if w == 0 || h == 0 {
		return rgb.New(w, h)
	}
	x := make([]float32, len(src.Pix))
	for i, v := range src.Pix {
		x[i] = float32(float64(v) / 255)
	}
	zs := arange(1, p[0], p[1])
	out := make([]float32, len(x))
	for _, z := range zs {
		clippedZoomAdd(out, x, w, h, z)
	}
	n := float32(len(zs) + 1)
	for i := range out {
		out[i] = (x[i] + out[i]) / n
	}
	return fromUnit32(w, h, out)
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (ZoomBlur) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// arange is np.arange(start, stop, step) for floats: ceil((stop −
// start)/step) values start + i·delta, delta = (start + step) − start.
func arange(start, stop, step float64) []float64 {
	n := int(math.Ceil((stop - start) / step))
	delta := (start + step) - start
	out := make([]float64, n)
	for i := range out {
		out[i] = start + float64(i)*delta
	}
	if n > 0 {
		out[0] = start
	}
	return out
}

// zoomAxis is one axis of clipped_zoom by z: for each of the n output
// samples, the input index of its lower neighbour (in the full axis) and
// its weights (1−t, t), as scipy.ndimage.zoom(order=1) computes them for
// the central crop.
type zoomAxis struct {
	lo, hi []int
	w0, w1 []float64
}

func newZoomAxis(n int, z float64) zoomAxis {
	cn := int(math.Ceil(float64(n) / z))
	top := (n - cn) / 2
	size := int(math.RoundToEven(float64(cn) * z))
	zoom := 1.0
	if size > 1 {
		zoom = float64(cn-1) / float64(size-1)
	}
	trim := (size - n) / 2
	a := zoomAxis{lo: make([]int, n), hi: make([]int, n), w0: make([]float64, n), w1: make([]float64, n)}
	for i := 0; i < n; i++ {
		cc := float64(i+trim) * zoom
		s := int(math.Floor(cc))
		t := cc - float64(s)
		a.lo[i] = top + min(s, cn-1)
		a.hi[i] = top + min(s+1, cn-1)
		a.w0[i], a.w1[i] = 1-t, t
	}
	return a
}

// clippedZoomAdd adds clipped_zoom(x, z) to out in float32 (out +=
// clipped_zoom(x, z)). Each sample is Σ v·wy·wx over its 2×2
// neighbours in double, rounded to float32.
func clippedZoomAdd(out, x []float32, w, h int, z float64) {
	ay, ax := newZoomAxis(h, z), newZoomAxis(w, z)
	for y := 0; y < h; y++ {
		r0 := x[ay.lo[y]*w*3:]
		r1 := x[ay.hi[y]*w*3:]
		wy0, wy1 := ay.w0[y], ay.w1[y]
		o := out[y*w*3:]
		for xx := 0; xx < w; xx++ {
			l, r := ax.lo[xx]*3, ax.hi[xx]*3
			wx0, wx1 := ax.w0[xx], ax.w1[xx]
			for c := 0; c < 3; c++ {
				v := float64(r0[l+c])*wy0*wx0 + float64(r0[r+c])*wy0*wx1 +
					float64(r1[l+c])*wy1*wx0 + float64(r1[r+c])*wy1*wx1
				o[xx*3+c] += float32(v)
			}
		}
	}
}
