package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// reportFlops reports GFLOP/s of wall-clock time and, when the process CPU
// time is known, GFLOP per CPU-second (all threads), which depends less on
// the load of other processes.
func reportFlops(b *testing.B, flops float64, cpu0 time.Duration) {
	total := flops * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu := cpuTime() - cpu0; cpu0 > 0 && cpu > 0 {
		b.ReportMetric(total/cpu.Seconds()/1e9, "GFLOP/cpu-s")
	}
}

// conv3 and conv1 build the ConvShape of a square 3×3 (pad 1) or 1×1 layer.
func conv3(in, out, size, stride int) ConvShape {
	return ConvShape{InC: in, InH: size, InW: size, OutC: out, KH: 3, KW: 3, StrideH: stride, StrideW: stride,
		PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}
}

func conv1(in, out, size int) ConvShape {
	return ConvShape{InC: in, InH: size, InW: size, OutC: out, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1}
}

// layer is one convolution of a model, run count times per image.
type layer struct {
	name  string
	s     ConvShape
	count int
}

// fire returns the three convolutions of a SqueezeNet fire module.
func fire(name string, in, sq, ex, size int) []layer {
	return []layer{
		{name + "-squeeze", conv1(in, sq, size), 1},
		{name + "-expand1", conv1(sq, ex, size), 1},
		{name + "-expand3", conv3(sq, ex, size, 1), 1},
	}
}

// modelLayers lists the convolutions of the shipped models (ResNet-20's
// repeated blocks are counted, not repeated).
var modelLayers = func() map[string][]layer {
	sq := []layer{{"conv1", ConvShape{InC: 3, InH: 224, InW: 224, OutC: 64, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, Groups: 1}, 1}}
	for _, f := range []struct {
		name             string
		in, sq, ex, size int
	}{
		{"fire2", 64, 16, 64, 55}, {"fire3", 128, 16, 64, 55},
		{"fire4", 128, 32, 128, 27}, {"fire5", 256, 32, 128, 27},
		{"fire6", 256, 48, 192, 13}, {"fire7", 384, 48, 192, 13},
		{"fire8", 384, 64, 256, 13}, {"fire9", 512, 64, 256, 13},
	} {
		sq = append(sq, fire(f.name, f.in, f.sq, f.ex, f.size)...)
	}
	sq = append(sq, layer{"conv10", conv1(512, 10, 13), 1})
	rn := []layer{
		{"conv1", conv3(3, 16, 32, 1), 1},
		{"stage1", conv3(16, 16, 32, 1), 6},
		{"stage2-down", conv3(16, 32, 32, 2), 1},
		{"stage2", conv3(32, 32, 16, 1), 5},
		{"stage3-down", conv3(32, 64, 16, 2), 1},
		{"stage3", conv3(64, 64, 8, 1), 5},
	}
	yolo := []layer{
		{"conv1", conv3(3, 16, 416, 1), 1},
		{"conv2", conv3(16, 32, 208, 1), 1},
		{"conv3", conv3(32, 64, 104, 1), 1},
		{"conv4", conv3(64, 128, 52, 1), 1},
		{"conv5", conv3(128, 256, 26, 1), 1},
		{"conv6", conv3(256, 512, 13, 1), 1},
		{"conv7", conv3(512, 1024, 13, 1), 1},
		{"conv8", conv1(1024, 256, 13), 1},
		{"conv9", conv3(256, 512, 13, 1), 1},
		{"head13", conv1(512, 255, 13), 1},
		{"conv11", conv1(256, 128, 13), 1},
		{"conv12", conv3(384, 256, 26, 1), 1},
		{"head26", conv1(256, 255, 26), 1},
	}
	return map[string][]layer{"squeezenet": sq, "resnet20": rn, "yolov3tiny": yolo}
}()

func (s ConvShape) flops() float64 {
	return 2 * float64(s.OutC) * float64(s.OutH()*s.OutW()) * float64(s.InC/s.Groups*s.KH*s.KW)
}

