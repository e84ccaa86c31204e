package experiments

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestImageBudget: workers never hold more pixels than the budget, large
// images take turns, and a cancelled wait returns at once.
func TestImageBudget(t *testing.T) {
	sizes := []int{100, 10, 60, 60, 5, 100, 1000, 3}
	b := newImageBudget(100, func(i int) (int, int) { return sizes[i], 1 })
	var inFlight, peak atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(sizes); i += 4 {
				release, err := b.acquire(context.Background(), i)
				if err != nil {
					t.Error(err)
					return
				}
				n := inFlight.Add(int64(min(sizes[i], 100)))
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(time.Millisecond)
				inFlight.Add(-int64(min(sizes[i], 100)))
				release()
			}
		}(w)
	}
	wg.Wait()
	if p := peak.Load(); p != 100 {
		t.Errorf("peak %d pixels in flight, want exactly the budget of 100 (the 100-pixel images alone)", p)
	}
	// A wait for pixels that another image holds ends with the context.
	release, _ := b.acquire(context.Background(), 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := b.acquire(ctx, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("blocked acquire: %v", err)
	}
	release()
	if r, err := (*imageBudget)(nil).acquire(context.Background(), 0); err != nil || r == nil {
		t.Errorf("nil budget: %v", err)
	}
}
