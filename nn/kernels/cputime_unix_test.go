//go:build unix

package kernels

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) used by this process so far,
// or 0 when unknown. Benchmarks divide work by it to give figures that
// depend less on other processes' load than wall-clock time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
