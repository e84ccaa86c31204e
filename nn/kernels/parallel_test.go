package kernels

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// TestParallelNested: calls from several goroutines at once, each nesting
// further calls inside its chunks (more chunks than workers, workers busy
// elsewhere), run every chunk exactly once and return: a chunk no worker
// takes is run by its caller, so nothing waits for a busy worker. No two
// chunks ever hold the same workspace at once (an outer chunk keeps its
// own while its inner chunks run).
func TestParallelNested(t *testing.T) {
	const callers, outer, inner = 8, 5, 7
	var wg sync.WaitGroup
	counts := make([][outer][inner]atomic.Int32, callers)
	var holders sync.Map // *workspace → *atomic.Int32: chunks holding it
	var shared atomic.Int32
	hold := func(sc *workspace) func() {
		n, _ := holders.LoadOrStore(sc, new(atomic.Int32))
		if n.(*atomic.Int32).Add(1) != 1 {
			shared.Add(1)
		}
		return func() { n.(*atomic.Int32).Add(-1) }
	}
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				parallel(outer, func(i int, sc *workspace) {
					defer hold(sc)()
					parallel(inner, func(j int, sc *workspace) {
						defer hold(sc)()
						counts[c][i][j].Add(1)
					})
				})
			}
		}()
	}
	wg.Wait()
	if n := shared.Load(); n != 0 {
		t.Errorf("%d chunks used a workspace another chunk was using", n)
	}
	for c := range counts {
		for i := range counts[c] {
			for j := range counts[c][i] {
				if got := counts[c][i][j].Load(); got != 50 {
					t.Fatalf("caller %d chunk (%d, %d) ran %d times, want 50", c, i, j, got)
				}
			}
		}
	}
}

// TestParallelSlowChunks: a call whose workers' chunks outlast the
// caller's polling (spinFor) returns once they are done, not before, with
// their writes visible (checked by the race detector in -race runs); so
// does one whose workers finish at once (the caller sees that while
// polling and never blocks).
func TestParallelSlowChunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0))))
	for _, sleep := range []time.Duration{2 * spinFor, 0, spinFor / 2, 2 * spinFor} {
		var ran [3]bool
		parallel(len(ran), func(i int, sc *workspace) {
			if i > 0 {
				time.Sleep(sleep)
			}
			ran[i] = true
		})
		for i, ok := range ran {
			if !ok {
				t.Fatalf("chunks sleeping %v: parallel returned before chunk %d was done", sleep, i)
			}
		}
	}
}

// TestScratchApart: the scratch buffers that the workers of one call write
// at the same time — each worker's share of a Winograd call's padded rows,
// each band of a shifted convolution — are separate allocations with at
// least apartFloats values between them (see apartFloats), and growFloats
// caps a new buffer before its gap, so that growing it reallocates
// instead of writing into the gap.
func TestScratchApart(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	defer SetThreads(0)
	SetThreads(2)
	if b := growFloats(nil, 100); len(b) != 100 || cap(b) != 100 {
		t.Fatalf("growFloats(nil, 100): len %d cap %d, want 100 and 100", len(b), cap(b))
	}
	r := rand.New(rand.NewPCG(1, 2))
	// The strategies forced: refkernels builds would choose the reference.
	for _, tc := range []struct {
		name  string
		s     ConvShape
		strat strategy
		bufs  func(call *convCall) [][]float32
	}{
		{"winograd", conv3(16, 16, 32, 1), stratWinograd, func(call *convCall) [][]float32 { return call.pads }},
		{"winograd-groups", conv3(64, 64, 8, 1), stratWinograd, func(call *convCall) [][]float32 { return call.pads }},
		{"bands", conv3(16, 32, 32, 2), stratShifted, func(call *convCall) [][]float32 { return call.bandBufs }},
	} {
		s := tc.s
		c, err := newConv(s, randSlice(r, s.OutC*s.InC*9), randSlice(r, s.OutC), Activation{Kind: ActRelu}, tc.strat)
		if err != nil {
			t.Fatal(err)
		}
		c.Forward(make([]float32, s.OutC*s.OutH()*s.OutW()), randSlice(r, s.InC*s.InH*s.InW), 1)
		call := c.calls.get()
		bufs := tc.bufs(call)
		c.calls.put(call)
		if len(bufs) != 2 {
			t.Fatalf("%s (%s): %d scratch buffers for 2 workers, want 2", tc.name, c.Strategy(), len(bufs))
		}
		a, b := bufs[0], bufs[1]
		lo, hi := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
		n := cap(a)
		if hi < lo {
			lo, hi, n = hi, lo, cap(b)
		}
		if gap := int(hi-lo)/4 - n; gap < apartFloats {
			t.Errorf("%s: the workers' scratch buffers are %d values apart, want at least %d", tc.name, gap, apartFloats)
		}
	}
}

// TestChunks: parallelFor's split gives every worker the same number of
// units but the last, uses no more chunks than needed, and makes one
// chunk of nothing.
func TestChunks(t *testing.T) {
	for _, c := range []struct{ n, w, parts, size int }{
		{0, 2, 1, 0}, {1, 2, 1, 1}, {5, 0, 1, 5}, {5, 1, 1, 5},
		{16, 2, 2, 8}, {5, 4, 3, 2}, {7, 4, 4, 2}, {28, 3, 3, 10}, {3, 8, 3, 1},
	} {
		if parts, size := chunks(c.n, c.w); parts != c.parts || size != c.size {
			t.Errorf("chunks(%d, %d) = %d chunks of %d, want %d of %d", c.n, c.w, parts, size, c.parts, c.size)
		}
	}
}
