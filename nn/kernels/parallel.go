package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The package's goroutines for splitting one kernel call: persistent
// workers that, after a task, keep polling for the next one for spinFor
// before they block (as ONNX Runtime's thread pool spins), because waking
// a blocked goroutine's thread takes tens of microseconds on a virtual
// machine, as long as a whole layer of a small network at batch 1: with a
// new goroutine per call (as before), batch-1 inference ran only ≈ 1.2×
// faster on two cores than on one. Workers and waiting callers poll
// without yielding but rarely (see spinUntil).
//
// Scheduling never changes results: a call's chunks are fixed before any
// runs, and a chunk that no worker has taken by the time the caller has
// finished its own is run by the caller (so that a call never waits for a
// worker that is busy elsewhere, and nested calls cannot deadlock).
//
// Each worker owns its scratch memory (a workspace) for good, and passes
// it to every chunk it runs; the caller's chunks get one from a free list,
// the same one call after call when a single goroutine runs inference.
// Memory that moves between cores is slow to write: on a 2-vCPU AMD EPYC
// (Zen 4) virtual machine, padding the input of a ResNet-20 layer (32
// channels of 16×16) into a buffer that the other core had read took 19 µs
// instead of 3, longer than half the layer's work.

// apartFloats is the gap, in float32 values (256 KiB), kept after every
// scratch buffer (growFloats) and every workspace, so that memory that
// different cores write at the same time never lies close together: each
// worker's share of a Winograd call's padded rows, each band of a shifted
// convolution, and each worker's V and M have a buffer of their own. On
// the 2-vCPU AMD EPYC (Zen 4) VM, two cores writing neighbouring buffers
// slowed each other although no cache line was shared, and only
// concurrently: a band's input padding of ResNet-20's stride-2 layer took
// 3.3–4.7 µs instead of 1.0 when its buffer lay right after the other
// band's (whichever core ran it; two processes on the two cores, one band
// each, were not slowed), 1.0–1.8 µs with 64 KiB between them and 1.0
// with 256 KiB; a Winograd block's input transform 4.2–12 µs instead of
// 2.2–2.5 when its V lay after the other core's. The gaps are multiples
// of 64 KiB, so the buffers keep their cache-set alignment: distance alone
// matters (cause not pinned down; no hardware counters on that VM).
// ResNet-20 at batch 1 on two cores, medians of 100-inference blocks,
// alternating processes: no gap 459–484 µs, 16 Ki values 462–465, 64 Ki
// values 445–459 in one fast spell of the VM; 860–1040 against 775–800 in
// a slow one. Outputs do not depend on where scratch memory lies.
const apartFloats = 64 << 10

// spinFor is how long an idle worker polls before it blocks. It covers the
// gaps between the layers of one inference (single-threaded operators),
// not the time between inferences: 1 ms, which covers the 160–320 µs
// between two ResNet-20 inferences of a benchmark loop, made three such
// loops sharing two cores 30–40 % slower, and a single loop no faster in
// interleaved runs.
const spinFor = 200 * time.Microsecond

// task is one chunk t of a parallel call.
type task struct {
	g     *group
	t     int
	taken atomic.Bool
}

// group is one parallel call: f over chunks 1..len(tasks) (0 is the
// caller's).
type group struct {
	f     func(t int, sc *workspace)
	tasks []task
	// pending counts the chunks not yet finished, plus waiting once the
	// caller has stopped polling it and blocks on done, which then
	// receives one value when the count reaches 0. A caller that sees 0
	// while polling returns at once: no channel operation, whose lock is
	// one more cache line to move between the cores (the join took ≈ 1 µs
	// after the worker's chunk ended, ResNet-20 at batch 1 on two cores).
	pending atomic.Int32
	done    chan struct{}
}

// waiting is the flag in group.pending of a caller blocked on done.
const waiting = 1 << 30

var (
	queue   = make(chan *task, 256)
	groups  freeList[group]
	started atomic.Int32 // workers started
	startMu sync.Mutex
)

// workspace is the working memory of one goroutine running kernel chunks:
// a worker's own, or the caller's (from workspaces). What a chunk keeps
// here never outlives the chunk.
type workspace struct {
	buf packBuf   // a packed B panel of the GEMM
	vm  []float32 // Winograd: a block's transformed input V, then its GEMMs' output M
	mat matrixB   // Winograd: the GEMMs' B operand (here rather than on the stack: it escapes)
	_   [apartFloats]float32
}

// workspaces holds the callers' scratch memory.
var workspaces freeList[workspace]

// run runs the task with the scratch memory sc if nobody else has taken
// it.
func (tk *task) run(sc *workspace) {
	if !tk.taken.CompareAndSwap(false, true) {
		return
	}
	g := tk.g
	g.f(tk.t, sc)
	if g.pending.Add(-1) == waiting {
		g.done <- struct{}{}
	}
}

// worker runs queued tasks, polling for spinFor after each (less when it
// finds itself descheduled, see spinUntil) before it blocks.
func worker() {
	sc := new(workspace)
	for {
		var tk *task
		select {
		case tk = <-queue:
		default:
			// Spin, then take the task that came or block for the next.
			spinUntil(func() bool { return len(queue) > 0 }, time.Now().Add(spinFor))
			tk = <-queue
		}
		tk.run(sc)
	}
}

// spinUntil busy-waits until ready reports true, the deadline passes or it
// finds itself descheduled, yielding its P only every yieldEvery:
// runtime.Gosched puts the goroutine on the global run queue, from which a
// P that has just become idle takes it, and once the P it left has work
// again (its caller resumed) nothing wakes another P for it. Measured
// inside ResNet-20 (with a 2 ms spin), a worker polling with a Gosched at
// every check was too late for 20 % of the two-block Winograd calls (the
// caller had run both blocks), a spinning one for 7 %.
func spinUntil(ready func() bool, deadline time.Time) {
	last := time.Now()
	yield := last.Add(yieldEvery)
	for !ready() {
		for range 64 {
			if ready() {
				return
			}
		}
		now := time.Now()
		if now.After(deadline) || now.Sub(last) > descheduled {
			return
		}
		if now.After(yield) {
			runtime.Gosched()
			now = time.Now()
			yield = now.Add(yieldEvery)
		}
		last = now
	}
}

// yieldEvery is how often a spinning goroutine lets the others of its P
// run (rarely: see spinUntil).
const yieldEvery = 100 * time.Microsecond

// descheduled is the gap between two checks of a spinning goroutine that
// shows that its thread lost its CPU (or that other goroutines ran on its
// P): then the CPUs are oversubscribed, and spinning would take time from
// the work that keeps them busy, so the goroutine stops and blocks. With
// three processes running ResNet-20 at batch 1 on two cores, spinning for
// 1 ms regardless made them 30–40 % slower than 200 µs did.
const descheduled = 50 * time.Microsecond

// startWorkers makes sure that n workers are running.
func startWorkers(n int) {
	if int(started.Load()) >= n {
		return
	}
	startMu.Lock()
	for int(started.Load()) < n {
		go worker()
		started.Add(1)
	}
	startMu.Unlock()
}

// parallel runs f(0, sc), …, f(w-1, sc), f(0) on the calling goroutine
// and the others on the package's workers (or on the caller, see above),
// each with the scratch memory of the goroutine running it, and returns
// when all are done.
func parallel(w int, f func(t int, sc *workspace)) {
	own := workspaces.get()
	defer workspaces.put(own)
	if w <= 1 {
		f(0, own)
		return
	}
	startWorkers(Threads() - 1)
	g := groups.get()
	if g.done == nil {
		g.done = make(chan struct{}, 1)
	}
	g.f = f
	if cap(g.tasks) < w-1 {
		g.tasks = make([]task, w-1)
	}
	g.tasks = g.tasks[:w-1]
	g.pending.Store(int32(w - 1))
	for i := range g.tasks {
		tk := &g.tasks[i]
		tk.g, tk.t = g, i+1
		tk.taken.Store(false)
		select {
		case queue <- tk:
		default: // queue full: the caller runs it below
		}
	}
	f(0, own)
	for i := range g.tasks {
		g.tasks[i].run(own)
	}
	// Wait for the chunks taken by workers: poll a while (they are about
	// as long as the caller's), then block.
	spinUntil(func() bool { return g.pending.Load() == 0 }, time.Now().Add(spinFor))
	for {
		n := g.pending.Load()
		if n == 0 {
			break
		}
		if g.pending.CompareAndSwap(n, n|waiting) {
			<-g.done
			break
		}
	}
	g.f = nil
	groups.put(g)
}

// parallelFor runs f over [0, n) split into at most w contiguous,
// non-empty chunks of equal size (the last may be shorter), as parallel
// runs its chunks: each with the scratch memory of the goroutine running
// it.
func parallelFor(n, w int, f func(i0, i1 int, sc *workspace)) {
	parts, size := chunks(n, w)
	if parts <= 1 {
		sc := workspaces.get()
		f(0, n, sc)
		workspaces.put(sc)
		return
	}
	parallel(parts, func(t int, sc *workspace) { f(t*size, min((t+1)*size, n), sc) })
}

// chunks returns parallelFor's split of n units over at most w
// goroutines: parts chunks of size units, chunk t units [t·size,
// min((t+1)·size, n)); one chunk for n ≤ 1 or w ≤ 1.
func chunks(n, w int) (parts, size int) {
	if n <= 0 {
		return 1, 0
	}
	w = max(1, min(w, n))
	size = (n + w - 1) / w
	return (n + size - 1) / size, size
}

// copyMinValues is the size of a copy below which copyWorkers keeps it on
// one goroutine.
const copyMinValues = 32 << 10

// copyWorkers returns how many goroutines a copy of values values made of
// independent parts (channels) may use: the cores no other kernel call is
// using when it is large enough. At batch 1 the padding and compaction
// copies around a convolution's GEMM would otherwise run on one core while
// the others wait. (Callers create the ParallelFor closure only when this
// is more than 1: a closure that may escape is allocated where it is made.)
func copyWorkers(values int) int {
	if values < copyMinValues {
		return 1
	}
	return freeThreads()
}
