//go:build !unix

package bandit

// cpuTime is unavailable here; benchmarks then report 0 cpu-ns/op.
func cpuTime() int64 { return 0 }
