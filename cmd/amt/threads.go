package main

import (
	"os"
	"runtime"

	"github.com/amt-dev/amt/nn/kernels"
)

// spareP gives the process one P more than it computes on: kernels.Threads
// stays at GOMAXPROCS's default (the CPUs amt may use), and GOMAXPROCS
// becomes one more. Every model run hands its P between two OS threads
// (Gorgonia's tape machine runs the graph on a new goroutine while the
// caller, locked to its thread, waits), and Linux often wakes the next
// thread on the CPU busy with the other worker, leaving one CPU idle for
// milliseconds; a spare P keeps another thread ready to run there. See
// kernels.Threads for the measurements. Neither changes any result.
//
// It does nothing when the user chose either number (the GOMAXPROCS or
// AMT_THREADS environment variable), or on a single CPU.
func spareP() {
	if os.Getenv("GOMAXPROCS") != "" || os.Getenv(kernels.ThreadsEnv) != "" {
		return
	}
	n := runtime.GOMAXPROCS(0)
	if n < 2 {
		return
	}
	kernels.SetThreads(n)
	runtime.GOMAXPROCS(n + 1)
}
