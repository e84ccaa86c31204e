package kernels

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// threadTime returns the CPU time of the calling OS thread, or 0 where
// unknown (see threadtime_*.go).

var threadTime = threadCPUTime

// flops counts the nominal floating-point operations of the Gemm and
// convolution calls so far (see Flops).
var flops atomic.Uint64

// Flops returns the floating-point operations done by Gemm and Conv calls
// in this process so far, counted the conventional way: 2 per
// multiply-add of the plain algorithm (2·m·n·k for a GEMM,
// 2·OutC·OutH·OutW·(InC/Groups)·KH·KW per image for a convolution, also
// when Winograd does fewer multiplications), bias and activation not
// counted. Divided by time it gives GFLOP/s figures comparable across
// implementations.
func Flops() uint64 { return flops.Load() }

// PeakFLOPS measures the floating-point peak of the named kernel set's
// vector FMA on this machine: threads goroutines, each locked to an OS
// thread, run a loop of independent FMAs for about d, and the result is
// the sum of their rates in FLOP/s (2 per lane of each FMA). Each rate is
// taken over the thread's own CPU time where the OS reports it (Linux), so
// that other processes sharing the cores do not lower the figure: it is
// what a GEMM micro-kernel of that set could reach at best on threads
// cores, at the clock speed they run at with that many busy. Only the
// assembly sets have a peak to measure.
func PeakFLOPS(set string, threads int, d time.Duration) (float64, error) {
	s, err := lookupSet(set)
	if err != nil {
		return 0, err
	}
	if s.isa == isaGeneric {
		return 0, fmt.Errorf("kernel set %s: no FMA loop to measure", set)
	}
	if threads < 1 {
		return 0, fmt.Errorf("PeakFLOPS: %d threads", threads)
	}
	// One call of n iterations: AVX-512 768 flops, AVX2 192 per iteration.
	perIter := 192.0
	if s.isa == isaAVX512 {
		perIter = 768
	}
	const n = 1 << 14
	rates := make([]float64, threads)
	var start, wg sync.WaitGroup
	start.Add(1)
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start.Wait()
			t0, c0 := time.Now(), threadTime()
			calls := 0
			for calls < 4 || time.Since(t0) < d {
				fmaLoop(s.isa, n)
				calls++
			}
			el := time.Since(t0)
			if c := threadTime() - c0; c0 > 0 && c > 0 {
				el = c
			}
			rates[t] = float64(calls) * n * perIter / el.Seconds()
		}()
	}
	start.Done()
	wg.Wait()
	sum := 0.0
	for _, r := range rates {
		sum += r
	}
	return sum, nil
}
