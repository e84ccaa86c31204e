package mr

import (
	"fmt"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
)

// BenchmarkCorruptions measures every corruption at severities 1 and 5 on
// a CIFAR-sized and an ImageNet-sized image (issue #37's budget: 2 ms at
// 32×32, 30 ms at 224×224, one core):
// BenchmarkCorruptions/<name>:<severity>/<W>x<H>. Besides the wall time
// it reports cpu-ns/op, the process's user+system CPU time per operation
// (getrusage), which a machine shared with other jobs inflates less; run
// it with GOMAXPROCS=1.
func BenchmarkCorruptions(b *testing.B) {
	for _, in := range corruptionEntries() {
		for _, s := range []float64{1, 5} {
			r, err := New(in.Name, s)
			if err != nil {
				b.Fatal(err)
			}
			for _, sz := range []int{32, 224} {
				src := goldentest.RandomImage(sz, sz, 3)
				b.Run(fmt.Sprintf("%s/%dx%d", r.Name(), sz, sz), func(b *testing.B) {
					b.SetBytes(int64(len(src.Pix)))
					c0 := cpuTime()
					n := 0
					for b.Loop() {
						r.Apply(src)
						n++
					}
					b.ReportMetric(float64(cpuTime()-c0)/float64(n), "cpu-ns/op")
				})
			}
		}
	}
}
