package mr

import (
	"fmt"
	"math"

	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
)

// MaxBrightness bounds |Brightness.Delta|: beyond ±255 every value
// saturates.
const MaxBrightness = 255

// Brightness adds Delta to every channel value, saturating at 0 and 255
// (OpenCV's cv2.add of a constant to a uint8 image; imgaug's Add(value)
// with per_channel=False). Delta is a whole number of intensity levels in
// [−MaxBrightness, MaxBrightness]. It does not move boxes.
//
// It is not one of the paper's relations: the built-in scenarios leave it
// out, user-defined action sets and amt transform can use it
// ("brightness:-40").
type Brightness struct {
	Delta float64
}

// Name implements Relation ("brightness:-40").
func (b Brightness) Name() string { return scenario.Key("brightness", b.Delta) }

// Validate reports whether Delta is a whole number within ±MaxBrightness.
func (b Brightness) Validate() error {
	d := b.Delta
	if math.IsNaN(d) || math.IsInf(d, 0) || d < -MaxBrightness || d > MaxBrightness || d != math.Trunc(d) {
		return fmt.Errorf("mr: brightness delta %v levels is out of range: want a whole number in [%d, %d]", d, -MaxBrightness, MaxBrightness)
	}
	return nil
}

// Apply implements Relation.
func (b Brightness) Apply(src rgb.Image) rgb.Image {
	mustValid("brightness", src)
	mustParam(b.Validate())
	var lut [256]uint8
	for v := range lut {
		lut[v] = uint8(min(max(v+int(b.Delta), 0), 255))
	}
	dst := rgb.New(src.W, src.H)
	for i, v := range src.Pix {
		dst.Pix[i] = lut[v]
	}
	return dst
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (Brightness) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }
