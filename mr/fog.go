package mr

import (
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// Fog is the fog corruption of ImageNet-C and CIFAR-10-C: with x = v/255
// and M its largest value over the image, x becomes
// x + t·plasma(y, x) and then (x·M)/(M + t), clipped, ×255 and truncated,
// where plasma is the reference's plasma_fractal (diamond-square, see
// plasmaFractal) of wibble decay d on a map whose side is the smallest
// power of 2 at least the image's (32 and 256 in the reference), cropped
// to the image. (t, d) by severity 1–5 is (0.2, 3), (0.5, 3), (0.75, 2.5),
// (1, 2), (1.5, 1.75) for images of at most 32×32 (make_cifar_c.py) and
// (1.5, 2), (2, 2), (2.5, 1.7), (2.5, 1.5), (3, 1.4) for larger ones
// (imagenet_c/corruptions.py). It is Random (plasmaFractal's uniforms).
// It does not move boxes.
type Fog struct{ Severity int }

// Name implements Relation ("fog:2").
func (c Fog) Name() string { return sevName("fog", c.Severity) }

// Apply implements Relation: ApplyRand with Rand(0, src, c).
func (c Fog) Apply(src rgb.Image) rgb.Image { return c.ApplyRand(src, Rand(0, src, c)) }

// ApplyRand implements Random.
func (c Fog) ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image { return c.apply(src, rngDraws{rng}) }

func (c Fog) apply(src rgb.Image, d draws) rgb.Image {
	mustCorruption("fog", src, c.Severity)
	p := pick(src, c.Severity,
		[5][2]float64{{.2, 3}, {.5, 3}, {0.75, 2.5}, {1, 2}, {1.5, 1.75}},
		[5][2]float64{{1.5, 2}, {2., 2}, {2.5, 1.7}, {2.5, 1.5}, {3., 1.4}})
	w, h := src.W, src.H
	if w == 0 || h == 0 {
		return rgb.New(w, h)
	}
	m := 1
	for m < max(w, h) {
		m *= 2
	}
	plasma := plasmaFractal(m, p[1], d)
	x := unit(src)
	mx := 0.0
	for _, v := range x {
		mx = max(mx, v)
	}
	for y := 0; y < h; y++ {
		for xx := 0; xx < w; xx++ {
			f := p[0] * plasma[y*m+xx]
			for ch := 0; ch < 3; ch++ {
				i := (y*w+xx)*3 + ch
				x[i] = (x[i] + f) * mx / (mx + p[0])
			}
		}
	}
	return fromUnit(w, h, x)
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Fog) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// plasmaFractal is the reference's plasma_fractal(mapsize=m, wibbledecay)
// (after FLHerne/mapgen's diamondsquare.py), an m×m height map scaled to
// [0, 1], m a power of 2. Starting from map[0,0] = 0, step s = m and
// wibble 100, while s ≥ 2: every square's centre becomes the mean of its
// four corners plus wibble·U(−wibble, wibble), then every diamond's
// centre (top edges first, then left edges) the mean of its four
// neighbours plus the same noise, indices wrapping around (np.roll); then
// s halves and wibble is divided by wibbledecay. The uniforms are drawn
// row-major per batch, squares, top edges, left edges, as numpy does.
func plasmaFractal(m int, decay float64, d draws) []float64 {
	a := make([]float64, m*m)
	at := func(y, x int) *float64 { return &a[y*m+x] }
	wibble := 100.0
	noise := func() float64 { return wibble * (-wibble + (wibble-(-wibble))*d.Uniform()) }
	for s := m; s >= 2; s /= 2 {
		n, hs := m/s, s/2
		corner := func(i, j int) float64 { return *at((i%n)*s, (j%n)*s) }
		// Squares: corners (i, j), (i+1, j), then the column sums with
		// (·, j+1).
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				sum := (corner(i, j) + corner(i+1, j)) + (corner(i, j+1) + corner(i+1, j+1))
				*at(i*s+hs, j*s+hs) = sum/4 + noise()
			}
		}
		centre := func(i, j int) float64 { return *at(((i+n)%n)*s+hs, ((j+n)%n)*s+hs) }
		// Diamonds on the top edges: centres (i, j), (i−1, j); corners
		// (i, j), (i, j+1).
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				sum := (centre(i, j) + centre(i-1, j)) + (corner(i, j) + corner(i, j+1))
				*at(i*s, j*s+hs) = sum/4 + noise()
			}
		}
		// Diamonds on the left edges: centres (i, j), (i, j−1); corners
		// (i, j), (i+1, j).
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				sum := (centre(i, j) + centre(i, j-1)) + (corner(i, j) + corner(i+1, j))
				*at(i*s+hs, j*s) = sum/4 + noise()
			}
		}
		wibble /= decay
	}
	lo := a[0]
	for _, v := range a {
		lo = min(lo, v)
	}
	hi := 0.0
	for i := range a {
		a[i] -= lo
		hi = max(hi, a[i])
	}
	for i := range a {
		a[i] /= hi
	}
	return a
}
