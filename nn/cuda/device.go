//go:build gpu

package cuda

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Built reports whether this binary has GPU support (the gpu build tag).
const Built = true

// maxElems bounds every tensor and buffer: the kernels index with 32-bit
// ints.
const maxElems = math.MaxInt32

// Device is an open GPU: the device's primary context, one stream on
// which every copy and kernel runs in call order, and amt's kernels, loaded
// from the embedded PTX. It is safe for concurrent use; calls from
// several goroutines are ordered on the stream as they happen to arrive,
// so each goroutine should work on its own buffers.
type Device struct {
	drv          *driver
	dev          int32
	ctx          uintptr
	stream       uintptr
	mods         []uintptr
	fns          [numKernels]uintptr
	name         string
	major, minor int
	totalMem     int64

	mu     sync.Mutex // serialises Close
	closed atomic.Bool
}

// Open loads the driver, initialises it and opens device cfg.Ordinal.
// Without a driver library the error wraps ErrNoDriver, without a GPU
// ErrNoDevice; Unavailable tells both from later failures.
func Open(cfg Config) (*Device, error) {
	drv, err := loadDriver(cfg.Lib)
	if err != nil {
		return nil, err
	}
	if err := drv.check(symInit, drv.call(symInit, 0), ""); err != nil {
		return nil, err
	}
	var count int32
	if err := drv.check(symDeviceGetCount, drv.call(symDeviceGetCount, uintptr(unsafe.Pointer(&count))), ""); err != nil {
		return nil, err
	}
	if cfg.Ordinal < 0 || cfg.Ordinal >= int(count) {
		return nil, &Error{Call: symNames[symDeviceGet], Result: ErrInvalidDevice,
			Detail: fmt.Sprintf("device %d of %d", cfg.Ordinal, count)}
	}
	d := &Device{drv: drv}
	if err := drv.check(symDeviceGet, drv.call(symDeviceGet, uintptr(unsafe.Pointer(&d.dev)), uintptr(cfg.Ordinal)), ""); err != nil {
		return nil, err
	}
	name := make([]byte, 256)
	if err := drv.check(symDeviceGetName, drv.call(symDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(d.dev)), ""); err != nil {
		return nil, err
	}
	d.name = cString(&name[0], len(name))
	var total uint64
	var major, minor int32
	if err := drv.check(symDeviceTotalMem, drv.call(symDeviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(d.dev)), ""); err != nil {
		return nil, err
	}
	if err := drv.check(symDeviceGetAttribute, drv.call(symDeviceGetAttribute, uintptr(unsafe.Pointer(&major)), attrComputeCapabilityMajor, uintptr(d.dev)), "compute capability"); err != nil {
		return nil, err
	}
	if err := drv.check(symDeviceGetAttribute, drv.call(symDeviceGetAttribute, uintptr(unsafe.Pointer(&minor)), attrComputeCapabilityMinor, uintptr(d.dev)), "compute capability"); err != nil {
		return nil, err
	}
	d.totalMem, d.major, d.minor = int64(total), int(major), int(minor)
	if err := drv.check(symDevicePrimaryCtxRetain, drv.call(symDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&d.ctx)), uintptr(d.dev)), ""); err != nil {
		return nil, err
	}
	if err := d.init(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// init creates the stream and loads the kernels.
func (d *Device) init() error {
	return d.do(func() error {
		if err := d.drv.check(symStreamCreate, d.drv.call(symStreamCreate, uintptr(unsafe.Pointer(&d.stream)), 1), ""); err != nil {
			return err
		}
		names, err := fs.Glob(ptxFS, "kernels/*.ptx")
		if err != nil {
			return err
		}
		sort.Strings(names)
		for _, name := range names {
			src, err := ptxFS.ReadFile(name)
			if err != nil {
				return err
			}
			m, err := d.loadModule(name, src)
			if err != nil {
				return err
			}
			d.mods = append(d.mods, m)
		}
		for k := range numKernels {
			f, err := d.function(k.name())
			if err != nil {
				return err
			}
			d.fns[k] = f
		}
		return nil
	})
}

// loadModule JIT-compiles one PTX image; a failure carries the compiler's
// log.
func (d *Device) loadModule(name string, ptx []byte) (uintptr, error) {
	image := append(ptx[:len(ptx):len(ptx)], 0)
	log := make([]byte, 4096)
	opts := [2]int32{jitErrorLogBuffer, jitErrorLogBufferSize}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&log[0])
	vals := [2]uintptr{uintptr(unsafe.Pointer(&log[0])), uintptr(len(log))} // void *optionValues[]
	var m uintptr
	r := d.drv.call(symModuleLoadDataEx, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&image[0])),
		uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	detail := name
	if s := strings.TrimSpace(cString(&log[0], len(log))); s != "" {
		detail += ": " + s
	}
	return m, d.drv.check(symModuleLoadDataEx, r, detail)
}

