package mr

import (
	"math"
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// Spatter is the spatter corruption of ImageNet-C and CIFAR-10-C (one of
// the four extra corruptions): with x = float32(v)/255 and parameters
// (μ, s, σ, t, k, mud), a liquid layer L = skimage's Gaussian of σ
// (mode "nearest", truncate 4) of N(μ, s²)^{H×W}, with values below t set
// to 0; then
//
//   - water (mud = 0): the layer as bytes (uint8(L·255), wrapping as numpy's
//     cast does), its OpenCV Canny edges (thresholds 50, 150, 3×3 Sobel,
//     L1 gradient), the distance to the nearest edge (cv2.distanceTransform,
//     DIST_L2, 5×5 mask: steps 1, 1.4, 2.1969 in 16-bit fixed point)
//     truncated at 20, a 3×3 box blur (float32, reflect-101) truncated to
//     bytes, cv2.equalizeHist, the 3×3 emboss kernel
//     [[−2,−1,0],[−1,1,1],[0,1,2]] (saturated to bytes, reflect-101) and
//     another 3×3 box blur (bytes, OpenCV's fixed-point division by 9) give
//     a float32 mask m = L8·dist, scaled to maximum k; the pale turquoise
//     (175, 238, 238)/255 is added in proportion m;
//   - mud (mud = 1): m = Gaussian of σ = k of the indicator L > t, values
//     below 0.8 set to 0; x becomes x·(1−m) + (63, 42, 20)/255·m;
//
// then clipped, ×255 (float32) and truncated. (μ, s, σ, t, k, mud) by
// severity 1–5 is (0.62, 0.1, 0.7, 0.7, 0.5, 0), (0.65, 0.1, 0.8, 0.7,
// 0.5, 0), (0.65, 0.3, 1, 0.69, 0.5, 0), (0.65, 0.1, 0.7, 0.69, 0.6, 1),
// (0.65, 0.1, 0.5, 0.68, 0.6, 1) for images of at most 32×32
// (make_cifar_c.py) and (0.65, 0.3, 4, 0.69, 0.6, 0), (0.65, 0.3, 3, 0.68,
// 0.6, 0), (0.65, 0.3, 2, 0.68, 0.5, 0), (0.65, 0.3, 1, 0.65, 1.5, 1),
// (0.67, 0.4, 1, 0.65, 1.5, 1) for larger ones (imagenet_c/corruptions.py).
// The OpenCV steps are restated from OpenCV 4's algorithms; against the
// reference run with OpenCV 4.6 (testdata/corruptions/check_reference.py)
// at most 0.01 % of the values differ, by 1 level. It is Random: the layer's normals,
// row-major. It does not move boxes.
type Spatter struct{ Severity int }

// Name implements Relation ("spatter:2").
func (c Spatter) Name() string { return sevName("spatter", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c Spatter) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c Spatter) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image {
	return c.apply(src, rngDraws{rng})
}

func (c Spatter) apply(src rgb.Image, d draws) rgb.Image {
	mustCorruption("spatter", src, c.Severity)
	p := pick(src, c.Severity,
		[5][6]float64{{0.62, 0.1, 0.7, 0.7, 0.5, 0}, {0.65, 0.1, 0.8, 0.7, 0.5, 0}, {0.65, 0.3, 1, 0.69, 0.5, 0}, {0.65, 0.1, 0.7, 0.69, 0.6, 1}, {0.65, 0.1, 0.5, 0.68, 0.6, 1}},
		[5][6]float64{{0.65, 0.3, 4, 0.69, 0.6, 0}, {0.65, 0.3, 3, 0.68, 0.6, 0}, {0.65, 0.3, 2, 0.68, 0.5, 0}, {0.65, 0.3, 1, 0.65, 1.5, 1}, {0.67, 0.4, 1, 0.65, 1.5, 1}})
	w, h := src.W, src.H
	if w == 0 || h == 0 {
		return rgb.New(w, h)
	}
	liquid := gaussianFilter(normals(w*h, p[0], p[1], d), w, h, 1, p[2])
	for i, v := range liquid {
		if v < p[3] {
			liquid[i] = 0
		}
	}
	dst := rgb.New(w, h)
	if p[5] == 0 {
		l8 := make([]uint8, w*h)
		for i, v := range liquid {
			l8[i] = uint8(int64(v * 255))
		}
		edges := canny(l8, w, h, 50, 150)
		dist := make([]uint8, w*h)
		for i, e := range edges {
			dist[i] = 255 - e
		}
		df := distanceL2Mask5(dist, w, h)
		for i, v := range df {
			df[i] = min(v, 20)
		}
		b8 := boxBlur3F32(df, w, h)
		eq := equalizeHist(b8)
		emb := filter3x3U8(eq, w, h, [9]int32{-2, -1, 0, -1, 1, 1, 0, 1, 2})
		blur := boxBlur3U8(emb, w, h)
		m := make([]float32, w*h)
		var mx float32
		for i := range m {
			m[i] = float32(l8[i]) * float32(blur[i])
			mx = max(mx, m[i])
		}
		k := float32(p[4])
		color := [3]float32{175.0 / 255, 238.0 / 255, 238.0 / 255}
		if mx == 0 {
			// No liquid: the reference divides 0 by 0, and np.uint8 of
			// its NaNs is 0.
			return dst
		}
		for i, v := range m {
			mi := v / mx * k
			for ch := 0; ch < 3; ch++ {
				x := float32(src.Pix[i*3+ch]) / 255
				dst.Pix[i*3+ch] = toByte32(x + mi*color[ch])
			}
		}
		return dst
	}
	ind := make([]float64, w*h)
	for i, v := range liquid {
		if v > p[3] {
			ind[i] = 1
		}
	}
	m := gaussianFilter(ind, w, h, 1, p[4])
	color := [3]float32{63.0 / 255, 42.0 / 255, 20.0 / 255}
	for i, mv := range m {
		if mv < 0.8 {
			mv = 0
		}
		for ch := 0; ch < 3; ch++ {
			x := float32(src.Pix[i*3+ch]) / 255
			cv := float32(float64(color[ch]) * mv)
			x = float32(float64(x) * (1 - mv))
			dst.Pix[i*3+ch] = toByte32(x + cv)
		}
	}
	return dst
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Spatter) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// canny is cv2.Canny(img, low, high) with a 3×3 Sobel (border replicate)
// and the L1 gradient |dx| + |dy|: non-maximum suppression along the
// gradient direction quantised by tan 22.5° in fixed point (a neighbour
// outside the image has magnitude 0; ties broken as OpenCV does: strictly
// greater than one neighbour, at least the other), then hysteresis:
// candidates above low connected (8-neighbourhood) to one above high.
// Edges are 255, the rest 0.
func canny(img []uint8, w, h int, low, high int32) []uint8 {
	at := func(y, x int) int32 { return int32(img[clampIdx(y, h)*w+clampIdx(x, w)]) }
	dx := make([]int32, w*h)
	dy := make([]int32, w*h)
	mag := make([]int32, (w+2)*(h+2)) // zero border
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			gx := (at(y-1, x+1) - at(y-1, x-1)) + 2*(at(y, x+1)-at(y, x-1)) + (at(y+1, x+1) - at(y+1, x-1))
			gy := (at(y+1, x-1) - at(y-1, x-1)) + 2*(at(y+1, x)-at(y-1, x)) + (at(y+1, x+1) - at(y-1, x+1))
			dx[y*w+x], dy[y*w+x] = gx, gy
			mag[(y+1)*(w+2)+x+1] = abs32(gx) + abs32(gy)
		}
	}
	const shift = 15
	const tg22 = 13573 // round(tan(22.5°)·2^15)
	mw := w + 2
	// state: 0 candidate, 1 not an edge, 2 edge.
	state := make([]uint8, mw*(h+2))
	for i := range state {
		state[i] = 1
	}
	var stack []int
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			j := (y+1)*mw + x + 1
			m := mag[j]
			if m <= low {
				continue
			}
			xs, ys := dx[y*w+x], dy[y*w+x]
			ax, ay := int64(abs32(xs)), int64(abs32(ys))<<shift
			tg22x := ax * tg22
			keep := false
			if ay < tg22x {
				keep = m > mag[j-1] && m >= mag[j+1]
			} else if tg67x := tg22x + ax<<(shift+1); ay > tg67x {
				keep = m > mag[j-mw] && m >= mag[j+mw]
			} else {
				s := 1
				if (xs ^ ys) < 0 {
					s = -1
				}
				keep = m > mag[j-mw-s] && m > mag[j+mw+s]
			}
			if !keep {
				continue
			}
			state[j] = 0
			if m > high {
				state[j] = 2
				stack = append(stack, j)
			}
		}
	}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, o := range [8]int{-1, 1, -mw - 1, -mw, -mw + 1, mw - 1, mw, mw + 1} {
			if state[j+o] == 0 {
				state[j+o] = 2
				stack = append(stack, j+o)
			}
		}
	}
	out := make([]uint8, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if state[(y+1)*mw+x+1] == 2 {
				out[y*w+x] = 255
			}
		}
	}
	return out
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// distanceL2Mask5 is cv2.distanceTransform(img, DIST_L2, 5) in float32:
// the distance from every non-zero pixel to the nearest zero one by two
// chamfer passes with the 5×5 mask's steps 1, 1.4 and 2.1969, each in
// 16-bit fixed point (65536, 91750, 143976); pixels beyond the image are
// infinitely far.
func distanceL2Mask5(img []uint8, w, h int) []float32 {
	const (
		hv    = 65536
		diag  = 91750  // cvRound(1.4·2^16)
		long  = 143976 // cvRound(2.1969·2^16)
		inf   = math.MaxInt32 >> 2
		bord  = 2
		scale = 1.0 / 65536
	)
	tw := w + 2*bord
	t := make([]int64, tw*(h+2*bord))
	for i := range t {
		t[i] = inf
	}
	at := func(y, x int) int { return (y+bord)*tw + x + bord }
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			j := at(y, x)
			if img[y*w+x] == 0 {
				t[j] = 0
				continue
			}
			v := t[j-2*tw-1] + long
			v = min(v, t[j-2*tw+1]+long, t[j-tw-2]+long, t[j-tw-1]+diag, t[j-tw]+hv, t[j-tw+1]+diag, t[j-tw+2]+long, t[j-1]+hv)
			t[j] = v
		}
	}
	out := make([]float32, w*h)
	for y := h - 1; y >= 0; y-- {
		for x := w - 1; x >= 0; x-- {
			j := at(y, x)
			v := t[j]
			if v > hv {
				v = min(v, t[j+2*tw+1]+long, t[j+2*tw-1]+long, t[j+tw+2]+long, t[j+tw+1]+diag, t[j+tw]+hv, t[j+tw-1]+diag, t[j+tw-2]+long, t[j+1]+hv)
				t[j] = v
			}
			out[y*w+x] = float32(float64(v) * scale)
		}
	}
	return out
}

