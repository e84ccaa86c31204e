package kernels

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestParallelNested: calls from several goroutines at once, each nesting
// further calls inside its chunks (more chunks than workers, workers busy
// elsewhere), run every chunk exactly once and return: a chunk no worker
// takes is run by its caller, so nothing waits for a busy worker.
func TestParallelNested(t *testing.T) {
	const callers, outer, inner = 8, 5, 7
	var wg sync.WaitGroup
	counts := make([][outer][inner]atomic.Int32, callers)
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				parallel(outer, func(i int) {
					parallel(inner, func(j int) { counts[c][i][j].Add(1) })
				})
			}
		}()
	}
	wg.Wait()
	for c := range counts {
		for i := range counts[c] {
			for j := range counts[c][i] {
				if got := counts[c][i][j].Load(); got != 50 {
					t.Fatalf("caller %d chunk (%d, %d) ran %d times, want 50", c, i, j, got)
				}
			}
		}
	}
}
