package mr

import (
	"fmt"
	"math"
	"strconv"

	"github.com/amt-dev/amt/rgb"
)

// Parameter ranges accepted by New, Parse and Validate, in degrees.
const (
	// MaxRotation bounds |Rotation.Degrees|.
	MaxRotation = 360
	// MaxShear bounds |Shear.Degrees|. Shear also scales y by cos(shear),
	// so the transformation degenerates as |shear| approaches 90.
	MaxShear = 85
)

// Rotation rotates the image about its centre by Degrees (imgaug
// Affine(rotate=d)): positive angles turn the image clockwise on screen.
// Pixels come from OpenCV's fixed-point bilinear warp with a black border;
// the output has the size of the input. Boxes become the hull of their
// rotated corners.
type Rotation struct {
	Degrees float64
}

// Shear shears the image about its centre by Degrees (imgaug
// Affine(shear=d), skimage ≤ 0.19 convention): the forward matrix is
// [[1, −sin s], [0, cos s]] about the centre, so y is also scaled by cos s.
type Shear struct {
	Degrees float64
}

// Name implements Relation ("rotation:30").
func (r Rotation) Name() string { return "rotation:" + formatDeg(r.Degrees) }

// Name implements Relation ("shear:-20").
func (s Shear) Name() string { return "shear:" + formatDeg(s.Degrees) }

func formatDeg(d float64) string { return strconv.FormatFloat(d, 'g', -1, 64) }

// Validate reports whether Degrees is finite and within ±MaxRotation.
func (r Rotation) Validate() error { return checkRange("rotation", r.Degrees, MaxRotation) }

// Validate reports whether Degrees is finite and within ±MaxShear.
func (s Shear) Validate() error { return checkRange("shear", s.Degrees, MaxShear) }

func checkRange(name string, d, max float64) error {
	if math.IsNaN(d) || math.IsInf(d, 0) || d < -max || d > max {
		return fmt.Errorf("mr: %s angle %v degrees is out of range: want a finite value in [%v, %v]", name, d, -max, max)
	}
	return nil
}

func mustParam(err error) {
	if err != nil {
		panic(err.Error())
	}
}

// Apply implements Relation. It panics if r.Validate fails.
func (r Rotation) Apply(src rgb.Image) rgb.Image {
	mustParam(r.Validate())
	mustValid("rotation", src)
	return warpAffine(src, affineMatrix(r.Degrees, 0, src.W, src.H))
}

// Apply implements Relation. It panics if s.Validate fails.
func (s Shear) Apply(src rgb.Image) rgb.Image {
	mustParam(s.Validate())
	mustValid("shear", src)
	return warpAffine(src, affineMatrix(0, s.Degrees, src.W, src.H))
}

// ApplyBoxes implements Relation. It panics if r.Validate fails.
func (r Rotation) ApplyBoxes(boxes []rgb.Box, w, h int) []rgb.Box {
	mustParam(r.Validate())
	return affineBoxes(boxes, affineMatrix(r.Degrees, 0, w, h))
}

// ApplyBoxes implements Relation. It panics if s.Validate fails.
func (s Shear) ApplyBoxes(boxes []rgb.Box, w, h int) []rgb.Box {
	mustParam(s.Validate())
	return affineBoxes(boxes, affineMatrix(0, s.Degrees, w, h))
}

// mat3 is a row-major 3×3 matrix.
type mat3 [9]float64

// mul returns a·b the way numpy's a @ b computed it on the reference
// machine (OpenBLAS dgemm with fused multiply-adds): each element is
// fma(a2, b2, fma(a1, b1, a0·b0)). math.FMA is exact on every platform, so
// this reproduces the reference matrix bit for bit; plain left-to-right
// sums differ in the last bit for about half of the paper's angles.
func (a mat3) mul(b mat3) mat3 {
	var c mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			c[i*3+j] = math.FMA(a[i*3+2], b[6+j], math.FMA(a[i*3+1], b[3+j], a[i*3]*b[j]))
		}
	}
	return c
}

