package kernels

import "sync"

// freeList is a mutex-guarded stack of reusable scratch objects. Unlike a
// sync.Pool it never drops them at garbage collection and any goroutine
// reuses any object (a sync.Pool's per-P private slot is not shared, so a
// goroutine that moves between Ps misses and allocates): big scratch
// buffers stay allocation-free in steady state. It keeps at most as many
// objects as were ever in use at once.
type freeList[T any] struct {
	mu    sync.Mutex
	items []*T
}

// get returns a free object, or a new zero one.
func (f *freeList[T]) get() *T {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.items); n > 0 {
		x := f.items[n-1]
		f.items[n-1] = nil
		f.items = f.items[:n-1]
		return x
	}
	return new(T)
}

// put returns x to the list.
func (f *freeList[T]) put(x *T) {
	f.mu.Lock()
	f.items = append(f.items, x)
	f.mu.Unlock()
}

// floatList recycles float32 scratch slices of varying sizes.
type floatList struct{ l freeList[[]float32] }

// get returns a scratch slice of n values (contents undefined).
func (f *floatList) get(n int) *[]float32 {
	p := f.l.get()
	*p = growFloats(*p, n)
	return p
}

func (f *floatList) put(p *[]float32) { f.l.put(p) }

// growFloats returns buf resliced to n values, reallocated if too short
// (contents undefined). A new buffer is followed by apartFloats values
// that nothing uses; its capacity ends before them.
func growFloats(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n+apartFloats)[:n:n]
	}
	return buf[:n]
}

// regrowParts returns parts zeroed buffers, part t of size(t) values, one
// allocation each (see apartFloats), reusing those of bufs.
func regrowParts(bufs [][]float32, parts int, size func(t int) int) [][]float32 {
	out := make([][]float32, parts)
	for t := range out {
		var b []float32
		if t < len(bufs) {
			b = bufs[t]
		}
		out[t] = growFloats(b, size(t))
		clear(out[t])
	}
	return out
}
