package kernels

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestPeakFLOPS measures each available assembly set's FMA peak on one
// thread and checks it is plausible (between 1 and 1000 GFLOP/s per core),
// and that the portable set and unknown names are errors.
func TestPeakFLOPS(t *testing.T) {
	for _, s := range sets {
		if !s.ok || s.isa == isaGeneric {
			continue
		}
		p, err := PeakFLOPS(s.name, 1, 20*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f GFLOP/s on one thread", s.name, p/1e9)
		if p < 1e9 || p > 1e12 {
			t.Errorf("%s: peak %.3g FLOP/s is implausible", s.name, p)
		}
	}
	if _, err := PeakFLOPS("generic", 1, time.Millisecond); err == nil {
		t.Error("PeakFLOPS(generic): no error")
	}
	if _, err := PeakFLOPS("avx9", 1, time.Millisecond); err == nil {
		t.Error("PeakFLOPS(avx9): no error")
	}
}

// BenchmarkPeak reports each available assembly set's FMA peak with one
// thread and with GOMAXPROCS threads.
func BenchmarkPeak(b *testing.B) {
	for _, s := range sets {
		if !s.ok || s.isa == isaGeneric {
			continue
		}
		for _, th := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/threads=%d", s.name, th), func(b *testing.B) {
				var p float64
				for i := 0; i < b.N; i++ {
					var err error
					if p, err = PeakFLOPS(s.name, th, 50*time.Millisecond); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(p/1e9, "GFLOP/s")
			})
		}
	}
}

// TestFlops checks the operation count of Gemm and Conv calls.
func TestFlops(t *testing.T) {
	f0 := Flops()
	Gemm(false, false, 3, 5, 7, 1, make([]float32, 21), 7, make([]float32, 35), 5, 0, make([]float32, 15), 5)
	if d := Flops() - f0; d != 2*3*5*7 {
		t.Errorf("Gemm 3×5×7: %d flops, want %d", d, 2*3*5*7)
	}
	s := ConvShape{InC: 4, InH: 6, InW: 6, OutC: 6, KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 2}
	c, err := NewConv(s, make([]float32, 6*2*9), nil, Activation{})
	if err != nil {
		t.Fatal(err)
	}
	want := uint64(2 * 6 * 4 * 4 * 2 * 9) // OutC·OutH·OutW·(InC/Groups)·KH·KW multiply-adds
	if c.Flops() != want {
		t.Errorf("Conv.Flops = %d, want %d", c.Flops(), want)
	}
	f0 = Flops()
	c.Forward(make([]float32, 3*6*16), make([]float32, 3*4*36), 3)
	if d := Flops() - f0; d != 3*want {
		t.Errorf("3 images: %d flops counted, want %d", d, 3*want)
	}
}
