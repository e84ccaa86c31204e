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
// faster on two cores than on one. A worker polls with runtime.Gosched
// between checks, so that other goroutines of its P still run.
//
// Scheduling never changes results: a call's chunks are fixed before any
// runs, and a chunk that no worker has taken by the time the caller has
// finished its own is run by the caller (so that a call never waits for a
// worker that is busy elsewhere, and nested calls cannot deadlock).

// spinFor is how long an idle worker polls before it blocks. It covers the
// gaps between the layers of one inference (single-threaded operators),
// not the time between inferences.
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
	f       func(t int)
	tasks   []task
	pending atomic.Int32  // chunks not yet finished
	done    chan struct{} // receives one value when pending reaches 0
}

var (
	queue   = make(chan *task, 256)
	groups  freeList[group]
	started atomic.Int32 // workers started
	startMu sync.Mutex
)

// run runs the task if nobody else has taken it.
func (tk *task) run() {
	if !tk.taken.CompareAndSwap(false, true) {
		return
	}
	g := tk.g
	g.f(tk.t)
	if g.pending.Add(-1) == 0 {
		g.done <- struct{}{}
	}
}

// worker runs queued tasks, polling for spinFor after each before it
// blocks.
func worker() {
	for {
		var tk *task
		select {
		case tk = <-queue:
		default:
			deadline := time.Now().Add(spinFor)
			for tk == nil {
				runtime.Gosched()
				select {
				case tk = <-queue:
				default:
					if time.Now().After(deadline) {
						tk = <-queue
					}
				}
			}
		}
		tk.run()
	}
}

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

// parallel runs f(0), …, f(w-1), f(0) on the calling goroutine and the
// others on the package's workers (or on the caller, see above), and
// returns when all are done.
func parallel(w int, f func(t int)) {
	if w <= 1 {
		f(0)
		return
	}
	startWorkers(runtime.GOMAXPROCS(0) - 1)
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
	f(0)
	for i := range g.tasks {
		g.tasks[i].run()
	}
	// Wait for the chunks taken by workers: poll a little (they are about
	// as long as the caller's), then block.
	for spin := 0; g.pending.Load() != 0 && spin < 1000; spin++ {
		runtime.Gosched()
	}
	<-g.done
	g.f = nil
	groups.put(g)
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
	return max(1, runtime.GOMAXPROCS(0)-int(active.Load())+1)
}
