package kernels

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// paddedCounter is a counter alone in its cache line (and the next, which
// adjacent-line prefetchers fetch with it).
type paddedCounter struct {
	_ [128]byte
	v atomic.Int64
	_ [128]byte
}

// CoreRoundTrip measures how long two threads take to pass a value back
// and forth through memory: two goroutines, each locked to an OS thread,
// take turns incrementing a counter of their own that the other polls, so
// that every turn moves a cache line from one core to the other. It
// returns the median over rounds of the mean time of one round trip
// (two turns), each round lasting about d. Every hand-off of a parallel
// kernel call (a worker taking its chunk, the caller seeing it finished)
// pays about half of it, several times: on small layers at batch 1 it
// decides whether splitting the work pays (docs/performance.md). It
// needs GOMAXPROCS ≥ 2; the two threads run wherever the OS places them,
// normally on two cores, but on the same one when the others are busy,
// which the figure then shows.
func CoreRoundTrip(rounds int, d time.Duration) (time.Duration, error) {
	if runtime.GOMAXPROCS(0) < 2 {
		return 0, fmt.Errorf("CoreRoundTrip: GOMAXPROCS %d: two threads need at least 2", runtime.GOMAXPROCS(0))
	}
	if rounds < 1 || d <= 0 {
		return 0, fmt.Errorf("CoreRoundTrip: %d rounds of %v", rounds, d)
	}
	var ping, pong paddedCounter
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := int64(1); ; i++ {
			for ping.v.Load() < i {
				if stop.Load() {
					return
				}
			}
			pong.v.Store(i)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	times := make([]time.Duration, rounds)
	var i int64
	for r := range times {
		t0 := time.Now()
		deadline := t0.Add(d)
		n := 0
		for ; n == 0 || n%64 != 0 || time.Now().Before(deadline); n++ {
			i++
			ping.v.Store(i)
			for pong.v.Load() < i {
			}
		}
		times[r] = time.Since(t0) / time.Duration(n)
	}
	stop.Store(true)
	<-done
	slices.Sort(times)
	return times[rounds/2], nil
}