// boxBlur3F32 is cv2.blur(img, (3, 3)) of a float32 image (sums in
// double, × 1/9, rounded to float32; border reflect-101) followed by
// .astype(np.uint8) (truncation).
func boxBlur3F32(img []float32, w, h int) []uint8 {
	return correlate3x3(img, w, h, [9]float64{1, 1, 1, 1, 1, 1, 1, 1, 1}, func(s float64) uint8 { return uint8(float32(s * (1.0 / 9))) })
}

// boxBlur3U8 is cv2.blur(img, (3, 3)) of a byte image: the 3×3 sum s
// (reflect-101), then ((s + 4)·7282) >> 16, OpenCV's fixed-point
// division by 9 (equal to round(s/9) for every sum of 9 bytes).
func boxBlur3U8(img []uint8, w, h int) []uint8 {
	return correlate3x3(img, w, h, [9]int{1, 1, 1, 1, 1, 1, 1, 1, 1}, func(s int) uint8 { return uint8(((s + 4) * 7282) >> 16) })
}

// filter3x3U8 is cv2.filter2D(img, CV_8U, k) of a byte image with an
// integer 3×3 kernel (correlation, border reflect-101), saturated to
// [0, 255].
func filter3x3U8(img []uint8, w, h int, k [9]int32) []uint8 {
	return correlate3x3(img, w, h, k, clamp255)
}

