package kernels

import (
	"runtime"
	"testing"
	"time"
)

// TestCoreRoundTrip checks that the measured round trip is plausible
// (more than a nanosecond: the value really went to another thread and
// back; less than a second, even when the two threads share a busy CPU
// and take turns at the scheduler's pace) and that one P is refused.
func TestCoreRoundTrip(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: the two threads cannot run at once") // CI machines have 2
	}
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	rt, err := CoreRoundTrip(3, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("round trip %v", rt)
	if rt < time.Nanosecond || rt > time.Second {
		t.Errorf("round trip %v is implausible", rt)
	}
	runtime.GOMAXPROCS(1)
	if _, err := CoreRoundTrip(1, time.Millisecond); err == nil {
		t.Error("GOMAXPROCS 1: no error")
	}
	runtime.GOMAXPROCS(2)
	if _, err := CoreRoundTrip(0, time.Millisecond); err == nil {
		t.Error("0 rounds: no error")
	}
}
