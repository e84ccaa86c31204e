package kernels

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
)

// ThreadsEnv is the environment variable that sets Threads when the
// package is initialised: a positive integer; empty or unset, Threads
// follows GOMAXPROCS.
const ThreadsEnv = "AMT_THREADS"

// threads is the SetThreads value; 0: GOMAXPROCS.
var threads atomic.Int32

func init() {
	if v := os.Getenv(ThreadsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			// As for AMT_KERNELS: a one-line warning, not a panic at start-up.
			fmt.Fprintf(os.Stderr, "amt: %s=%q ignored: want a positive integer; using GOMAXPROCS (%d)\n", ThreadsEnv, v, runtime.GOMAXPROCS(0))
			return
		}
		SetThreads(n)
	}
}

// Threads returns how many goroutines may compute at once: the most a
// kernel call splits its work into, and the most images that package nn
// runs in parallel for a batch. It is the SetThreads value, at most
// GOMAXPROCS, or GOMAXPROCS when none was set.
func Threads() int {
	p := runtime.GOMAXPROCS(0)
	if n := int(threads.Load()); n > 0 {
		return min(n, p)
	}
	return p
}

// SetThreads sets Threads to n (n < 1: follow GOMAXPROCS again). It is
// for a program's start-up: it changes how later calls split their work,
// never their results.
func SetThreads(n int) {
	threads.Store(int32(max(0, min(n, 1<<16))))
}