// radians converts degrees like Python's math.radians: d · (π/180) with
// π/180 rounded to float64 first.
func radians(d float64) float64 {
	const degToRad = float64(math.Pi) / 180
	return d * degToRad
}

// affineMatrix returns imgaug 0.2.6's forward (source → destination) matrix
// T(c) · A · T(−c) for a w×h image, with c = (w/2 − 0.5, h/2 − 0.5) and A
// skimage 0.19's AffineTransform(rotation=rad(rotDeg), shear=rad(shearDeg)),
// as the product T2 @ (A @ T1) in float64, with correctly rounded sin and
// cos like the reference's glibc.
func affineMatrix(rotDeg, shearDeg float64, w, h int) mat3 {
	cx, cy := float64(w)/2-0.5, float64(h)/2-0.5
	r, s := radians(rotDeg), radians(shearDeg)
	sinR, cosR := sincos(r)
	sinRS, cosRS := sinR, cosR
	if s != 0 {
		sinRS, cosRS = sincos(r + s)
	}
	a := mat3{
		cosR, -sinRS, 0,
		sinR, cosRS, 0,
		0, 0, 1,
	}
	t1 := mat3{1, 0, -cx, 0, 1, -cy, 0, 0, 1}
	t2 := mat3{1, 0, cx, 0, 1, cy, 0, 0, 1}
	return t2.mul(a.mul(t1))
}

// affineBoxes maps boxes through m as imgaug 0.2.6 does: each corner is
// first rounded to float32 (KeypointsOnImage.get_coords_array), then
// multiplied by m in float64 (skimage's matrix_transform, a numpy matmul:
// fused multiply-adds as in mat3.mul).
func affineBoxes(boxes []rgb.Box, m mat3) []rgb.Box {
	return mapBoxes(boxes, func(x, y float64) (float64, float64) {
		x, y = float64(float32(x)), float64(float32(y))
		nx := math.FMA(y, m[1], x*m[0]) + m[2]
		ny := math.FMA(y, m[4], x*m[3]) + m[5]
		return nx, ny
	})
}

// rint rounds half to even like OpenCV's cvRound (saturate_cast<int> of a
// double) on x86-64.
func rint(v float64) int {
	r := math.RoundToEven(v)
	if !(r >= math.MinInt32 && r <= math.MaxInt32) {
		// Out of range or NaN: x86's cvtsd2si (cvRound) yields INT_MIN.
		return math.MinInt32
	}
	return int(r)
}

// sat16 saturates v to the int16 range (saturate_cast<short>).
func sat16(v int) int {
	if v > math.MaxInt16 {
		return math.MaxInt16
	}
	if v < math.MinInt16 {
		return math.MinInt16
	}
	return v
}

// Fixed-point constants of OpenCV's warpAffine with INTER_LINEAR.
const (
	interBits = 5              // INTER_BITS
	interTab  = 1 << interBits // INTER_TAB_SIZE = 32
	abBits    = 10             // AB_BITS
	abScale   = 1 << abBits    // AB_SCALE = 1024
	// roundDelta is AB_SCALE / INTER_TAB_SIZE / 2.
	roundDelta = abScale / interTab / 2
)

// warpAffine is cv2.warpAffine(src, m[:2], (W,H), INTER_LINEAR,
// BORDER_CONSTANT, 0) on a uint8 RGB image, reproducing OpenCV 4.6's
// fixed-point arithmetic exactly:
//
//   - invert m in double; X0 = rint((i1·y + i2)·1024) + 16, Y0 likewise,
//     adelta[x] = rint(i0·x·1024), bdelta[x] = rint(i3·x·1024);
//   - X = (X0 + adelta) >> 5, Y = (Y0 + bdelta) >> 5 (int32); the source
//     pixel is (X>>5, Y>>5) saturated to int16, the fractions X&31, Y&31;
//   - out = (Σ v·w·32 + 2^14) >> 15 over the 4 neighbours with bilinear
//     weights w in 1/1024, neighbours outside the image counting as 0, and
//     0 when all four are outside.
//
// For speed the three channels of a pixel are packed into 21-bit lanes of
// a uint64 (a weighted sum is at most 255·1024 < 2^21, so lanes never
// carry into each other) and the source is padded with a 1-pixel black
// border, which makes the partly-outside case the same code as the inside.
func warpAffine(src rgb.Image, m mat3) rgb.Image {
	w, h := src.W, src.H
	dst := rgb.New(w, h)
	if w == 0 || h == 0 {
		return dst
	}
	// Invert the forward matrix in double, as warpAffine does.
	d := float64(m[0]*m[4]) - float64(m[1]*m[3])
	if d != 0 {
		d = 1 / d
	}
	i0, i1 := m[4]*d, m[1]*-d
	i3, i4 := m[3]*-d, m[0]*d
	i2 := float64(-i0*m[2]) - float64(i1*m[5])
	i5 := float64(-i3*m[2]) - float64(i4*m[5])

	// OpenCV keeps these in int32.
	adelta := make([]int32, 2*w)
	bdelta := adelta[w:]
	adelta = adelta[:w]
	for x := 0; x < w; x++ {
		adelta[x] = int32(rint(float64(i0*float64(x)) * abScale))
		bdelta[x] = int32(rint(float64(i3*float64(x)) * abScale))
	}

	// Packed, zero-padded source: pixel (x, y) at (y+1)·pw + x+1.
	pw := w + 2
	packed := make([]uint64, pw*(h+2))
	for y := 0; y < h; y++ {
		row := src.Pix[y*w*3 : (y+1)*w*3]
		prow := packed[(y+1)*pw+1 : (y+1)*pw+1+w]
		for x := range prow {
			p := row[x*3 : x*3+3 : x*3+3]
			prow[x] = uint64(p[0]) | uint64(p[1])<<21 | uint64(p[2])<<42
		}
	}
	const half = 512 | 512<<21 | 512<<42 // rounding term of every lane

	dp := dst.Pix
	stride := w * 3
	for y := 0; y < h; y++ {
		x0 := int32(rint(float64(float64(i1*float64(y))+i2)*abScale)) + roundDelta
		y0 := int32(rint(float64(float64(i4*float64(y))+i5)*abScale)) + roundDelta
		drow := dp[y*stride : (y+1)*stride]
		for x := range adelta {
			xx := int((x0 + adelta[x]) >> (abBits - interBits))
			yy := int((y0 + bdelta[x]) >> (abBits - interBits))
			// Padded coordinates of the top-left neighbour; it and its
			// right/bottom neighbours are inside the padded image exactly
			// when at least one of the four is inside the source.
			px, py := sat16(xx>>interBits)+1, sat16(yy>>interBits)+1
			if uint(px) >= uint(w+1) || uint(py) >= uint(h+1) {
				continue // border value 0
			}
			fx, fy := uint64(xx&(interTab-1)), uint64(yy&(interTab-1))
			w01 := (interTab - fy) * fx
			w00 := (interTab-fy)*interTab - w01
			w11 := fy * fx
			w10 := fy*interTab - w11
			i := py*pw + px
			p := packed[i : i+2 : i+2]
			q := packed[i+pw : i+pw+2 : i+pw+2]
			// (Σ v·w·32 + 2^14) >> 15 == (Σ v·w + 2^9) >> 10 per lane.
			s := p[0]*w00 + p[1]*w01 + q[0]*w10 + q[1]*w11 + half
			o := drow[x*3 : x*3+3 : x*3+3]
			o[0], o[1], o[2] = uint8(s>>10), uint8(s>>31), uint8(s>>52)
		}
	}
	return dst
}
