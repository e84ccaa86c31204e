// Package preprocess turns RGB images into model inputs exactly as the
// original Python pipeline did: Pillow 9.4's bilinear resize on uint8
// images, torchvision's ToTensor + Normalize in float32, and the
// yolov3-tiny letterbox. Every function is bit-exact with the reference
// libraries (see the tests against the golden files).
//
// Functions that fill model inputs write into caller-provided float32
// buffers in CHW layout, so a whole batch can be filled without allocating.
package preprocess

import (
	"fmt"
	"math"

	"github.com/amt-dev/amt/rgb"
)

// precisionBits is Pillow's PRECISION_BITS for 8-bit resampling (32−8−2).
const precisionBits = 22

// coeffs are the fixed-point filter taps of one resampling axis: output
// index i reads in[start[i] : start[i]+n[i]] with weights k[i*ksize:].
type coeffs struct {
	start, n []int
	k        []int32
	ksize    int
}

// Filter is one of Pillow's resampling filters.
type Filter int

const (
	// Bilinear is Pillow's BILINEAR: a triangle of support 1.
	Bilinear Filter = iota
	// Lanczos is Pillow's LANCZOS (ANTIALIAS): sinc(x)·sinc(x/3) on [−3, 3).
	Lanczos
)

// support returns the filter's support at scale 1.
func (f Filter) support() float64 {
	if f == Lanczos {
		return 3
	}
	return 1
}

// weight evaluates the filter at x.
func (f Filter) weight(x float64) float64 {
	if f == Lanczos {
		if -3 <= x && x < 3 {
			return sinc(x) * sinc(x/3)
		}
		return 0
	}
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return 1 - x
	}
	return 0
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

// bilinearCoeffs returns the bilinear taps of one axis.
func bilinearCoeffs(inSize, outSize int) coeffs { return precomputeCoeffs(inSize, outSize, Bilinear) }

// precomputeCoeffs reproduces Pillow 9.4's precompute_coeffs with filter f
// over the box [0, inSize), followed by normalize_coeffs_8bpc.
func precomputeCoeffs(inSize, outSize int, f Filter) coeffs {
	scale := float64(inSize) / float64(outSize)
	filterscale := max(scale, 1.0)
	support := f.support() * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	c := coeffs{start: make([]int, outSize), n: make([]int, outSize), k: make([]int32, outSize*ksize), ksize: ksize}
	ss := 1.0 / filterscale
	w := make([]float64, ksize)
	for o := 0; o < outSize; o++ {
		center := float64(float64(o)+0.5) * scale
		xmin := max(int(center-support+0.5), 0) // C (int) truncates toward zero, as Go's does
		xmax := min(int(center+support+0.5), inSize) - xmin
		var ww float64
		for x := 0; x < xmax; x++ {
			w[x] = f.weight(float64(float64(x+xmin)-center+0.5) * ss)
			ww += w[x]
		}
		k := c.k[o*ksize : (o+1)*ksize]
		for x := 0; x < xmax; x++ {
			v := w[x]
			if ww != 0 {
				v /= ww
			}
			if v < 0 {
				k[x] = int32(-0.5 + v*(1<<precisionBits))
			} else {
				k[x] = int32(0.5 + v*(1<<precisionBits))
			}
		}
		c.start[o], c.n[o] = xmin, xmax
	}
	return c
}

