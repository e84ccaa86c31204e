package main

import (
	"runtime"
	"testing"

	"github.com/amt-dev/amt/nn/kernels"
)

func TestSpareP(t *testing.T) {
	p0 := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(p0)
	defer kernels.SetThreads(0)
	for _, c := range []struct {
		name                string
		gomaxprocs, threads string // the environment
		procs               int    // GOMAXPROCS before
		wantProcs, wantThr  int
	}{
		{"default", "", "", 2, 3, 2},
		{"default, 4 CPUs", "", "", 4, 5, 4},
		{"one CPU", "", "", 1, 1, 1},
		{"GOMAXPROCS chosen", "2", "", 2, 2, 2},
		{"AMT_THREADS chosen", "", "1", 2, 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", c.gomaxprocs)
			t.Setenv(kernels.ThreadsEnv, c.threads)
			runtime.GOMAXPROCS(c.procs)
			kernels.SetThreads(0)
			if c.threads != "" {
				kernels.SetThreads(1) // as the package does at start-up
			}
			spareP()
			if got := runtime.GOMAXPROCS(0); got != c.wantProcs {
				t.Errorf("GOMAXPROCS = %d, want %d", got, c.wantProcs)
			}
			if got := kernels.Threads(); got != c.wantThr {
				t.Errorf("kernels.Threads() = %d, want %d", got, c.wantThr)
			}
		})
	}
}
