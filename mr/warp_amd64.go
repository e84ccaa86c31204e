//go:build amd64 && !noasm

package mr

import (
	"golang.org/x/sys/cpu"

	"github.com/amt-dev/amt/rgb"
)

// hasAVX2 reports whether the AVX2 warp kernel can run on this CPU.
var hasAVX2 = cpu.X86.HasAVX2

// simdKernel names the warp kernel in use (for benchmarks and reports).
const simdKernel = "avx2"

// warpRowAVX2 computes one destination row of warpAffine, 8 pixels per
// group, writing 24·groups bytes of RGB to dst plus 4 scratch bytes after
// them. ad and bd hold 8·groups column offsets; x0 and y0 are the row's X0
// and Y0 with the padding bias added (see warpSIMD); src is the padded
// RGBx source, pw its row length in pixels, xmax and ymax the largest
// padded coordinates of a top-left neighbour.
//
//go:noescape
func warpRowAVX2(dst *uint8, ad, bd *int32, groups int, x0, y0 int32, src *uint32, pw, xmax, ymax int)

// packRowAVX2 widens 8·groups RGB pixels to RGBx (x = 0); it reads 4
// bytes past the last pixel.
//
//go:noescape
func packRowAVX2(dst *uint32, src *uint8, groups int)

// Stack buffer sizes that cover CIFAR-sized images without allocating.
const (
	stackCols   = 64      // destination columns, rounded up to 8
	stackPadded = 40 * 40 // padded source pixels
)

// warpSIMD runs warpAffine's pixel loop with AVX2 and reports whether it
// did; it declines when the CPU lacks AVX2 or the image is too large for
// the kernel's int16 coordinate shortcut.
//
// The source is widened to one uint32 per pixel (RGBx) inside a 2-pixel
// black border. The kernel clamps the padded coordinates of each top-left
// neighbour to [0, W+2]×[0, H+2]: a clamped position reads only border
// pixels, so it yields 0 exactly where OpenCV returns the border value,
// and every position where a neighbour is inside the image is left as it
// is (this needs W, H < 32767, the int16 range OpenCV saturates
// coordinates to). Per pixel it loads the top and bottom pixel pairs with
// two 8-byte loads (cheaper than AVX2 gathers on Zen 3), interpolates
// horizontally with pmaddubsw (weights 32−fx, fx) and vertically with
// pmaddwd (32−fy, fy): the same integer Σ v·w as OpenCV's 4-tap sum,
// since w00 = (32−fy)(32−fx) and so on.
func warpSIMD(dst, src rgb.Image, m mat3) bool {
	const maxSide = 32000
	w, h := src.W, src.H
	if !hasAVX2 || w > maxSide || h > maxSide {
		return false
	}
	groups := (w + 7) / 8
	n := 8 * groups
	var dbuf [2 * stackCols]int32
	p := newWarpPlan(m, n, dbuf[:])

	pw := w + 4
	var pbuf [stackPadded]uint32
	padded := scratch(pbuf[:], pw*(h+4))
	for y := 0; y < h; y++ {
		srow := src.Pix[y*w*3:]
		prow := padded[(y+2)*pw+2 : (y+2)*pw+2+w]
		// The kernel reads 28 bytes per 24-byte group.
		g := min(w/8, (len(srow)-4)/24)
		if g > 0 {
			packRowAVX2(&prow[0], &srow[0], g)
		}
		for x := 8 * g; x < w; x++ {
			prow[x] = uint32(srow[3*x]) | uint32(srow[3*x+1])<<8 | uint32(srow[3*x+2])<<16
		}
	}

	var tbuf [3*stackCols + 4]uint8
	tail := scratch(tbuf[:], 3*n+4)
	// Biasing X0 and Y0 by 2·1024 adds 2 to the kernel's source
	// coordinates (the border offset) and leaves the fractions alone.
	const bias = 2 << abBits
	stride := 3 * w
	for y := 0; y < h; y++ {
		x0, y0 := p.row(y)
		// The kernel writes 4 bytes past the row; they land in the next
		// row, which is written later, except near the end of dst.
		out, short := dst.Pix[y*stride:], false
		if len(out) < 3*n+4 {
			out, short = tail, true
		}
		warpRowAVX2(&out[0], &p.adelta[0], &p.bdelta[0], groups, x0+bias, y0+bias, &padded[0], pw, w+2, h+2)
		if short {
			copy(dst.Pix[y*stride:], tail[:stride])
		}
	}
	return true
}
