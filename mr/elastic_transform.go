package mr

import (
	"math"
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// ElasticTransform is the elastic_transform corruption of ImageNet-C and
// CIFAR-10-C (after erniejunior's elastic_transform gist): with
// x = float32(v)/255,
//
//  1. a random affine map: the points c + (s, s), c + (s, −s), c − (s, s)
//     (c = (H//2, W//2), s = min(H, W)//3, in float32) each moved by
//     float32(U(−a, a)) per coordinate; cv2.getAffineTransform (a 6×6 LU
//     solve in double) and cv2.warpAffine (bilinear in OpenCV's 1/32-pixel
//     fixed point, float32 weights and sums, border reflect-101);
//  2. displacement fields dx then dy, each float32(g(U(−1, 1)^{H×W}) · α)
//     with g skimage's Gaussian of σ (mode "reflect", truncate 3);
//  3. scipy.ndimage.map_coordinates of the warped image at
//     (y + dy, x + dx), linear, mode "reflect" (half-sample symmetric),
//     stored as float32, then clipped, ×255 (float32) and truncated.
//
// (α, σ, a) by severity 1–5 is 32·(0, 0, 0.08), 32·(0.05, 0.2, 0.07),
// 32·(0.08, 0.06, 0.06), 32·(0.1, 0.04, 0.05), 32·(0.1, 0.03, 0.03) for
// images of at most 32×32 (make_cifar_c.py) and 244·(2, 0.7, 0.1),
// 244·(2, 0.08, 0.2), 244·(0.05, 0.01, 0.02), 244·(0.07, 0.01, 0.02),
// 244·(0.12, 0.01, 0.02) for larger ones (imagenet_c/corruptions.py,
// whose 244 "should have been 224"). It is Random: the 6 affine
// uniforms, then the two fields row-major. It does not move boxes (the
// displacements are a few pixels).
type ElasticTransform struct{ Severity int }

// Name implements Relation ("elastic_transform:2").
func (c ElasticTransform) Name() string { return sevName("elastic_transform", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c ElasticTransform) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c ElasticTransform) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image {
	return c.apply(src, rngDraws{rng})
}

func (c ElasticTransform) apply(src rgb.Image, d draws) rgb.Image {
	mustCorruption("elastic_transform", src, c.Severity)
	const cs, is = 32.0, 244.0
	p := pick(src, c.Severity,
		[5][3]float64{{cs * 0, cs * 0, cs * 0.08}, {cs * 0.05, cs * 0.2, cs * 0.07}, {cs * 0.08, cs * 0.06, cs * 0.06}, {cs * 0.1, cs * 0.04, cs * 0.05}, {cs * 0.1, cs * 0.03, cs * 0.03}},
		[5][3]float64{{is * 2, is * 0.7, is * 0.1}, {is * 2, is * 0.08, is * 0.2}, {is * 0.05, is * 0.01, is * 0.02}, {is * 0.07, is * 0.01, is * 0.02}, {is * 0.12, is * 0.01, is * 0.02}})
	alpha, sigma, a := p[0], p[1], p[2]
	w, h := src.W, src.H
	if w == 0 || h == 0 {
		return rgb.New(w, h)
	}
	x := make([]float32, len(src.Pix))
	for i, v := range src.Pix {
		x[i] = float32(v) / 255
	}
	// 1. The random affine map.
	c0, c1 := float32(h/2), float32(w/2)
	s := float32(min(h, w) / 3)
	pts1 := [3][2]float32{{c0 + s, c1 + s}, {c0 + s, c1 - s}, {c0 - s, c1 - s}}
	var pts2 [3][2]float32
	for i := range pts1 {
		for j := range pts1[i] {
			pts2[i][j] = pts1[i][j] + float32(-a+(a-(-a))*d.Uniform())
		}
	}
	x = warpAffineF32(x, w, h, affineFrom3(pts1, pts2))
	// 2. The displacement fields (a kernel wider than the image is folded
	// once for both).
	var folded *foldedGauss
	if sigma > 1e-15 {
		if k := gaussKernel(sigma, 3); 2*len(k)-1 > max(w, h) {
			g := newFoldedGauss(w, h, k, reflectIdx)
			folded = &g
		}
	}
	field := func() []float32 {
		u := make([]float64, w*h)
		for i := range u {
			u[i] = -1 + 2*d.Uniform()
		}
		g := u
		switch {
		case folded != nil:
			g = folded.apply(u, 1)
		case sigma > 1e-15:
			g = gaussianFilterMode(u, w, h, 1, sigma, 3, reflectIdx)
		}
		out := make([]float32, len(g))
		for i, v := range g {
			out[i] = float32(v * alpha)
		}
		return out
	}
	dx := field()
	dy := field()
	// 3. Resample.
	out := make([]float32, len(x))
	for yy := 0; yy < h; yy++ {
		for xx := 0; xx < w; xx++ {
			i := yy*w + xx
			y0, y1, wy0, wy1 := linearReflect(float64(yy)+float64(dy[i]), h)
			x0, x1, wx0, wx1 := linearReflect(float64(xx)+float64(dx[i]), w)
			for ch := 0; ch < 3; ch++ {
				v := float64(x[(y0*w+x0)*3+ch])*wy0*wx0 + float64(x[(y0*w+x1)*3+ch])*wy0*wx1 +
					float64(x[(y1*w+x0)*3+ch])*wy1*wx0 + float64(x[(y1*w+x1)*3+ch])*wy1*wx1
				out[i*3+ch] = float32(v)
			}
		}
	}
	return fromUnit32(w, h, out)
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (ElasticTransform) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// reflectIdx is scipy.ndimage's mode "reflect" (d c b a | a b c d | d c b
// a) for any index i.
func reflectIdx(i, n int) int {
	p := 2 * n
	i %= p
	if i < 0 {
		i += p
	}
	if i >= n {
		i = p - 1 - i
	}
	return i
}

// linearReflect is scipy.ndimage's order-1 interpolation at coordinate c
// along an axis of n samples in mode "reflect": c is reflected into
// [−0.5, n − 0.5] (half-sample symmetric, period 2n), and the two
// neighbours floor(c), floor(c)+1, clamped to [0, n), get weights 1 − t
// and t, t = c − floor(c).
func linearReflect(c float64, n int) (i0, i1 int, w0, w1 float64) {
	if c < 0 || c > float64(n-1) {
		p := float64(2 * n)
		u := math.Mod(c+0.5, p)
		if u < 0 {
			u += p
		}
		if u > float64(n) {
			u = p - u
		}
		c = u - 0.5
	}
	f := math.Floor(c)
	t := c - f
	i0 = min(max(int(f), 0), n-1)
	i1 = min(max(int(f)+1, 0), n-1)
	return i0, i1, 1 - t, t
}

// affineFrom3 is cv2.getAffineTransform(src, dst): the forward matrix
// mapping the three src points (x, y) to the dst ones, from OpenCV's 6×6
// system solved by LU with partial pivoting in double (LUImpl).
func affineFrom3(src, dst [3][2]float32) mat3 {
	var a [6][6]float64
	var b [6]float64
	for i := 0; i < 3; i++ {
		sx, sy := float64(src[i][0]), float64(src[i][1])
		a[2*i] = [6]float64{sx, sy, 1, 0, 0, 0}
		a[2*i+1] = [6]float64{0, 0, 0, sx, sy, 1}
		b[2*i], b[2*i+1] = float64(dst[i][0]), float64(dst[i][1])
	}
	const m = 6
	for i := 0; i < m; i++ {
		k := i
		for j := i + 1; j < m; j++ {
			if math.Abs(a[j][i]) > math.Abs(a[k][i]) {
				k = j
			}
		}
		if math.Abs(a[k][i]) < 2.220446049250313e-16*10 {
			return mat3{1, 0, 0, 0, 1, 0, 0, 0, 1} // singular: OpenCV returns zeros; unreachable here
		}
		if k != i {
			a[i], a[k] = a[k], a[i]
			b[i], b[k] = b[k], b[i]
		}
		dd := -1 / a[i][i]
		for j := i + 1; j < m; j++ {
			al := a[j][i] * dd
			for kk := i + 1; kk < m; kk++ {
				a[j][kk] += al * a[i][kk]
			}
			b[j] += al * b[i]
		}
	}
	for i := m - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < m; k++ {
			s -= a[i][k] * b[k]
		}
		b[i] = s / a[i][i]
	}
	return mat3{b[0], b[1], b[2], b[3], b[4], b[5], 0, 0, 1}
}

// warpAffineF32 is cv2.warpAffine(x, m[:2], (w, h)) of a float32 image of
// 3 interleaved channels with INTER_LINEAR and BORDER_REFLECT_101: the
// source coordinates in OpenCV's fixed point (see warpPlan), the fractions
// in 1/32 pixel, the bilinear weights (1−ax)(1−ay), ax(1−ay), (1−ax)ay,
// ax·ay as float32 and the sum v00·w0 + v01·w1 + v10·w2 + v11·w3 in
// float32; neighbours outside the image reflected (reflect-101).
func warpAffineF32(x []float32, w, h int, m mat3) []float32 {
	p := newWarpPlan(m, w, nil)
	out := make([]float32, len(x))
	for y := 0; y < h; y++ {
		x0, y0 := p.row(y)
		for xx := 0; xx < w; xx++ {
			X := (x0 + p.adelta[xx]) >> (abBits - interBits)
			Y := (y0 + p.bdelta[xx]) >> (abBits - interBits)
			sx, sy := int(X>>interBits), int(Y>>interBits)
			ax := float32(X&(interTab-1)) * (1.0 / interTab)
			ay := float32(Y&(interTab-1)) * (1.0 / interTab)
			w0, w1 := (1-ay)*(1-ax), (1-ay)*ax
			w2, w3 := ay*(1-ax), ay*ax
			sx0, sx1 := reflect101Idx(sx, w), reflect101Idx(sx+1, w)
			sy0, sy1 := reflect101Idx(sy, h), reflect101Idx(sy+1, h)
			for ch := 0; ch < 3; ch++ {
				v := x[(sy0*w+sx0)*3+ch]*w0 + x[(sy0*w+sx1)*3+ch]*w1
				v += x[(sy1*w+sx0)*3+ch] * w2
				v += x[(sy1*w+sx1)*3+ch] * w3
				out[(y*w+xx)*3+ch] = v
			}
		}
	}
	return out
}
