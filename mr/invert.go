package mr

import (
	"encoding/binary"

	"github.com/amt-dev/amt/rgb"
)

// Invert replaces every channel value v by 255 − v. It does not move boxes.
type Invert struct{}

// Name implements Relation.
func (Invert) Name() string { return "invert" }

// Apply implements Relation.
func (Invert) Apply(src rgb.Image) rgb.Image {
	dst := followUp("invert", src)
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

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Invert) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