// function finds a kernel in the loaded modules.
func (d *Device) function(name string) (uintptr, error) {
	cname := append([]byte(name), 0)
	var err error
	for _, m := range d.mods {
		var f uintptr
		r := d.drv.call(symModuleGetFunction, uintptr(unsafe.Pointer(&f)), m, uintptr(unsafe.Pointer(&cname[0])))
		if r == 0 {
			return f, nil
		}
		err = d.drv.check(symModuleGetFunction, r, name)
		if r != ErrNotFound {
			return 0, err
		}
	}
	if err == nil {
		err = &Error{Call: symNames[symModuleGetFunction], Result: ErrNotFound, Detail: name + ": no PTX module is loaded"}
	}
	return 0, err
}

// do runs f with the device's context current on a locked OS thread: the
// driver keeps the current context per thread.
func (d *Device) do(f func() error) error {
	if d.closed.Load() {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.drv.check(symCtxSetCurrent, d.drv.call(symCtxSetCurrent, d.ctx), ""); err != nil {
		return err
	}
	return f()
}

// errClosed is the error of every call on a closed Device.
var errClosed = errors.New("cuda: the device is closed")

// Close waits for outstanding work, unloads the kernels and releases the
// context. The device's buffers must not be used afterwards.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return nil
	}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	keep(d.do(func() error {
		var first error
		if d.stream != 0 {
			first = d.drv.check(symStreamSynchronize, d.drv.call(symStreamSynchronize, d.stream), "")
			if err := d.drv.check(symStreamDestroy, d.drv.call(symStreamDestroy, d.stream), ""); first == nil {
				first = err
			}
		}
		for _, m := range d.mods {
			if err := d.drv.check(symModuleUnload, d.drv.call(symModuleUnload, m), ""); first == nil {
				first = err
			}
		}
		return first
	}))
	d.closed.Store(true)
	keep(d.drv.check(symDevicePrimaryCtxRelease, d.drv.call(symDevicePrimaryCtxRelease, uintptr(d.dev)), ""))
	return first
}

// Name returns the device's name, such as "NVIDIA H100 80GB HBM3".
func (d *Device) Name() string { return d.name }

// ComputeCapability returns the device's compute capability.
func (d *Device) ComputeCapability() (major, minor int) { return d.major, d.minor }

// TotalMem returns the device memory in bytes.
func (d *Device) TotalMem() int64 { return d.totalMem }

// String describes the device.
func (d *Device) String() string {
	return fmt.Sprintf("%s (compute capability %d.%d, %d MiB, driver %s)", d.name, d.major, d.minor, d.totalMem>>20, d.drv.path)
}

// Sync waits until every queued copy and kernel has finished and returns
// the first error of any (a kernel that faulted reports here).
func (d *Device) Sync() error {
	return d.do(func() error {
		return d.drv.check(symStreamSynchronize, d.drv.call(symStreamSynchronize, d.stream), "")
	})
}

