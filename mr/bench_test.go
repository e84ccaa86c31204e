package mr

import (
	"fmt"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
)

// BenchmarkApply measures one transform per MR on a CIFAR-sized and a
// COCO-sized image: BenchmarkApply/<mr>/<W>x<H>.
func BenchmarkApply(b *testing.B) {
	rels := []Relation{Blur{}, FlipLR{}, FlipUD{}, Grayscale{}, Invert{}, Rotation{Degrees: 30}, Shear{Degrees: 20}}
	for _, r := range rels {
		for _, sz := range [][2]int{{32, 32}, {640, 480}} {
			src := goldentest.RandomImage(sz[0], sz[1], 3)
			b.Run(fmt.Sprintf("%s/%dx%d", r.Name(), sz[0], sz[1]), func(b *testing.B) {
				b.SetBytes(int64(len(src.Pix)))
				for b.Loop() {
					r.Apply(src)
				}
			})
		}
	}
}

// BenchmarkApplyBoxes measures the box transform of 10 boxes.
func BenchmarkApplyBoxes(b *testing.B) {
	boxes := make([]rgb.Box, 10)
	for i := range boxes {
		boxes[i] = rgb.Box{X: float64(i * 10), Y: float64(i * 7), W: 50, H: 30}
	}
	for _, r := range []Relation{FlipLR{}, Rotation{Degrees: 30}} {
		b.Run(r.Name(), func(b *testing.B) {
			for b.Loop() {
				r.ApplyBoxes(boxes, 640, 480)
			}
		})
	}
}
