package mr

import (
	"fmt"
	"math"

	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
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
func (r Rotation) Name() string { return scenario.Key("rotation", r.Degrees) }

// Name implements Relation ("shear:-20").
func (s Shear) Name() string { return scenario.Key("shear", s.Degrees) }

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
