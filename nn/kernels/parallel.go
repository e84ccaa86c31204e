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
// a blocked goroutine's thread can take tens of microseconds on a virtual
// machine, as long as a whole layer of a small network at batch 1, which
// would eat most of what splitting the call gains. Workers and waiting
// callers poll without yielding but rarely (see spinUntil).
//
// Scheduling never changes results: a call's chunks are fixed before any
// runs, and a chunk that no worker has taken by the time the caller has
// finished its own is run by the caller (so that a call never waits for a
// worker that is busy elsewhere, and nested calls cannot deadlock).
//
// Each worker owns its scratch memory (a workspace) for good, and passes
// it to every chunk it runs; the caller's chunks get one from a free list,
// the same one call after call when a single goroutine runs inference.
// Memory that moves between cores is slow to write: writing into a
// buffer that another core has just read can take several times as long
// as writing into one that stays on the core, long enough to cost a
// small layer much of its work.

// apartFloats is the gap, in float32 values (256 KiB), kept after every
// scratch buffer (growFloats) and every workspace, so that memory that
// different cores write at the same time never lies close together: each
// worker's share of a Winograd call's padded rows, each band of a shifted
// convolution, and each worker's V and M have a buffer of their own. Two
// cores writing neighbouring buffers at the same time can slow each other
// although no cache line is shared (the cause is not pinned down: it is
// distance alone that matters, not sharing); a gap of 256 KiB keeps them
// apart. The gaps are multiples of 64 KiB, so the buffers keep their
// cache-set alignment. Outputs do not depend on where scratch memory lies.
const apartFloats = 64 << 10

// spinFor is how long an idle worker polls before it blocks. It covers the
// gaps between the layers of one inference (single-threaded operators),
// not the time between inferences: spinning through those as well gains
// a single loop of inferences nothing and takes CPU time from other
// processes sharing the cores.
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
	// one more cache line to move between the cores, a delay comparable
	// to a small chunk.
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
// again (its caller resumed) nothing wakes another P for it, so a worker
// yielding at every check would often arrive after its caller has run
// the chunk itself.
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
// the work that keeps them busy, so the goroutine stops and blocks.
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
