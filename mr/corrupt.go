package mr

import (
	"math"

	"github.com/amt-dev/amt/rgb"
)

// The helpers of the corruptions: the reference (hendrycks/robustness,
// ImageNet-C/create_c/make_cifar_c.py and imagenet_c/corruptions.py)
// works on float images in [0, 1] (np.array(x) / 255.) and ends with
// np.uint8(np.clip(x, 0, 1) * 255), which truncates; these do the same
// in the same order of operations.

// unit returns src's values as v/255 in float64, interleaved like Pix.
func unit(src rgb.Image) []float64 {
	out := make([]float64, len(src.Pix))
	for i, v := range src.Pix {
		out[i] = float64(v) / 255
	}
	return out
}

// toByte is np.uint8(np.clip(v, 0, 1) * 255): clip, scale, truncate.
func toByte(v float64) uint8 {
	return uint8(min(max(v, 0), 1) * 255)
}

// toByte32 is toByte in float32.
func toByte32(v float32) uint8 {
	return uint8(min(max(v, 0), 1) * 255)
}

// fromUnit returns the w×h image of np.uint8(np.clip(vals, 0, 1) * 255).
func fromUnit(w, h int, vals []float64) rgb.Image {
	dst := rgb.New(w, h)
	for i, v := range vals {
		dst.Pix[i] = toByte(v)
	}
	return dst
}

// mapUnit returns the image of np.uint8(np.clip(f(x), 0, 1) * 255) for
// every channel value x = v/255 of src, called in Pix order (the order
// in which the noise corruptions draw).
func mapUnit(src rgb.Image, f func(x float64) float64) rgb.Image {
	dst := rgb.New(src.W, src.H)
	for i, v := range src.Pix {
		dst.Pix[i] = toByte(f(float64(v) / 255))
	}
	return dst
}

// fromUnit32 is fromUnit for float32 values.
func fromUnit32(w, h int, vals []float32) rgb.Image {
	dst := rgb.New(w, h)
	for i, v := range vals {
		dst.Pix[i] = toByte32(v)
	}
	return dst
}

// gaussKernel is SciPy's _gaussian_kernel1d (scipy.ndimage 1.10) for
// order 0: exp(−x²/(2σ²)) for x in [−r, r], r = int(truncate·σ + 0.5),
// divided by its sum. It returns the half kernel k[0…r] (symmetric).
func gaussKernel(sigma, truncate float64) []float64 {
	r := int(truncate*sigma + 0.5)
	full := make([]float64, 2*r+1)
	s2 := sigma * sigma
	for i := range full {
		x := float64(i - r)
		full[i] = math.Exp(-0.5 / s2 * (x * x))
	}
	sum := npSum(full)
	half := make([]float64, r+1)
	for i := range half {
		half[i] = full[r+i] / sum
	}
	return half
}

// npSum is numpy's pairwise sum of a contiguous float64 array as far as
// 128 values (eight partial sums, combined pairwise); beyond that it
// halves, as numpy does.
func npSum(a []float64) float64 {
	n := len(a)
	if n < 8 {
		s := 0.0
		for _, v := range a {
			s += v
		}
		return s
	}
	if n <= 128 {
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += a[i+j]
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += a[i]
		}
		return s
	}
	m := n / 2
	m -= m % 8
	return npSum(a[:m]) + npSum(a[m:])
}

// clampIdx is scipy.ndimage's mode "nearest" (and OpenCV's
// BORDER_REPLICATE): an index outside [0, n) is the nearest edge.
func clampIdx(i, n int) int { return min(max(i, 0), n-1) }

// reflect101Idx is OpenCV's BORDER_REFLECT_101 (d c b | a b c d | c b a)
// for any i.
func reflect101Idx(i, n int) int {
	if n == 1 {
		return 0
	}
	p := 2*n - 2
	i %= p
	if i < 0 {
		i += p
	}
	if i >= n {
		i = p - i
	}
	return i
}

// gaussianFilter is skimage.filters.gaussian(x, sigma, multichannel=True)
// of an h×w image with ch interleaved channels: scipy.ndimage's
// gaussian_filter with sigma (σ, σ, 0), mode "nearest", truncate 4, which
// correlates along the rows (axis 0) and then along the columns (axis 1)
// in float64, each output tmp = c·k0, then tmp += (left + right)·k_j for j
// from the kernel's edge inwards (NI_Correlate1D's symmetric branch).
func gaussianFilter(x []float64, w, h, ch int, sigma float64) []float64 {
	return gaussianFilterMode(x, w, h, ch, sigma, 4, clampIdx)
}

// gaussianFilterMode is gaussianFilter with a truncation and border mode.
func gaussianFilterMode(x []float64, w, h, ch int, sigma, truncate float64, border func(i, n int) int) []float64 {
	k := gaussKernel(sigma, truncate)
	r := len(k) - 1
	if 2*r+1 > max(w, h) {
		return newFoldedGauss(w, h, k, border).apply(x, ch)
	}
	tmp := make([]float64, len(x))
	row := w * ch
	// Axis 0: along y.
	for y := 0; y < h; y++ {
		out := tmp[y*row : (y+1)*row]
		c := x[y*row : (y+1)*row]
		for i := range out {
			out[i] = c[i] * k[0]
		}
		for j := r; j >= 1; j-- {
			up := x[border(y-j, h)*row:][:row]
			dn := x[border(y+j, h)*row:][:row]
			kj := k[j]
			for i := range out {
				out[i] += (up[i] + dn[i]) * kj
			}
		}
	}
	// Axis 1: along x, per channel.
	dst := make([]float64, len(x))
	idx := make([]int, w+2*r)
	for i := range idx {
		idx[i] = border(i-r, w) * ch
	}
	for y := 0; y < h; y++ {
		in := tmp[y*row : (y+1)*row]
		out := dst[y*row : (y+1)*row]
		for xx := 0; xx < w; xx++ {
			for c := 0; c < ch; c++ {
				s := in[xx*ch+c] * k[0]
				for j := r; j >= 1; j-- {
					s += (in[idx[xx+r-j]+c] + in[idx[xx+r+j]+c]) * k[j]
				}
				out[xx*ch+c] = s
			}
		}
	}
	return dst
}

