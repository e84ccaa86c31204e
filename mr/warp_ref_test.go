package mr

import (
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
)

// TestWarpMatchesReference: warpAffine (the SIMD kernel where the CPU
// has one) and the portable warpGo both equal a plain per-channel
// transcription of OpenCV's algorithm on random images and matrices,
// including widths that are not a multiple of the kernel's 8 pixels, sizes
// where most pixels touch the border, images larger than the kernel's
// stack buffers, mirrored and strongly scaling matrices, and coordinates
// far enough outside to saturate OpenCV's int16 or int32 arithmetic.
func TestWarpMatchesReference(t *testing.T) {
	impls := []struct {
		name string
		warp func(rgb.Image, mat3) rgb.Image
	}{
		{"warpAffine/" + simdKernel, warpAffine},
		{"warpGo", func(src rgb.Image, m mat3) rgb.Image {
			dst := rgb.New(src.W, src.H)
			warpGo(dst, src, m)
			return dst
		}},
	}
	r := rand.New(rand.NewPCG(9, 9))
	for it := 0; it < 400; it++ {
		w, h := 1+r.IntN(40), 1+r.IntN(40)
		if it%50 == 0 {
			w, h = 200+r.IntN(100), 100+r.IntN(100)
		}
		src := goldentest.RandomImage(w, h, uint64(it))
		var m mat3
		switch it % 4 {
		case 0:
			m = affineMatrix(r.Float64()*720-360, 0, w, h)
		case 1:
			m = affineMatrix(0, r.Float64()*170-85, w, h)
		case 2:
			for i := 0; i < 6; i++ {
				m[i] = r.NormFloat64() * 2
			}
			m[2], m[5] = r.Float64()*float64(w), r.Float64()*float64(h)
			m[6], m[7], m[8] = 0, 0, 1
		default:
			// Far translations (int16 saturation at ±32767 source
			// pixels, int32 overflow of X0 past ±2^21) and extreme scales.
			far := []float64{-3e6, -40000, -32770, 32770, 40000, 3e6}
			m = mat3{1, 0, far[r.IntN(len(far))], 0, 1, float64(r.IntN(2*h) - h), 0, 0, 1}
			if r.IntN(2) == 0 {
				m[2], m[5] = m[5], m[2]
			}
			if r.IntN(3) == 0 {
				s := []float64{1e-4, 1e-3, 1e3, 1e5}[r.IntN(4)]
				m[0], m[4] = s, s
			}
		}
		want := warpAffineRef(src, m)
		for _, impl := range impls {
			if got := impl.warp(src, m); !got.Equal(want) {
				t.Fatalf("%s: iteration %d (%dx%d, m=%v): %d values differ", impl.name, it, w, h, m, countDiff(got.Pix, want.Pix))
			}
		}
	}
	// A singular matrix maps everything to one point without panicking.
	src := goldentest.RandomImage(5, 4, 1)
	singular := mat3{0, 0, 1, 0, 0, 1, 0, 0, 1}
	for _, impl := range impls {
		if got, want := impl.warp(src, singular), warpAffineRef(src, singular); !got.Equal(want) {
			t.Errorf("%s: singular matrix: differs from reference", impl.name)
		}
	}
}

// warpAffineRef is the straightforward transcription of cv2.warpAffine(src, m[:2], (W,H), INTER_LINEAR,
// BORDER_CONSTANT, 0) on a uint8 RGB image, reproducing OpenCV 4.6's
// fixed-point arithmetic exactly.
func warpAffineRef(src rgb.Image, m mat3) rgb.Image {
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
	sp, dp := src.Pix, dst.Pix
	stride := w * 3
	for y := 0; y < h; y++ {
		x0 := int32(rint(float64(float64(i1*float64(y))+i2)*abScale)) + roundDelta
		y0 := int32(rint(float64(float64(i4*float64(y))+i5)*abScale)) + roundDelta
		drow := dp[y*stride : (y+1)*stride]
		for x := range adelta {
			xx := int((x0 + adelta[x]) >> (abBits - interBits))
			yy := int((y0 + bdelta[x]) >> (abBits - interBits))
			sx, fx := sat16(xx>>interBits), xx&(interTab-1)
			sy, fy := sat16(yy>>interBits), yy&(interTab-1)
			o := drow[x*3 : x*3+3 : x*3+3]
			if uint(sx) < uint(w-1) && uint(sy) < uint(h-1) {
				// All four neighbours inside.
				w00 := (interTab - fy) * (interTab - fx)
				w01 := (interTab - fy) * fx
				w10 := fy * (interTab - fx)
				w11 := fy * fx
				i := (sy*w + sx) * 3
				p := sp[i : i+6 : i+6]
				q := sp[i+stride : i+stride+6 : i+stride+6]
				// (Σ v·w·32 + 2^14) >> 15 == (Σ v·w + 2^9) >> 10.
				o[0] = uint8((int(p[0])*w00 + int(p[3])*w01 + int(q[0])*w10 + int(q[3])*w11 + 512) >> 10)
				o[1] = uint8((int(p[1])*w00 + int(p[4])*w01 + int(q[1])*w10 + int(q[4])*w11 + 512) >> 10)
				o[2] = uint8((int(p[2])*w00 + int(p[5])*w01 + int(q[2])*w10 + int(q[5])*w11 + 512) >> 10)
				continue
			}
			if sx >= w || sx+1 < 0 || sy >= h || sy+1 < 0 {
				continue // border value 0
			}
			var s [3]int
			for k := 0; k < 4; k++ {
				px, py := sx+k&1, sy+k>>1
				if px < 0 || px >= w || py < 0 || py >= h {
					continue
				}
				var wt int
				switch k {
				case 0:
					wt = (interTab - fy) * (interTab - fx)
				case 1:
					wt = (interTab - fy) * fx
				case 2:
					wt = fy * (interTab - fx)
				default:
					wt = fy * fx
				}
				p := sp[(py*w+px)*3:]
				for c := 0; c < 3; c++ {
					s[c] += int(p[c]) * wt
				}
			}
			for c := 0; c < 3; c++ {
				o[c] = uint8((s[c] + 512) >> 10)
			}
		}
	}
	return dst
}

// FuzzWarp: on any image size up to 80×80 and any affine matrix,
// warpAffine and warpGo equal the reference transcription.
func FuzzWarp(f *testing.F) {
	f.Add(uint8(32), uint8(32), 0.866, -0.5, 10.0, 0.5, 0.866, -6.0, uint64(1))
	f.Add(uint8(1), uint8(1), 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, uint64(2))
	f.Add(uint8(9), uint8(40), -1.0, 0.0, 8.0, 0.0, 1.0, 0.0, uint64(3))
	f.Add(uint8(17), uint8(3), 1e3, 2.0, -3e6, 0.0, 1e-3, 40000.0, uint64(4))
	f.Fuzz(func(t *testing.T, w, h uint8, a, b, c, d, e, g float64, seed uint64) {
		if w == 0 || h == 0 || w > 80 || h > 80 {
			return
		}
		src := goldentest.RandomImage(int(w), int(h), seed)
		m := mat3{a, b, c, d, e, g, 0, 0, 1}
		want := warpAffineRef(src, m)
		if got := warpAffine(src, m); !got.Equal(want) {
			t.Fatalf("warpAffine/%s: %d values differ from the reference", simdKernel, countDiff(got.Pix, want.Pix))
		}
		got := rgb.New(src.W, src.H)
		if warpGo(got, src, m); !got.Equal(want) {
			t.Fatalf("warpGo: %d values differ from the reference", countDiff(got.Pix, want.Pix))
		}
	})
}
