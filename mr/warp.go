package mr

import (
	"math"

	"github.com/amt-dev/amt/rgb"
)

// Fixed-point constants of OpenCV's warpAffine with INTER_LINEAR.
const (
	interBits = 5              // INTER_BITS
	interTab  = 1 << interBits // INTER_TAB_SIZE = 32
	abBits    = 10             // AB_BITS
	abScale   = 1 << abBits    // AB_SCALE = 1024
	// roundDelta is AB_SCALE / INTER_TAB_SIZE / 2.
	roundDelta = abScale / interTab / 2
)

// warpPlan holds what OpenCV's warpAffine computes before its pixel loop:
// the inverse matrix and, per destination column x, the int32 offsets
// adelta[x] = rint(i0·x·1024) and bdelta[x] = rint(i3·x·1024).
type warpPlan struct {
	i1, i2, i4, i5 float64
	adelta, bdelta []int32
}

// newWarpPlan inverts the forward matrix m in double as warpAffine does
// and fills the column offsets for columns 0..n−1 (n ≥ the image width;
// columns past it only feed padding lanes), in buf when it holds 2n
// values.
func newWarpPlan(m mat3, n int, buf []int32) warpPlan {
	d := float64(m[0]*m[4]) - float64(m[1]*m[3])
	if d != 0 {
		d = 1 / d
	}
	i0, i1 := m[4]*d, m[1]*-d
	i3, i4 := m[3]*-d, m[0]*d
	p := warpPlan{
		i1: i1, i2: float64(-i0*m[2]) - float64(i1*m[5]),
		i4: i4, i5: float64(-i3*m[2]) - float64(i4*m[5]),
	}
	buf = scratch(buf, 2*n)
	p.adelta, p.bdelta = buf[:n:n], buf[n:]
	for x := range p.adelta {
		// OpenCV keeps these in int32.
		p.adelta[x] = int32(rint(float64(i0*float64(x)) * abScale))
		p.bdelta[x] = int32(rint(float64(i3*float64(x)) * abScale))
	}
	return p
}

// row returns X0 and Y0 of destination row y, in 1/1024 pixel, rounding
// term included.
func (p *warpPlan) row(y int) (x0, y0 int32) {
	x0 = int32(rint(float64(float64(p.i1*float64(y))+p.i2)*abScale)) + roundDelta
	y0 = int32(rint(float64(float64(p.i4*float64(y))+p.i5)*abScale)) + roundDelta
	return x0, y0
}

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
// It runs the SIMD kernel where the CPU has one (warpSIMD) and the
// portable warpGo otherwise; both are checked against a plain
// transcription of OpenCV's loop (warp_ref_test.go).
func warpAffine(src rgb.Image, m mat3) rgb.Image {
	dst := rgb.New(src.W, src.H)
	if src.W == 0 || src.H == 0 {
		return dst
	}
	if !warpSIMD(dst, src, m) {
		warpGo(dst, src, m)
	}
	return dst
}

// warpGo is warpAffine in portable Go. The three channels of a pixel are
// packed into 21-bit lanes of a uint64 (a weighted sum is at most
// 255·1024 < 2^21, so lanes never carry into each other) and the source is
// padded with a 1-pixel black border, which makes the partly-outside case
// the same code as the inside. Pixels mapped entirely outside are left
// alone, so dst must start zeroed (as rgb.New returns it).
func warpGo(dst, src rgb.Image, m mat3) {
	w, h := src.W, src.H
	p := newWarpPlan(m, w, nil)

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

	stride := w * 3
	for y := 0; y < h; y++ {
		x0, y0 := p.row(y)
		drow := dst.Pix[y*stride : (y+1)*stride]
		for x, a := range p.adelta {
			xx := int((x0 + a) >> (abBits - interBits))
			yy := int((y0 + p.bdelta[x]) >> (abBits - interBits))
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
