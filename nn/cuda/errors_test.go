//go:build gpu

package cuda

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// The error paths, through the fake driver's injected failures: each
// gives an error naming the driver call and the driver's own name and
// description of the failure, and Unavailable separates "no GPU here"
// from failures while using one.

func TestNoDriver(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libcuda.so.1")
	_, err := Open(Config{Lib: lib})
	if !errors.Is(err, ErrNoDriver) || !Unavailable(err) || !strings.Contains(err.Error(), lib) {
		t.Fatalf("Open without a driver: %v", err)
	}
	t.Log(err)
}

func TestDriverFromEnvironment(t *testing.T) {
	lib := fakeLib(t, "")
	t.Setenv(libEnv, lib)
	d, err := Open(Config{})
	if err != nil {
		t.Fatalf("Open with $%s: %v", libEnv, err)
	}
	defer d.Close()
	if !strings.Contains(d.String(), lib) || !strings.Contains(d.Name(), "fake") {
		t.Errorf("device %v, want the fake driver at %s", d, lib)
	}
}

func TestNoDevice(t *testing.T) {
	lib := fakeLib(t, "")
	fakeSet(t, lib, "fail_init", int64(ErrNoDevice))
	defer fakeSet(t, lib, "reset", 0)
	_, err := Open(Config{Lib: lib})
	want := "cuda: cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
	if !errors.Is(err, ErrNoDevice) || !Unavailable(err) || err == nil || err.Error() != want {
		t.Fatalf("Open without a device: %v, want %q", err, want)
	}
	fakeSet(t, lib, "reset", 0)
	_, err = Open(Config{Lib: lib, Ordinal: 1})
	if !errors.Is(err, ErrInvalidDevice) || !Unavailable(err) {
		t.Fatalf("Open of the second of one device: %v", err)
	}
}

func TestOutOfMemory(t *testing.T) {
	d, lib := openFake(t, "")
	fakeSet(t, lib, "mem_limit", 1<<20)
	b, err := d.Alloc(3 << 16) // 768 KiB
	must(t, err)
	_, err = d.Alloc(1 << 17)
	e, ok := errorsAs(err)
	if !errors.Is(err, ErrOutOfMemory) || Unavailable(err) || !ok || e.Call != "cuMemAlloc_v2" ||
		!strings.Contains(err.Error(), "524288 bytes") || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("Alloc beyond the memory: %v", err)
	}
	t.Log(err)
	must(t, b.Free())
	c, err := d.Alloc(1 << 17) // freed memory is available again
	must(t, err)
	must(t, c.Free())
	if got := fakeStat(t, lib, "allocated"); got != 0 {
		t.Errorf("%d bytes still allocated", got)
	}
	// An operation's own allocations fail the same way.
	fakeSet(t, lib, "mem_limit", 100)
	_, err = d.NewConv(ConvSpec{Shape: shape(8, 4, 4, 8, 1, 1, nil), Weight: make([]float32, 64)})
	if !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("NewConv without memory: %v", err)
	}
	if got := fakeStat(t, lib, "allocated"); got != 0 {
		t.Errorf("a failed NewConv left %d bytes allocated", got)
	}
}

// TestLaunchFailure injects a kernel fault: as on a GPU, the launch
// itself succeeds, the next synchronising call reports it, and the
// context stays unusable until it is released.
func TestLaunchFailure(t *testing.T) {
	lib := fakeLib(t, "")
	fakeSet(t, lib, "reset", 0)
	defer fakeSet(t, lib, "reset", 0)
	d, err := Open(Config{Lib: lib})
	must(t, err)
	x, err := d.Upload([]float32{1, -2, 3})
	must(t, err)
	fakeSet(t, lib, "fail_launch", 2)
	must(t, d.Unary(UnaryRelu, x, x, 0, 0))
	if err := d.Unary(UnaryRelu, x, x, 0, 0); err != nil {
		t.Fatalf("the faulting launch returned %v; a fault is reported asynchronously", err)
	}
	err = d.Read(make([]float32, 3), x)
	if !errors.Is(err, ErrLaunchFailed) || Unavailable(err) || !strings.Contains(err.Error(), "unspecified launch failure") {
		t.Fatalf("Read after a faulted kernel: %v", err)
	}
	t.Log(err)
	if err := d.Sync(); !errors.Is(err, ErrLaunchFailed) {
		t.Errorf("the error is not sticky: Sync gives %v", err)
	}
	if err := d.Unary(UnaryRelu, x, x, 0, 0); !errors.Is(err, ErrLaunchFailed) {
		t.Errorf("launch after the fault: %v", err)
	}
	d.Close()
	// A new context works again.
	d, err = Open(Config{Lib: lib})
	must(t, err)
	defer d.Close()
	y, err := d.Upload([]float32{1, -2, 3})
	must(t, err)
	must(t, d.Unary(UnaryRelu, y, y, 0, 0))
	if got := download(t, d, y, 3); got[1] != 0 {
		t.Errorf("after reopening: %v", got)
	}
}

func TestLaunchConfiguration(t *testing.T) {
	d, _ := openFake(t, "")
	x := alloc(t, d, 4)
	p := unaryParams{X: x.ptr, Y: x.ptr, N: 4}
	for _, c := range []struct {
		grid, block [3]uint32
	}{
		{[3]uint32{1, 1, 1}, [3]uint32{2048, 1, 1}}, // more than 1024 threads
		{[3]uint32{1, 70000, 1}, [3]uint32{32, 1, 1}},
		{[3]uint32{0, 1, 1}, [3]uint32{32, 1, 1}},
	} {
		err := launch(d, kUnary, c.grid, c.block, &p)
		if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "cuLaunchKernel (unary, grid") {
			t.Errorf("grid %v block %v: %v", c.grid, c.block, err)
		}
	}
	must(t, launch(d, kUnary, [3]uint32{1, 1, 1}, [3]uint32{4, 1, 1}, &p))
}

func TestModuleErrors(t *testing.T) {
	d, _ := openFake(t, "")
	for _, c := range []struct {
		name, ptx string
		want      Result
		log       string
	}{
		{"not PTX", "garbage", ErrInvalidImage, "not PTX"},
		{"unknown entry", ".version 6.0\n.target sm_70\n.visible .entry nope(\n.param .align 8 .b8 nope_param_0[8]\n)", ErrInvalidPTX, "nope has no host kernel"},
		{"parameter size", ".version 6.0\n.target sm_70\n.visible .entry unary(\n.param .align 8 .b8 unary_param_0[24]\n)", ErrInvalidPTX, "24 parameter bytes, its host kernel 32"},
	} {
		// Inside do, as the device's own calls: the driver's current
		// context is per OS thread, and the goroutine may move between
		// threads (the test failed so in one make test run).
		err := d.do(func() error {
			_, err := d.loadModule(c.name+".ptx", []byte(c.ptx))
			return err
		})
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.log) || !strings.Contains(err.Error(), "cuModuleLoadDataEx ("+c.name+".ptx") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	err := d.do(func() error {
		_, err := d.function("no_such_kernel")
		return err
	})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no_such_kernel") {
		t.Errorf("unknown function: %v", err)
	}
}