// Buffer is device memory holding 32-bit values (float32, or int32 index
// tables), or a view of part of another buffer (Slice).
type Buffer struct {
	d     *Device
	ptr   uint64
	n     int
	owner bool
	freed bool
}

// Alloc allocates a buffer of n values (its contents are undefined).
func (d *Device) Alloc(n int) (*Buffer, error) {
	if n <= 0 || n > maxElems {
		return nil, fmt.Errorf("cuda: Alloc: %d values: want 1 to %d", n, maxElems)
	}
	b := &Buffer{d: d, n: n, owner: true}
	err := d.do(func() error {
		return d.drv.check(symMemAlloc, d.drv.call(symMemAlloc, uintptr(unsafe.Pointer(&b.ptr)), uintptr(4*n)),
			fmt.Sprintf("%d bytes", 4*n))
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Upload allocates a buffer holding a copy of src.
func (d *Device) Upload(src []float32) (*Buffer, error) {
	return d.upload(unsafe.Pointer(unsafe.SliceData(src)), len(src))
}

// UploadInt32 allocates a buffer holding a copy of src.
func (d *Device) UploadInt32(src []int32) (*Buffer, error) {
	return d.upload(unsafe.Pointer(unsafe.SliceData(src)), len(src))
}

// upload allocates a buffer holding a copy of the n 4-byte values at src.
func (d *Device) upload(src unsafe.Pointer, n int) (*Buffer, error) {
	b, err := d.Alloc(n)
	if err != nil {
		return nil, err
	}
	if err := d.write(b, src, n); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// Len returns the number of values.
func (b *Buffer) Len() int { return b.n }

// Slice returns a view of values [off, off+n) of b; it is not freed on
// its own. Slice panics when the range is outside b, as slicing does.
func (b *Buffer) Slice(off, n int) *Buffer {
	if off < 0 || n < 0 || off+n > b.n {
		panic(fmt.Sprintf("cuda: Buffer.Slice(%d, %d) of %d values", off, n, b.n))
	}
	return &Buffer{d: b.d, ptr: b.ptr + 4*uint64(off), n: n}
}

// Free releases the buffer's memory (after the work queued so far,
// which may still use it); freeing twice is an error, freeing a view does
// nothing.
func (b *Buffer) Free() error {
	if !b.owner {
		return nil
	}
	if b.freed {
		return fmt.Errorf("cuda: Buffer.Free: freed twice")
	}
	b.freed = true
	return b.d.do(func() error {
		return b.d.drv.check(symMemFree, b.d.drv.call(symMemFree, uintptr(b.ptr)), "")
	})
}

// FreeAll frees each buffer of bs that is not nil, in order, and returns
// the first error.
func FreeAll(bs ...*Buffer) error {
	var first error
	for _, b := range bs {
		if b != nil {
			if err := b.Free(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// valid checks that b is a live buffer of d with at least n values.
func (d *Device) valid(what string, b *Buffer, n int) error {
	switch {
	case b == nil:
		return fmt.Errorf("cuda: %s: nil buffer", what)
	case b.d != d:
		return fmt.Errorf("cuda: %s: the buffer belongs to another device", what)
	case b.freed:
		return fmt.Errorf("cuda: %s: the buffer was freed", what)
	case b.n < n:
		return fmt.Errorf("cuda: %s: the buffer has %d values, %d needed", what, b.n, n)
	}
	return nil
}

// Write copies src to the start of dst.
func (d *Device) Write(dst *Buffer, src []float32) error {
	return d.write(dst, unsafe.Pointer(unsafe.SliceData(src)), len(src))
}

func (d *Device) write(dst *Buffer, src unsafe.Pointer, n int) error {
	if err := d.valid("Write", dst, n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	// From pageable memory, the driver returns once src is staged, so
	// src may change afterwards.
	return d.do(func() error {
		return d.drv.check(symMemcpyHtoDAsync, d.drv.call(symMemcpyHtoDAsync, uintptr(dst.ptr), uintptr(src), uintptr(4*n), d.stream),
			fmt.Sprintf("%d bytes", 4*n))
	})
}

// Read waits for the queued work and copies the first len(dst) values of
// src to dst. An error of an earlier kernel reports here.
func (d *Device) Read(dst []float32, src *Buffer) error {
	return d.read(unsafe.Pointer(unsafe.SliceData(dst)), len(dst), src)
}

// ReadInt32 is Read for int32 values.
func (d *Device) ReadInt32(dst []int32, src *Buffer) error {
	return d.read(unsafe.Pointer(unsafe.SliceData(dst)), len(dst), src)
}

func (d *Device) read(dst unsafe.Pointer, n int, src *Buffer) error {
	if err := d.valid("Read", src, n); err != nil {
		return err
	}
	return d.do(func() error {
		if n > 0 {
			r := d.drv.call(symMemcpyDtoHAsync, uintptr(dst), uintptr(src.ptr), uintptr(4*n), d.stream)
			if err := d.drv.check(symMemcpyDtoHAsync, r, fmt.Sprintf("%d bytes", 4*n)); err != nil {
				return err
			}
		}
		// dst is written asynchronously: wait before returning it.
		return d.drv.check(symStreamSynchronize, d.drv.call(symStreamSynchronize, d.stream), "")
	})
}

// Copy copies src to the start of dst on the device.
func (d *Device) Copy(dst, src *Buffer) error {
	if err := d.valid("Copy", dst, src.n); err != nil {
		return err
	}
	if err := d.valid("Copy", src, 0); err != nil {
		return err
	}
	return d.do(func() error {
		return d.drv.check(symMemcpyDtoDAsync, d.drv.call(symMemcpyDtoDAsync, uintptr(dst.ptr), uintptr(src.ptr), uintptr(4*src.n), d.stream),
			fmt.Sprintf("%d bytes", 4*src.n))
	})
}

// Fill sets every value of b to v.
func (d *Device) Fill(b *Buffer, v float32) error {
	if err := d.valid("Fill", b, 0); err != nil {
		return err
	}
	return d.do(func() error {
		return d.drv.check(symMemsetD32Async, d.drv.call(symMemsetD32Async, uintptr(b.ptr), uintptr(math.Float32bits(v)), uintptr(b.n), d.stream), "")
	})
}

// MemInfo returns the free and total device memory in bytes.
func (d *Device) MemInfo() (free, total int64, err error) {
	var f, t uint64
	err = d.do(func() error {
		return d.drv.check(symMemGetInfo, d.drv.call(symMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t))), "")
	})
	return int64(f), int64(t), err
}

// launch runs kernel k over grid × block threads with parameter block p
// (a struct of params.go). kernelParams holds one pointer, to p; both are
// pinned for the call (the driver copies the parameters before it
// returns).
func launch[P any](d *Device, k kernel, grid, block [3]uint32, p *P) error {
	args := [1]unsafe.Pointer{unsafe.Pointer(p)}
	var pin runtime.Pinner
	pin.Pin(p)
	pin.Pin(&args[0])
	defer pin.Unpin()
	err := d.do(func() error {
		r := d.drv.call(symLaunchKernel, d.fns[k],
			uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
			uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
			0, d.stream, uintptr(unsafe.Pointer(&args[0])), 0)
		return d.drv.check(symLaunchKernel, r, fmt.Sprintf("%s, grid %v, block %v", k.name(), grid, block))
	})
	return err
}

// blocks256 is the 1-D launch of one thread per element, 256 a block.
func blocks256(n int) (grid, block [3]uint32) {
	return [3]uint32{uint32((n + 255) / 256), 1, 1}, [3]uint32{256, 1, 1}
}