// BenchmarkConv times every convolution layer of the shipped models at
// batch 1 with the fast kernels and the naive reference, reporting GFLOP/s.
//
//	go test ./nn/kernels -run '^$' -bench 'Conv/squeezenet' -count 5
func BenchmarkConv(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, model := range []string{"squeezenet", "resnet20", "yolov3tiny"} {
		for _, l := range modelLayers[model] {
			s := l.s
			w := randSlice(r, s.OutC*s.InC/s.Groups*s.KH*s.KW)
			bias := randSlice(r, s.OutC)
			src := randSlice(r, s.InC*s.InH*s.InW)
			dst := make([]float32, s.OutC*s.OutH()*s.OutW())
			act := Activation{Kind: ActRelu}
			conv, err := NewConv(s, w, bias, act)
			if err != nil {
				b.Fatal(err)
			}
			impls := []string{"fast", "naive"}
			im2col := conv
			if conv.strategy != stratIm2col && conv.strategy != stratDirect {
				// The general strategy, for comparison.
				if im2col, err = newConv(s, w, bias, act, stratIm2col); err != nil {
					b.Fatal(err)
				}
				impls = append(impls, "im2col")
			}
			var wino *Conv
			if winogradApplies(s) && conv.strategy != stratWinograd {
				if wino, err = newConv(s, w, bias, act, stratWinograd); err != nil {
					b.Fatal(err)
				}
				impls = append(impls, "winograd")
			}
			for _, impl := range impls {
				b.Run(fmt.Sprintf("%s/%s/%s", model, l.name, impl), func(b *testing.B) {
					b.ReportAllocs()
					cpu0 := cpuTime()
					for i := 0; i < b.N; i++ {
						if impl == "winograd" {
							wino.Forward(dst, src, 1)
						} else if impl == "im2col" {
							im2col.Forward(dst, src, 1)
						} else if impl == "fast" {
							conv.Forward(dst, src, 1)
						} else {
							naiveConv(s, w, bias, act, dst, src, 1)
						}
					}
					reportFlops(b, s.flops(), cpu0)
				})
			}
		}
	}
}

// BenchmarkGemm times square GEMMs, reporting GFLOP/s.
func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{64, 256, 512, 1024} {
		a, bm, c := randSlice(r, n*n), randSlice(r, n*n), make([]float32, n*n)
		for _, impl := range []string{"fast", "naive"} {
			if impl == "naive" && n > 512 {
				continue
			}
			b.Run(fmt.Sprintf("%d/%s", n, impl), func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					if impl == "fast" {
						Gemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n)
					} else {
						naiveGemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n)
					}
				}
				reportFlops(b, 2*float64(n*n*n), cpu0)
			})
		}
	}
}

// BenchmarkKernel times each available kernel set's micro-kernel alone
// (one full tile, depth 256, operands in L1): the single-core ceiling.
func BenchmarkKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	const k = 256
	for _, s := range sets {
		if !s.ok {
			continue
		}
		a, bp, c := randSlice(r, k*s.mr), randSlice(r, k*s.nr), make([]float32, s.mr*s.nr)
		offs := packedOffsets(s.nr)[:k]
		var ep epilogue
		b.Run(fmt.Sprintf("%s/%dx%d", s.name, s.mr, s.nr), func(b *testing.B) {
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				s.gemm(k, a, 4*k, bp, offs, (k-1)*s.nr, c, s.nr, &ep, s.mr, s.nr, 0)
			}
			reportFlops(b, float64(2*s.mr*s.nr*k), cpu0)
		})
	}
}

