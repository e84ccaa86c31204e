//go:build gpu

package cuda

import (
	"errors"
	"os"
	"testing"

	"github.com/amt-dev/amt/internal/fakecuda"
)

// The fake driver (fakecuda/) is built by package fakecuda with the system
// C compiler, once per variant: "" is the default build (x86-64 fibers
// switched by amt_fiber_swap), "ucontext" the portable fallback the fake
// uses on other architectures.

// fakeLib returns the path of the fake libcuda.so.1 of a variant. Without
// a C compiler it skips the test, or fails it under CI=true.
func fakeLib(t testing.TB, variant string) string {
	t.Helper()
	return fakecuda.Lib(t, variant)
}

// fakeSet calls the fake's amt_fake_set(key, value) (see fakecuda.c).
func fakeSet(t testing.TB, lib, key string, value int64) {
	t.Helper()
	fakecuda.Set(t, lib, key, value)
}

// fakeStat reads a counter of the fake (amt_fake_stat).
func fakeStat(t testing.TB, lib, key string) int64 {
	t.Helper()
	return fakecuda.Stat(t, lib, key)
}

// openFake opens the fake device of a variant, with its switches reset
// now and when the test ends.
func openFake(t testing.TB, variant string) (*Device, string) {
	t.Helper()
	lib := fakeLib(t, variant)
	fakeSet(t, lib, "reset", 0)
	d, err := Open(Config{Lib: lib})
	if err != nil {
		t.Fatalf("opening the fake driver: %v", err)
	}
	t.Cleanup(func() {
		d.Close()
		fakeSet(t, lib, "reset", 0)
	})
	return d, lib
}

// openGPU opens the machine's real GPU through libcuda.so.1, or skips the
// test when there is none — unless AMT_GPU=1, which makes its absence a
// failure.
func openGPU(t testing.TB) *Device {
	t.Helper()
	d, err := Open(Config{Lib: "libcuda.so.1"})
	if err != nil {
		if os.Getenv("AMT_GPU") == "1" {
			t.Fatalf("AMT_GPU=1 but no GPU can be opened: %v", err)
		}
		if !Unavailable(err) {
			t.Fatalf("opening the GPU: %v", err)
		}
		t.Skipf("no GPU: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	t.Logf("GPU: %v", d)
	return d
}

// forEachDevice runs f on the fake driver (both fiber variants) and on
// the real GPU when there is one.
func forEachDevice(t *testing.T, f func(t *testing.T, d *Device)) {
	for _, variant := range []string{"", "ucontext"} {
		name := "fake"
		if variant != "" {
			name += "-" + variant
		}
		t.Run(name, func(t *testing.T) {
			d, _ := openFake(t, variant)
			f(t, d)
		})
	}
	t.Run("gpu", func(t *testing.T) { f(t, openGPU(t)) })
}

// must fails the test on an error.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// upload copies x to a new buffer freed when the test ends.
func upload(t testing.TB, d *Device, x []float32) *Buffer {
	t.Helper()
	b, err := d.Upload(x)
	must(t, err)
	t.Cleanup(func() { b.Free() })
	return b
}

// alloc allocates a buffer freed when the test ends.
func alloc(t testing.TB, d *Device, n int) *Buffer {
	t.Helper()
	b, err := d.Alloc(n)
	must(t, err)
	t.Cleanup(func() { b.Free() })
	return b
}

// download reads a buffer's first n values.
func download(t testing.TB, d *Device, b *Buffer, n int) []float32 {
	t.Helper()
	out := make([]float32, n)
	must(t, d.Read(out, b))
	return out
}

// errorsAs is errors.As for *Error.
func errorsAs(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