// correlate3x3 correlates a w×h single-channel image with the 3×3 kernel
// k (row-major, border reflect-101): each output is narrow of the sum of
// k·value over the pixel's neighbourhood, taken in S row by row.
func correlate3x3[S int | int32 | float64, T uint8 | float32](img []T, w, h int, k [9]S, narrow func(S) uint8) []uint8 {
	out := make([]uint8, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var s S
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					s += k[(dy+1)*3+dx+1] * S(img[reflect101Idx(y+dy, h)*w+reflect101Idx(x+dx, w)])
				}
			}
			out[y*w+x] = narrow(s)
		}
	}
	return out
}

// equalizeHist is cv2.equalizeHist: with i0 the smallest value present
// and n0 its count, value v maps to round((Σ_{i0<u≤v} count(u)) ·
// 255/(n − n0)) (float32, half to even); an image of one value keeps it.
func equalizeHist(img []uint8) []uint8 {
	var hist [256]int
	for _, v := range img {
		hist[v]++
	}
	i := 0
	for hist[i] == 0 {
		i++
	}
	out := make([]uint8, len(img))
	if hist[i] == len(img) {
		for j := range out {
			out[j] = uint8(i)
		}
		return out
	}
	scale := float32(255) / float32(len(img)-hist[i])
	var lut [256]uint8
	sum := 0
	for i++; i < 256; i++ {
		sum += hist[i]
		lut[i] = uint8(min(max(math.RoundToEven(float64(float32(sum)*scale)), 0), 255))
	}
	for j, v := range img {
		out[j] = lut[v]
	}
	return out
}
