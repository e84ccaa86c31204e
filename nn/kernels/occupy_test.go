package kernels

import "testing"

// TestOccupy checks that an occupied core is taken out of the cores a
// kernel call splits its work over, and given back on release.
func TestOccupy(t *testing.T) {
	const big = 1 << 30 // flops: worth every core
	free := workers(big)
	if want := Threads() - int(active.Load()) + 1; free != max(1, want) {
		t.Fatalf("workers = %d with %d kernel calls active, want %d", free, active.Load(), max(1, want))
	}
	release := Occupy()
	if got := workers(big); got != max(1, free-1) {
		t.Errorf("workers = %d while occupied, want %d", got, max(1, free-1))
	}
	release2 := Occupy()
	if got := workers(big); got != max(1, free-2) {
		t.Errorf("workers = %d while two cores are occupied, want %d", got, max(1, free-2))
	}
	release2()
	release()
	if got := workers(big); got != free {
		t.Errorf("workers = %d after release, want %d", got, free)
	}
	if got := workers(1); got != 1 {
		t.Errorf("workers = %d for a tiny call, want 1", got)
	}
}
