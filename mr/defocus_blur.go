package mr

import (
	"math"

	"github.com/amt-dev/amt/rgb"
)

// DefocusBlur is the defocus_blur corruption of ImageNet-C and
// CIFAR-10-C: each channel of v/255 is correlated (cv2.filter2D, border
// reflect-101) with the reference's disk(radius, alias_blur) kernel,
// then clipped, ×255 and truncated. The kernel is the indicator of
// X² + Y² ≤ radius² on the grid −8…8 (−radius…radius when radius > 8),
// in float32, divided by its sum, then blurred by cv2.GaussianBlur with
// a 3×3 kernel (5×5 when radius > 8) of σ alias_blur, border
// reflect-101. (radius, alias_blur) by severity 1–5 is (0.3, 0.4),
// (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1) for images of at most
// 32×32 (make_cifar_c.py) and (3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5),
// (10, 0.5) for larger ones (imagenet_c/corruptions.py). It does not
// move boxes.
type DefocusBlur struct{ Severity int }

// Name implements Relation ("defocus_blur:2").
func (c DefocusBlur) Name() string { return sevName("defocus_blur", c.Severity) }

// Apply implements Relation.
func (c DefocusBlur) Apply(src rgb.Image) rgb.Image {
	mustCorruption("defocus_blur", src, c.Severity)
	p := pick(src, c.Severity,
		[5][2]float64{{0.3, 0.4}, {0.4, 0.5}, {0.5, 0.6}, {1, 0.2}, {1.5, 0.1}},
		[5][2]float64{{3, 0.1}, {4, 0.5}, {6, 0.5}, {8, 0.5}, {10, 0.5}})
	if src.W == 0 || src.H == 0 {
		return rgb.New(src.W, src.H)
	}
	k, n := diskKernel(p[0], p[1])
	return fromUnit(src.W, src.H, filter2D(unit(src), src.W, src.H, k, n))
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (DefocusBlur) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// diskKernel is the reference's disk(radius, alias_blur) as an n×n
// float32 kernel, row-major.
func diskKernel(radius, aliasBlur float64) ([]float32, int) {
	half, ks := 8, 3
	if radius > 8 {
		half, ks = int(radius), 5
	}
	n := 2*half + 1
	d := make([]float32, n*n)
	var sum float32
	for y := -half; y <= half; y++ {
		for x := -half; x <= half; x++ {
			if float64(x*x+y*y) <= radius*radius {
				d[(y+half)*n+x+half] = 1
				sum++
			}
		}
	}
	for i := range d {
		d[i] /= sum
	}
	g := cvGaussianKernel(ks, aliasBlur)
	// cv2.GaussianBlur: the row filter, then the column filter, in float32,
	// border reflect-101, each the symmetric small filter
	// c·k0 + (left + right)·k1 (+ (left2 + right2)·k2).
	r := ks / 2
	tmp := make([]float32, n*n)
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			s := d[y*n+x] * g[r]
			for j := 1; j <= r; j++ {
				s += (d[y*n+reflect101Idx(x-j, n)] + d[y*n+reflect101Idx(x+j, n)]) * g[r+j]
			}
			tmp[y*n+x] = s
		}
	}
	out := make([]float32, n*n)
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			s := tmp[y*n+x] * g[r]
			for j := 1; j <= r; j++ {
				s += (tmp[reflect101Idx(y-j, n)*n+x] + tmp[reflect101Idx(y+j, n)*n+x]) * g[r+j]
			}
			out[y*n+x] = s
		}
	}
	return out, n
}

// cvGaussianKernel is OpenCV 4's getGaussianKernel(n, σ, CV_32F) for
// σ > 0 (getGaussianKernelBitExact): t_i = exp(−x²/(2σ²)) for
// x = i − (n−1)/2 in double, divided by their sum, then rounded to
// float32.
func cvGaussianKernel(n int, sigma float64) []float32 {
	scale2 := -0.125 / (sigma * sigma)
	t := make([]float64, n)
	sum := 0.0
	for i := range t {
		x := float64(2*i - (n - 1))
		t[i] = math.Exp(x * x * scale2)
		sum += t[i]
	}
	k := make([]float32, n)
	mul := 1 / sum
	for i := range k {
		k[i] = float32(t[i] * mul)
	}
	return k
}

// filter2D is cv2.filter2D(x, -1, k) of each channel of an h×w image of
// 3 interleaved float64 channels with an n×n kernel (anchor at its
// centre, correlation, border reflect-101). The disk kernels are
// symmetric about both axes, so taps (±dy, ±dx) are summed first and
// multiplied once; zero taps are skipped. (OpenCV itself correlates
// kernels this large through the DFT: the sums differ in the last bits.)
func filter2D(x []float64, w, h int, k []float32, n int) []float64 {
	r := n / 2
	at := func(dy, dx int) float32 { return k[(dy+r)*n+dx+r] }
	type tap struct {
		dy, dx int
		k      float64
	}
	var taps []tap
	symmetric := true
	for dy := 0; dy <= r; dy++ {
		for dx := 0; dx <= r; dx++ {
			v := at(dy, dx)
			if v != at(-dy, dx) || v != at(dy, -dx) || v != at(-dy, -dx) {
				symmetric = false
			}
			if v != 0 {
				taps = append(taps, tap{dy, dx, float64(v)})
			}
		}
	}
	if !symmetric {
		panic("mr: filter2D: kernel is not symmetric")
	}
	// Padded copy: the image with r reflected rows and columns around it,
	// so that every tap reads a plain offset.
	pw, ph := w+2*r, h+2*r
	pad := make([]float64, pw*ph*3)
	for y := 0; y < ph; y++ {
		sy := reflect101Idx(y-r, h)
		for xx := 0; xx < pw; xx++ {
			sx := reflect101Idx(xx-r, w)
			copy(pad[(y*pw+xx)*3:][:3], x[(sy*w+sx)*3:][:3])
		}
	}
	out := make([]float64, len(x))
	n3 := w * 3
	for y := 0; y < h; y++ {
		o := out[y*n3 : (y+1)*n3]
		for _, t := range taps {
			kv := t.k
			// Padded rows start r columns left of the image: column x ± dx
			// of the image is padded column x + r ± dx.
			up := pad[(y+r-t.dy)*pw*3:]
			dn := pad[(y+r+t.dy)*pw*3:]
			l, rr := (r-t.dx)*3, (r+t.dx)*3
			u0, u1 := up[l:][:n3], up[rr:][:n3]
			switch {
			case t.dy == 0 && t.dx == 0:
				for i := range o {
					o[i] += u0[i] * kv
				}
			case t.dy == 0:
				for i := range o {
					o[i] += (u0[i] + u1[i]) * kv
				}
			case t.dx == 0:
				d0 := dn[l:][:n3]
				for i := range o {
					o[i] += (u0[i] + d0[i]) * kv
				}
			default:
				d0, d1 := dn[l:][:n3], dn[rr:][:n3]
				for i := range o {
					o[i] += ((u0[i] + u1[i]) + (d0[i] + d1[i])) * kv
				}
			}
		}
	}
	return out
}
