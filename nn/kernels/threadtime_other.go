//go:build !linux

package kernels

import "time"

// threadCPUTime is not known here: PeakFLOPS falls back to wall-clock time.
func threadCPUTime() time.Duration { return 0 }
