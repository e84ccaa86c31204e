//go:build !unix

package kernels

import "time"

// cpuTime returns 0: the process CPU time is not measured on this system.
func cpuTime() time.Duration { return 0 }
