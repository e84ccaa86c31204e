package kernels

import (
	"syscall"
	"time"
)

// threadCPUTime returns the CPU time (user + system) of the calling OS
// thread, or 0 if the kernel does not report it.
func threadCPUTime() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
