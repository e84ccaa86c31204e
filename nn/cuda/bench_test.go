//go:build gpu

package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/nn/kernels"
)

// BenchmarkConv times convolution layers of the shipped models through the
// fake driver (the speed of the tests' whole-model runs) and, where there
// is one, on the GPU. It reports GFLOP/s (2 per multiply-add).
//
//	go test -tags gpu -run '^$' -bench Conv ./nn/cuda
func BenchmarkConv(b *testing.B) {
	layers := []struct {
		name string
		s    kernels.ConvShape
		n    int
	}{
		{"resnet20-16x32x32-3x3-b60", shape(16, 32, 32, 16, 3, 3, pad(1, 1, 1, 1)), 60},
		{"squeezenet-conv1-224-b1", shape(3, 224, 224, 64, 3, 3, func(s *kernels.ConvShape) { s.StrideH, s.StrideW = 2, 2 }), 1},
		{"squeezenet-fire-expand3x3-b1", shape(16, 55, 55, 64, 3, 3, pad(1, 1, 1, 1)), 1},
		{"depthwise-32x56x56-b1", shape(32, 56, 56, 32, 3, 3, func(s *kernels.ConvShape) { s.Groups = 32; pad(1, 1, 1, 1)(s) }), 1},
	}
	for _, dev := range []string{"fake", "gpu"} {
		b.Run(dev, func(b *testing.B) {
			var d *Device
			if dev == "fake" {
				d, _ = openFake(b, "")
			} else {
				d = openGPU(b)
			}
			r := rand.New(rand.NewPCG(9, 9))
			for _, l := range layers {
				s := l.s
				conv, err := d.NewConv(ConvSpec{Shape: s, Weight: randFloats(r, s.OutC*s.InC/s.Groups*s.KH*s.KW), Bias: randFloats(r, s.OutC), Act: relu})
				must(b, err)
				x := upload(b, d, randFloats(r, l.n*s.InC*s.InH*s.InW))
				y := alloc(b, d, l.n*s.OutC*s.OutH()*s.OutW())
				flops := 2 * float64(l.n*s.OutC*s.OutH()*s.OutW()*s.InC/s.Groups*s.KH*s.KW)
				b.Run(l.name+"/"+conv.Strategy(), func(b *testing.B) {
					for range b.N {
						must(b, conv.Forward(y, x, l.n))
					}
					must(b, d.Sync())
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
				must(b, conv.Free())
			}
		})
	}
}
