package mr

import "github.com/amt-dev/amt/rgb"

// Blur is the 3×3 box blur (imgaug AverageBlur(k=3) = cv2.blur with the
// reflect-101 border): each channel value becomes round(sum of its 3×3
// neighbourhood / 9). It does not move boxes.
type Blur struct{}

// Name implements Relation.
func (Blur) Name() string { return "blur" }

// Apply implements Relation.
func (Blur) Apply(src rgb.Image) rgb.Image {
	w, h := src.W, src.H
	dst := followUp("blur", src)
	if w == 0 || h == 0 {
		return dst
	}
	// Per row: vertical 3-sums with reflect-101 borders (row −1 → 1,
	// h → h−2), then horizontal 3-sums of those (column −1 → 1, w → w−2).
	n := 3 * w
	var buf [3 * 64]uint16
	vs := scratch(buf[:], n)
	for y := 0; y < h; y++ {
		up := src.Pix[reflect101Idx(y-1, h)*n:][:n]
		mid := src.Pix[y*n:][:n]
		dn := src.Pix[reflect101Idx(y+1, h)*n:][:n]
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

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Blur) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
