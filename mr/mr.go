// Package mr implements the metamorphic relations (MRs) of adaptive
// metamorphic testing as transformations of RGB images and of the bounding
// boxes that belong to them.
//
// The seven relations of the paper — blur, fliplr, flipud, grayscale, invert,
// rotation by d degrees and shear by d degrees — reproduce the original
// implementation (imgaug 0.2.6 with its OpenCV 4.6 backend) bit for bit,
// including OpenCV's fixed-point bilinear warp and imgaug's box conventions
// (flips map x to (W−1)−x, affine corners are rounded to float32 first, the
// transformed box is the axis-aligned hull of its corners and is not clipped).
//
// Relations are plain values: Blur{}, Rotation{Degrees: 30}, and a Compose
// of relations applied in order is itself a Relation. The registry
// (Relations) has one entry per kind of relation: its name, constructor,
// parameter description and range, and doc line. New and Parse build
// relations from names ("rotation:30,invert") with range checks, and
// NewScenario and Builtin build the scenarios a bandit chooses from (the
// paper's hierarchical, basic, rotation and shear sets, the corruptions
// sets, or user-defined ones) as values of package scenario.
//
// The registry also holds Hendrycks & Dietterich's common corruptions
// (ImageNet-C, CIFAR-10-C; see corruptions), each parametrised by a
// severity 1–5 and written after the reference implementation. Those that
// draw random numbers are Random: they draw from a generator the caller
// passes (ApplyRand), or from Rand(seed, image, relation) (ApplySeed); a
// plain Apply is seed 0, so every relation's Apply stays a pure function
// of the image.
package mr

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/amt-dev/amt/rgb"
)

// Relation is a metamorphic relation: a deterministic transformation of a
// source test case into a follow-up test case.
//
// Apply never modifies src and returns an image of the same size. It panics
// if src is not a valid image (see rgb.Image.Validate) or if the relation's
// own parameters are invalid (see Validate); relations built by New or Parse
// are always valid.
//
// ApplyBoxes maps boxes in the coordinates of a w×h source image to the
// follow-up image's coordinates, the way imgaug 0.2.6 does; it returns a new
// slice (the input is not modified) and does not clip.
type Relation interface {
	// Name is the canonical name, accepted by Parse: "blur", "rotation:30",
	// or for a composition the comma-separated names of its parts.
	Name() string
	Apply(src rgb.Image) rgb.Image
	ApplyBoxes(boxes []rgb.Box, w, h int) []rgb.Box
}

// Blur is the 3×3 box blur (imgaug AverageBlur(k=3) = cv2.blur with the
// reflect-101 border): each channel value becomes round(sum of its 3×3
// neighbourhood / 9). It does not move boxes.
type Blur struct{}

// FlipLR mirrors the image left to right (imgaug Fliplr(1.0)). Box x
// coordinates map to (W−1)−x, imgaug 0.2.6's 1-pixel convention.
type FlipLR struct{}

// FlipUD mirrors the image top to bottom (imgaug Flipud(1.0)). Box y
// coordinates map to (H−1)−y.
type FlipUD struct{}

// Grayscale replaces every pixel by its luma, written to all three channels
// (imgaug Grayscale(alpha=1) = OpenCV 4's fixed-point RGB2GRAY:
// Y = (9798·R + 19235·G + 3735·B + 16384) >> 15). It does not move boxes.
type Grayscale struct{}

// Invert replaces every channel value v by 255 − v. It does not move boxes.
type Invert struct{}

// Name implements Relation.
func (Blur) Name() string { return "blur" }

// Name implements Relation.
func (FlipLR) Name() string { return "fliplr" }

// Name implements Relation.
func (FlipUD) Name() string { return "flipud" }

// Name implements Relation.
func (Grayscale) Name() string { return "grayscale" }

// Name implements Relation.
func (Invert) Name() string { return "invert" }

