//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestDeviceMemory(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		if d.Name() == "" || d.TotalMem() <= 0 {
			t.Errorf("device %q with %d bytes", d.Name(), d.TotalMem())
		}
		x := []float32{1, 2, 3, 4, 5, 6, 7, 8}
		b := upload(t, d, x)
		if got := download(t, d, b, len(x)); !slices.Equal(got, x) {
			t.Errorf("round trip: got %v, want %v", got, x)
		}
		// A view reads and writes part of the buffer.
		must(t, d.Write(b.Slice(2, 3), []float32{-1, -2, -3}))
		if got, want := download(t, d, b, 8), []float32{1, 2, -1, -2, -3, 6, 7, 8}; !slices.Equal(got, want) {
			t.Errorf("after writing a view: got %v, want %v", got, want)
		}
		got := make([]float32, 2)
		must(t, d.Read(got, b.Slice(6, 2)))
		if !slices.Equal(got, []float32{7, 8}) {
			t.Errorf("reading a view: got %v", got)
		}
		c := alloc(t, d, 8)
		must(t, d.Fill(c, float32(math.Inf(-1))))
		must(t, d.Copy(c.Slice(1, 3), b.Slice(0, 3)))
		inf := float32(math.Inf(-1))
		if got, want := download(t, d, c, 8), []float32{inf, 1, 2, -1, inf, inf, inf, inf}; !slices.Equal(got, want) {
			t.Errorf("fill and copy: got %v, want %v", got, want)
		}
		ints := []int32{3, -1, 1 << 30}
		ib, err := d.UploadInt32(ints)
		must(t, err)
		gotInts := make([]int32, 3)
		must(t, d.ReadInt32(gotInts, ib))
		if !slices.Equal(gotInts, ints) {
			t.Errorf("int32 round trip: got %v", gotInts)
		}
		must(t, ib.Free())
		free, total, err := d.MemInfo()
		must(t, err)
		if free <= 0 || free > total {
			t.Errorf("MemInfo: %d free of %d", free, total)
		}
	})
}

// TestBufferMisuse checks that misuse gives an error naming the problem
// rather than a crash or a silent copy.
func TestBufferMisuse(t *testing.T) {
	d, _ := openFake(t, "")
	b := alloc(t, d, 4)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"read past the end", d.Read(make([]float32, 5), b), "has 4 values, 5 needed"},
		{"write past the end", d.Write(b, make([]float32, 5)), "has 4 values, 5 needed"},
		{"nil buffer", d.Read(make([]float32, 1), nil), "nil buffer"},
		{"zero-size alloc", func() error { _, err := d.Alloc(0); return err }(), "0 values"},
		{"copy too large", d.Copy(b.Slice(0, 2), b), "has 2 values, 4 needed"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, c.err, c.want)
		}
	}
	x, err := d.Alloc(4)
	must(t, err)
	must(t, x.Free())
	if err := x.Free(); err == nil || !strings.Contains(err.Error(), "freed twice") {
		t.Errorf("second Free: %v", err)
	}
	if err := d.Write(x, []float32{1}); err == nil || !strings.Contains(err.Error(), "was freed") {
		t.Errorf("Write after Free: %v", err)
	}
	other, _ := openFake(t, "ucontext")
	if err := other.Write(b, []float32{1}); err == nil || !strings.Contains(err.Error(), "another device") {
		t.Errorf("buffer of another device: %v", err)
	}
}

// TestConcurrentUse runs operations from several goroutines at once; the
// fake driver keeps the current context per OS thread, as the real one
// does, so this checks that every call makes the device's context current
// on the thread it runs on.
func TestConcurrentUse(t *testing.T) {
	d, _ := openFake(t, "")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := []float32{float32(g), -1, 2, float32(-g)}
			for range 50 {
				b, err := d.Upload(x)
				if err != nil {
					errs <- err
					return
				}
				err = d.Unary(UnaryNeg, b, b, 0, 0)
				got := make([]float32, 4)
				if err == nil {
					err = d.Read(got, b)
				}
				if err == nil && (got[0] != -x[0] || got[3] != -x[3]) {
					err = fmt.Errorf("goroutine %d: got %v for %v", g, got, x)
				}
				if err2 := b.Free(); err == nil {
					err = err2
				}
				if err != nil {
					errs <- err
					return
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClosedDevice(t *testing.T) {
	lib := fakeLib(t, "")
	d, err := Open(Config{Lib: lib})
	must(t, err)
	b, err := d.Alloc(4)
	must(t, err)
	must(t, d.Close())
	if n := fakeStat(t, lib, "allocated"); n != 0 {
		t.Errorf("%d bytes allocated after the context was released", n)
	}
	must(t, d.Close()) // twice is harmless
	if err := d.Write(b, []float32{1}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Write after Close: %v", err)
	}
	if _, err := d.Alloc(1); err == nil {
		t.Error("Alloc after Close: no error")
	}
}