// clip8 is Pillow's clip8: the fixed-point sum shifted down and clamped.
// Sums fit in int32 as in Pillow: the weights of one output add up to
// about 2^22 (their absolute values to less than 1.3·2^22 for Lanczos).
func clip8(v int32) uint8 {
	v >>= precisionBits
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// Resize returns src resized to w×h like Pillow 9.4's
// Image.resize((w, h), Image.BILINEAR) on an 8-bit RGB image, bit for bit:
// a separable, antialiased triangle filter (support max(in/out, 1) per
// axis) in 22-bit fixed point, horizontal pass first with its result
// rounded to uint8, each pass skipped when that dimension does not change.
// Resizing to the same size returns a copy. It panics if w or h is less
// than 1, if src is empty or if src is not a valid image; use
// CheckResize to validate sizes coming from users.
func Resize(src rgb.Image, w, h int) rgb.Image {
	if err := CheckResize(src, w, h); err != nil {
		panic(err.Error())
	}
	if w == src.W && h == src.H {
		return src.Clone()
	}
	img := src
	if w != src.W {
		img = resizeH(img, w)
	}
	if h != src.H {
		img = resizeV(img, h)
	}
	return img
}

// CheckResize reports whether Resize(src, w, h) is defined: src must be a
// valid non-empty image and w, h at least 1.
func CheckResize(src rgb.Image, w, h int) error {
	if err := src.Validate(); err != nil {
		return fmt.Errorf("preprocess: resize: %w", err)
	}
	if src.W == 0 || src.H == 0 {
		return fmt.Errorf("preprocess: resize: source image is empty (%dx%d)", src.W, src.H)
	}
	if w < 1 || h < 1 {
		return fmt.Errorf("preprocess: resize: target size %dx%d must be at least 1x1", w, h)
	}
	return nil
}

// resizeH resamples every row of src to width w.
func resizeH(src rgb.Image, w int) rgb.Image {
	c := bilinearCoeffs(src.W, w)
	dst := rgb.New(w, src.H)
	safe := c.simdPrefix(src.W)
	for y := 0; y < src.H; y++ {
		in := src.Pix[y*src.W*3 : (y+1)*src.W*3]
		out := dst.Pix[y*w*3 : (y+1)*w*3]
		hsumGo(out, in, &c, hsumSIMD(out, in, &c, safe))
	}
	return dst
}

// simdPrefix returns how many leading output pixels of a row of inW input
// pixels the SIMD loop of hsum may compute: it reads and writes 4 bytes
// per pixel, so it leaves to hsumGo the last output pixel and those from
// the first that reads the last input pixel on.
func (c *coeffs) simdPrefix(inW int) int {
	safe := 0
	for safe < len(c.start)-1 && c.start[safe]+c.n[safe] < inW {
		safe++
	}
	return safe
}

// hsumGo computes output pixels [o0, len(out)/3) of a row: each channel of
// pixel o is clip8(half + Σ_j in[start[o]+j]·k[o·ksize+j]).
func hsumGo(out, in []uint8, c *coeffs, o0 int) {
	const half = 1 << (precisionBits - 1)
	for o := o0; o < len(out)/3; o++ {
		k := c.k[o*c.ksize : o*c.ksize+c.n[o]]
		p := in[c.start[o]*3 : (c.start[o]+len(k))*3]
		s0, s1, s2 := int32(half), int32(half), int32(half)
		for j, kv := range k {
			q := p[j*3 : j*3+3 : j*3+3]
			s0 += int32(q[0]) * kv
			s1 += int32(q[1]) * kv
			s2 += int32(q[2]) * kv
		}
		d := out[o*3 : o*3+3 : o*3+3]
		d[0], d[1], d[2] = clip8(s0), clip8(s1), clip8(s2)
	}
}

// resizeV resamples every column of src to height h.
func resizeV(src rgb.Image, h int) rgb.Image {
	c := bilinearCoeffs(src.H, h)
	dst := rgb.New(src.W, h)
	stride := src.W * 3
	offs := make([]int, c.ksize)
	for o := 0; o < h; o++ {
		k := c.k[o*c.ksize : o*c.ksize+c.n[o]]
		for j := range k {
			offs[j] = (c.start[o] + j) * stride
		}
		out := dst.Pix[o*stride:][:stride]
		vsumGo(out, src.Pix, offs[:len(k)], k, vsumSIMD(out, src.Pix, offs, k))
	}
	return dst
}

// vsumGo computes bytes [i0, len(out)) of a weighted sum of rows:
// out[i] = clip8(half + Σ_j src[offs[j]+i]·k[j]).
func vsumGo(out, src []uint8, offs []int, k []int32, i0 int) {
	const half = 1 << (precisionBits - 1)
	n := len(out)
	switch len(k) {
	case 2:
		r0, r1, k0, k1 := src[offs[0]:][:n], src[offs[1]:][:n], k[0], k[1]
		for i := i0; i < n; i++ {
			out[i] = clip8(half + int32(r0[i])*k0 + int32(r1[i])*k1)
		}
	case 3:
		r0, r1, r2, k0, k1, k2 := src[offs[0]:][:n], src[offs[1]:][:n], src[offs[2]:][:n], k[0], k[1], k[2]
		for i := i0; i < n; i++ {
			out[i] = clip8(half + int32(r0[i])*k0 + int32(r1[i])*k1 + int32(r2[i])*k2)
		}
	default:
		for i := i0; i < n; i++ {
			s := int32(half)
			for j, kv := range k {
				s += int32(src[offs[j]+i]) * kv
			}
			out[i] = clip8(s)
		}
	}
}

// ShorterSide returns the size torchvision's Resize(size) gives a w×h
// image: the shorter side becomes size and the longer side
// int(size·long/short), so with size 224 a square image becomes 224×224 and
// a 640×480 image 298×224. w, h and size must be positive.
func ShorterSide(w, h, size int) (int, int) {
	if w <= h {
		return size, int(float64(size*h) / float64(w))
	}
	return int(float64(size*w) / float64(h)), size
}

// ResizeGray resizes a single-channel (Pillow mode "L") w×h image, stored
// row-major in src, to ow×oh as Pillow 9.4's Image.resize((ow, oh), f)
// does, bit for bit: horizontal pass first, rounded to uint8, then the
// vertical pass; an axis whose size does not change is not resampled. It
// panics if len(src) != w·h or a size is less than 1.
func ResizeGray(src []uint8, w, h, ow, oh int, f Filter) []uint8 {
	if w < 1 || h < 1 || ow < 1 || oh < 1 || len(src) != w*h {
		panic(fmt.Sprintf("preprocess: ResizeGray: %d bytes for %dx%d → %dx%d", len(src), w, h, ow, oh))
	}
	const half = 1 << (precisionBits - 1)
	if w != ow {
		c := precomputeCoeffs(w, ow, f)
		tmp := make([]uint8, ow*h)
		for y := 0; y < h; y++ {
			row := src[y*w : (y+1)*w]
			for x := 0; x < ow; x++ {
				k := c.k[x*c.ksize : x*c.ksize+c.n[x]]
				in := row[c.start[x]:]
				s := int32(half)
				for j, kv := range k {
					s += int32(in[j]) * kv
				}
				tmp[y*ow+x] = clip8(s)
			}
		}
		src, w = tmp, ow
	}
	if h != oh {
		c := precomputeCoeffs(h, oh, f)
		tmp := make([]uint8, w*oh)
		for y := 0; y < oh; y++ {
			k := c.k[y*c.ksize : y*c.ksize+c.n[y]]
			for x := 0; x < w; x++ {
				s := int32(half)
				for j, kv := range k {
					s += int32(src[(c.start[y]+j)*w+x]) * kv
				}
				tmp[y*w+x] = clip8(s)
			}
		}
		src = tmp
	}
	return src
}