// BenchmarkMaxPool times SqueezeNet 1.1's three max pools (3×3/2, ceil
// mode) and yolov3-tiny's first (2×2/2), batch 1.
func BenchmarkMaxPool(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, c := range []struct {
		name   string
		planes int
		s      PoolShape
	}{
		{"squeezenet/pool1", 64, PoolShape{InH: 111, InW: 111, OutH: 55, OutW: 55, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
		{"squeezenet/pool3", 128, PoolShape{InH: 55, InW: 55, OutH: 27, OutW: 27, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
		{"squeezenet/pool5", 256, PoolShape{InH: 27, InW: 27, OutH: 13, OutW: 13, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
		{"yolov3tiny/pool1", 16, PoolShape{InH: 416, InW: 416, OutH: 208, OutW: 208, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
	} {
		src := randSlice(r, c.planes*c.s.InH*c.s.InW)
		dst := make([]float32, c.planes*c.s.OutH*c.s.OutW)
		for _, impl := range []string{"fast", "naive"} {
			b.Run(c.name+"/"+impl, func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					if impl == "fast" {
						MaxPool(dst, src, c.planes, c.s)
					} else {
						naiveMaxPool(dst, src, c.planes, c.s)
					}
				}
				if cpu := cpuTime() - cpu0; cpu0 > 0 && cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
				}
			})
		}
	}
}

// BenchmarkConvMaxPool times a convolution and the max pooling after it,
// fused (ConvMaxPool) and one after the other (Conv.Forward, MaxPool), at
// batch 1: SqueezeNet's first layer and pool (shifted GEMM, 3×3/2) and
// yolov3-tiny's first two (shifted, Winograd; 2×2/2). A cold variant
// evicts the caches (32 MiB written) before each call, untimed, as the
// layers before it do inside a model.
//
//	go test ./nn/kernels -run '^$' -bench ConvMaxPool -count 5
func BenchmarkConvMaxPool(b *testing.B) {
	r := rand.New(rand.NewPCG(6, 6))
	pool2 := func(in int) PoolShape {
		return PoolShape{InH: in, InW: in, OutH: in / 2, OutW: in / 2, KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}
	}
	junk := make([]float32, 8<<20)
	for _, c := range []struct {
		name string
		s    ConvShape
		p    PoolShape
	}{
		{"squeezenet/conv1", modelLayers["squeezenet"][0].s, PoolShape{InH: 111, InW: 111, OutH: 55, OutW: 55, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}},
		{"yolov3tiny/conv1", modelLayers["yolov3tiny"][0].s, pool2(416)},
		{"yolov3tiny/conv2", modelLayers["yolov3tiny"][1].s, pool2(208)},
	} {
		s := c.s
		conv, err := NewConv(s, randSlice(r, s.OutC*s.InC*s.KH*s.KW), randSlice(r, s.OutC), Activation{Kind: ActRelu})
		if err != nil {
			b.Fatal(err)
		}
		cp, err := NewConvMaxPool(conv, c.p)
		if err != nil {
			b.Fatal(err)
		}
		src := randSlice(r, s.InC*s.InH*s.InW)
		mid := make([]float32, s.OutC*s.OutH()*s.OutW())
		dst := make([]float32, s.OutC*c.p.OutH*c.p.OutW)
		for _, impl := range []string{"fused", "separate"} {
			for _, cold := range []bool{false, true} {
				name := c.name + "/" + impl
				if cold {
					name += "/cold"
				}
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; i < b.N; i++ {
						if cold {
							b.StopTimer()
							for j := range junk {
								junk[j]++
							}
							b.StartTimer()
						}
						if impl == "fused" {
							cp.Forward(dst, src, 1)
						} else {
							conv.Forward(mid, src, 1)
							MaxPool(dst, mid, s.OutC, c.p)
						}
					}
				})
			}
		}
	}
}

// BenchmarkConvModel runs all the convolutions of a model for one image
// (ResNet-20's repeated layers repeated), reporting ms/img and GFLOP/s.
//
//	go test ./nn/kernels -run '^$' -bench ConvModel -count 5
func BenchmarkConvModel(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, model := range []string{"squeezenet", "resnet20", "yolov3tiny"} {
		type prepared struct {
			l        layer
			conv     *Conv
			w, bias  []float32
			src, dst []float32
		}
		var ps []prepared
		var flops float64
		for _, l := range modelLayers[model] {
			s := l.s
			p := prepared{l: l, w: randSlice(r, s.OutC*s.InC/s.Groups*s.KH*s.KW), bias: randSlice(r, s.OutC),
				src: randSlice(r, s.InC*s.InH*s.InW), dst: make([]float32, s.OutC*s.OutH()*s.OutW())}
			var err error
			if p.conv, err = NewConv(s, p.w, p.bias, Activation{Kind: ActRelu}); err != nil {
				b.Fatal(err)
			}
			ps = append(ps, p)
			flops += s.flops() * float64(l.count)
		}
		for _, impl := range []string{"fast", "naive"} {
			b.Run(model+"/"+impl, func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					for _, p := range ps {
						for range p.l.count {
							if impl == "fast" {
								p.conv.Forward(p.dst, p.src, 1)
							} else {
								naiveConv(p.l.s, p.w, p.bias, Activation{Kind: ActRelu}, p.dst, p.src, 1)
							}
						}
					}
				}
				reportFlops(b, flops, cpu0)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/img")
			})
		}
	}
}