// mustValid panics with a clear message when src is not a valid image.
func mustValid(name string, src rgb.Image) {
	if err := src.Validate(); err != nil {
		panic(fmt.Sprintf("mr: %s: invalid source image: %v", name, err))
	}
}

// scratch returns buf[:n] when buf is long enough (a caller's stack array)
// and a new zeroed slice of length n otherwise.
func scratch[T any](buf []T, n int) []T {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]T, n)
}

// Apply implements Relation.
func (Blur) Apply(src rgb.Image) rgb.Image {
	mustValid("blur", src)
	w, h := src.W, src.H
	dst := rgb.New(w, h)
	if w == 0 || h == 0 {
		return dst
	}
	// Per row: vertical 3-sums with reflect-101 borders (row −1 → 1,
	// h → h−2), then horizontal 3-sums of those (column −1 → 1, w → w−2).
	n := 3 * w
	var buf [3 * 64]uint16
	vs := scratch(buf[:], n)
	for y := 0; y < h; y++ {
		up := src.Pix[reflect101(y-1, h)*n:][:n]
		mid := src.Pix[y*n:][:n]
		dn := src.Pix[reflect101(y+1, h)*n:][:n]
		for i := range vs {
			vs[i] = uint16(up[i]) + uint16(mid[i]) + uint16(dn[i])
		}
		out := dst.Pix[y*n:][:n]
		if w == 1 {
			for c := range out {
				out[c] = mean9(3 * vs[c])
			}
			continue
		}
		for c := 0; c < 3; c++ {
			out[c] = mean9(vs[c] + 2*vs[3+c])
			out[n-3+c] = mean9(vs[n-3+c] + 2*vs[n-6+c])
		}
		o := out[3 : n-3]
		l, m, r := vs[:len(o)], vs[3:3+len(o)], vs[6:6+len(o)]
		for i := range o {
			o[i] = mean9(l[i] + m[i] + r[i])
		}
	}
	return dst
}

// mean9 is round(s/9) for a sum of nine uint8 values; a tie is impossible.
func mean9(s uint16) uint8 { return uint8((2*uint32(s) + 9) / 18) }

// reflect101 maps an index one step outside [0, n) back inside the way
// OpenCV's BORDER_REFLECT_101 does (-1 → 1, n → n−2); n == 1 maps to 0.
func reflect101(i, n int) int {
	if n == 1 {
		return 0
	}
	if i < 0 {
		return -i
	}
	if i >= n {
		return 2*n - 2 - i
	}
	return i
}

// Apply implements Relation.
func (FlipLR) Apply(src rgb.Image) rgb.Image {
	mustValid("fliplr", src)
	dst := rgb.New(src.W, src.H)
	w := src.W
	for y := 0; y < src.H; y++ {
		s := src.Pix[y*w*3 : (y+1)*w*3]
		d := dst.Pix[y*w*3 : (y+1)*w*3]
		for x := 0; x < w; x++ {
			j := (w - 1 - x) * 3
			d[x*3], d[x*3+1], d[x*3+2] = s[j], s[j+1], s[j+2]
		}
	}
	return dst
}

// Apply implements Relation.
func (FlipUD) Apply(src rgb.Image) rgb.Image {
	mustValid("flipud", src)
	dst := rgb.New(src.W, src.H)
	n := src.W * 3
	for y := 0; y < src.H; y++ {
		copy(dst.Pix[y*n:(y+1)*n], src.Pix[(src.H-1-y)*n:(src.H-y)*n])
	}
	return dst
}

// Apply implements Relation.
func (Grayscale) Apply(src rgb.Image) rgb.Image {
	mustValid("grayscale", src)
	dst := rgb.New(src.W, src.H)
	s, d := src.Pix, dst.Pix
	for i := 0; i+2 < len(s); i += 3 {
		y := uint8((9798*uint32(s[i]) + 19235*uint32(s[i+1]) + 3735*uint32(s[i+2]) + 16384) >> 15)
		d[i], d[i+1], d[i+2] = y, y, y
	}
	return dst
}