// foldedGauss is gaussianFilterMode for kernels wider than the image
// (elastic_transform's σ of 171 pixels at 224×224): along each axis the
// kernel is folded through the border into an n×n matrix, weight (i, m)
// the sum of the taps that read sample m for output i, and each pass is a
// matrix product, n² per line instead of 2r+1 per sample. The sums are
// ordered differently from SciPy's (last-bit differences).
type foldedGauss struct {
	w, h   int
	fy, ft []float64 // h×h; w×w transposed
}

// newFoldedGauss folds the half kernel k for a w×h image.
func newFoldedGauss(w, h int, k []float64, border func(i, n int) int) foldedGauss {
	r := len(k) - 1
	fold := func(n int) []float64 {
		m := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := -r; j <= r; j++ {
				m[i*n+border(i+j, n)] += k[max(j, -j)]
			}
		}
		return m
	}
	g := foldedGauss{w: w, h: h, fy: fold(h), ft: make([]float64, w*w)}
	// Transposed: column m of the folded matrix is contiguous, so both
	// passes are axpy loops.
	fx := fold(w)
	for i := 0; i < w; i++ {
		for m := 0; m < w; m++ {
			g.ft[m*w+i] = fx[i*w+m]
		}
	}
	return g
}

// apply filters x (ch interleaved channels) along y, then along x.
func (g foldedGauss) apply(x []float64, ch int) []float64 {
	w, h, fy, ft := g.w, g.h, g.fy, g.ft
	row := w * ch
	tmp := make([]float64, len(x))
	for y := 0; y < h; y++ {
		out := tmp[y*row : (y+1)*row]
		m := 0
		// Four input rows at a time: one load and store of out per four
		// products.
		for ; m+4 <= h; m += 4 {
			w0, w1, w2, w3 := fy[y*h+m], fy[y*h+m+1], fy[y*h+m+2], fy[y*h+m+3]
			in0, in1 := x[m*row:(m+1)*row], x[(m+1)*row:(m+2)*row]
			in2, in3 := x[(m+2)*row:(m+3)*row], x[(m+3)*row:(m+4)*row]
			for i := range out {
				out[i] += (w0*in0[i] + w1*in1[i]) + (w2*in2[i] + w3*in3[i])
			}
		}
		for ; m < h; m++ {
			wt := fy[y*h+m]
			in := x[m*row : (m+1)*row]
			for i := range out {
				out[i] += wt * in[i]
			}
		}
	}
	dst := make([]float64, len(x))
	for y := 0; y < h; y++ {
		in := tmp[y*row : (y+1)*row]
		out := dst[y*row : (y+1)*row]
		if ch == 1 {
			m := 0
			for ; m+4 <= w; m += 4 {
				v0, v1, v2, v3 := in[m], in[m+1], in[m+2], in[m+3]
				c0, c1 := ft[m*w:(m+1)*w], ft[(m+1)*w:(m+2)*w]
				c2, c3 := ft[(m+2)*w:(m+3)*w], ft[(m+3)*w:(m+4)*w]
				for xx := range out {
					out[xx] += (c0[xx]*v0 + c1[xx]*v1) + (c2[xx]*v2 + c3[xx]*v3)
				}
			}
			for ; m < w; m++ {
				v := in[m]
				for xx, wt := range ft[m*w : (m+1)*w] {
					out[xx] += wt * v
				}
			}
			continue
		}
		for c := 0; c < ch; c++ {
			for m := 0; m < w; m++ {
				v := in[m*ch+c]
				col := ft[m*w : (m+1)*w]
				for xx, wt := range col {
					out[xx*ch+c] += wt * v
				}
			}
		}
	}
	return dst
}

// rgb2hsv is skimage.color.rgb2hsv of one pixel in [0, 1]: V is the
// largest channel, S = (max−min)/V (0 when max = min), H from the largest
// channel (blue over green over red on ties), /6 modulo 1.
func rgb2hsv(r, g, b float64) (h, s, v float64) {
	v = max(r, g, b)
	delta := v - min(r, g, b)
	if delta == 0 {
		return 0, 0, v
	}
	s = delta / v
	switch {
	case b == v:
		h = 4 + (r-g)/delta
	case g == v:
		h = 2 + (b-r)/delta
	default:
		h = (g - b) / delta
	}
	h = pyMod(h/6, 1)
	return h, s, v
}

// pyMod is Python's float a % b for b > 0 (the sign of b).
func pyMod(a, b float64) float64 {
	m := math.Mod(a, b)
	if m != 0 && m < 0 {
		m += b
	}
	return m
}

// hsv2rgb is skimage.color.hsv2rgb of one pixel: sector i = floor(6h)
// mod 6, f = 6h − floor(6h), p = v(1−s), q = v(1−fs), t = v(1−(1−f)s).
func hsv2rgb(h, s, v float64) (r, g, b float64) {
	hi := math.Floor(h * 6)
	f := h*6 - hi
	p := v * (1 - s)
	q := v * (1 - f*s)
	t := v * (1 - (1-f)*s)
	switch int(hi) % 6 {
	case 0:
		return v, t, p
	case 1:
		return q, v, p
	case 2:
		return p, v, t
	case 3:
		return p, q, v
	case 4:
		return t, p, v
	default:
		return v, p, q
	}
}
