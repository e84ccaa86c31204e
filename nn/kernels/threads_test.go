package kernels

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestThreads(t *testing.T) {
	defer SetThreads(0)
	p := runtime.GOMAXPROCS(0)
	for _, c := range []struct{ set, want int }{
		{0, p},
		{-3, p},
		{1, 1},
		{p, p},
		{p + 5, p}, // never more than GOMAXPROCS
	} {
		SetThreads(c.set)
		if got := Threads(); got != c.want {
			t.Errorf("SetThreads(%d): Threads() = %d, want %d (GOMAXPROCS %d)", c.set, got, c.want, p)
		}
	}
}

// TestThreadsBoundSplits checks that a kernel call splits its work over at
// most Threads goroutines, whatever GOMAXPROCS is.
func TestThreadsBoundSplits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer SetThreads(0)
	for _, n := range []int{1, 2, 3} {
		SetThreads(n)
		var chunks, running, most atomic.Int32
		enter() // as a kernel call does before it asks for workers
		parallel(workers(1<<30), func(int, *workspace) {
			chunks.Add(1)
			r := running.Add(1)
			for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
			}
			running.Add(-1)
		})
		leave()
		if got := chunks.Load(); got != int32(n) {
			t.Errorf("Threads %d: a large call ran in %d chunks, want %d", n, got, n)
		}
		if most.Load() > int32(n) {
			t.Errorf("Threads %d: %d chunks ran at once", n, most.Load())
		}
	}
}