// Apply implements Relation.
func (Invert) Apply(src rgb.Image) rgb.Image {
	mustValid("invert", src)
	dst := rgb.New(src.W, src.H)
	s, d := src.Pix, dst.Pix
	// 255 − v == v XOR 0xFF; eight bytes at a time.
	i := 0
	for ; i+8 <= len(s); i += 8 {
		binary.LittleEndian.PutUint64(d[i:], binary.LittleEndian.Uint64(s[i:])^^uint64(0))
	}
	for ; i < len(s); i++ {
		d[i] = ^s[i]
	}
	return dst
}

// hull returns the box spanned by corners (x1,y1),(x2,y2) mapped through f,
// as imgaug 0.2.6 does: the four corners are mapped as keypoints and the new
// box is their min/max hull, with W and H recomputed as x2'−x1', y2'−y1'.
func hull(b rgb.Box, f func(x, y float64) (float64, float64)) rgb.Box {
	x1, y1, x2, y2 := b.Corners()
	xs := [4]float64{x1, x2, x2, x1}
	ys := [4]float64{y1, y1, y2, y2}
	var minX, minY, maxX, maxY float64
	for i := range xs {
		x, y := f(xs[i], ys[i])
		if i == 0 || x < minX {
			minX = x
		}
		if i == 0 || x > maxX {
			maxX = x
		}
		if i == 0 || y < minY {
			minY = y
		}
		if i == 0 || y > maxY {
			maxY = y
		}
	}
	return rgb.BoxFromCorners(minX, minY, maxX, maxY)
}

// mapBoxes applies hull with f to every box.
func mapBoxes(boxes []rgb.Box, f func(x, y float64) (float64, float64)) []rgb.Box {
	out := make([]rgb.Box, len(boxes))
	for i, b := range boxes {
		out[i] = hull(b, f)
	}
	return out
}

func identity(x, y float64) (float64, float64) { return x, y }

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Blur) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return mapBoxes(boxes, identity) }

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Grayscale) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return mapBoxes(boxes, identity) }

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Invert) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return mapBoxes(boxes, identity) }

// ApplyBoxes implements Relation: x' = (w−1) − x.
func (FlipLR) ApplyBoxes(boxes []rgb.Box, w, _ int) []rgb.Box {
	wm1 := float64(w - 1)
	return mapBoxes(boxes, func(x, y float64) (float64, float64) { return wm1 - x, y })
}

// ApplyBoxes implements Relation: y' = (h−1) − y.
func (FlipUD) ApplyBoxes(boxes []rgb.Box, _, h int) []rgb.Box {
	hm1 := float64(h - 1)
	return mapBoxes(boxes, func(x, y float64) (float64, float64) { return x, hm1 - y })
}

// Compose is a sequence of relations applied in order (first element
// first). It is itself a relation; its name is the comma-separated names of
// its parts, which Parse turns back into the same composition. An empty
// Compose is the identity and is named "".
type Compose []Relation

// Name implements Relation.
func (c Compose) Name() string {
	names := make([]string, len(c))
	for i, r := range c {
		names[i] = r.Name()
	}
	return strings.Join(names, ",")
}

// Apply implements Relation.
func (c Compose) Apply(src rgb.Image) rgb.Image {
	mustValid("compose", src)
	if len(c) == 0 {
		return src.Clone()
	}
	img := src
	for _, r := range c {
		img = r.Apply(img)
	}
	return img
}

// ApplyBoxes implements Relation. Every relation keeps the image size, so
// each step sees the same w×h.
func (c Compose) ApplyBoxes(boxes []rgb.Box, w, h int) []rgb.Box {
	out := append([]rgb.Box(nil), boxes...)
	if out == nil {
		out = []rgb.Box{}
	}
	for _, r := range c {
		out = r.ApplyBoxes(out, w, h)
	}
	return out
}
