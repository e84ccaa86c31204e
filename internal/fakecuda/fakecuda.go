//go:build gpu

// Package fakecuda builds the fake CUDA driver (nn/cuda/fakecuda) for
// tests and works its switches and counters, so that every package's tests
// can run amt's GPU path on a machine without a GPU (see package nn/cuda).
//
// Lib compiles fakecuda.c and the kernel sources (nn/cuda/kernels/*.cu)
// with the system C compiler ($CC, else cc) into a libcuda.so.1, once per
// set of sources and variant: the library goes to a directory under the
// system's temporary directory named by a hash of its sources, compiler
// and flags, so later test processes reuse it and a changed source builds
// a new one. All code in a process that opens the same library shares the
// fake's one device, switches and counters.
package fakecuda

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/amt-dev/amt/internal/atomicfile"
)

// Variants of the fake: Default switches fibers with amt_fiber_swap
// (x86-64), UContext with the portable ucontext fallback the fake uses on
// other architectures.
const (
	Default  = ""
	UContext = "ucontext"
)

var builds sync.Map // variant → *build

type build struct {
	once sync.Once
	lib  string
	err  error
}

// Lib returns the path of the fake libcuda.so.1 of a variant, building it
// if needed. Without a C compiler it skips the test, or fails it when the
// environment variable CI is "true".
func Lib(t testing.TB, variant string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(variant, &build{})
	b := v.(*build)
	b.once.Do(func() { b.lib, b.err = Build(variant) })
	if b.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("building the fake CUDA driver: %v", b.err)
		}
		t.Skipf("cannot build the fake CUDA driver (a C compiler is needed): %v", b.err)
	}
	return b.lib
}

// Build compiles the fake driver of a variant, or finds it built, and
// returns its path.
func Build(variant string) (string, error) {
	if variant != Default && variant != UContext {
		return "", fmt.Errorf("fakecuda: unknown variant %q", variant)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", err
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "nn", "cuda")
	srcs, err := filepath.Glob(filepath.Join(dir, "kernels", "*.cu"))
	if err != nil || len(srcs) == 0 {
		return "", fmt.Errorf("fakecuda: no kernel sources in %s: %v", filepath.Join(dir, "kernels"), err)
	}
	args := []string{"-O2", "-fPIC", "-shared", "-pthread", "-std=gnu11", "-Wall", "-Wno-unknown-pragmas", "-I" + filepath.Join(dir, "kernels")}
	if variant == UContext {
		args = append(args, "-DAMT_FAKE_UCONTEXT")
	}
	args = append(args, filepath.Join(dir, "fakecuda", "fakecuda.c"), "-x", "c", "-include", filepath.Join(dir, "fakecuda", "shim.h"))
	args = append(args, srcs...)
	args = append(args, "-x", "none", "-lm")

	// The library's name: a hash of the compiler, flags and sources.
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", cc, strings.Join(args, "\x00"))
	hdrs, _ := filepath.Glob(filepath.Join(dir, "kernels", "*.h"))
	for _, f := range append(append([]string{filepath.Join(dir, "fakecuda", "fakecuda.c"), filepath.Join(dir, "fakecuda", "shim.h")}, hdrs...), srcs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	out := filepath.Join(os.TempDir(), "amt-fakecuda-"+hex.EncodeToString(h.Sum(nil))[:16])
	lib := filepath.Join(out, "libcuda.so.1")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	// Build in a directory of its own, then write the library in place
	// atomically, so that concurrent test processes never load a
	// half-written one.
	tmp, err := os.MkdirTemp("", "amt-fakecuda-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(cc, append(args[:len(args):len(args)], "-o", filepath.Join(tmp, "libcuda.so.1"))...)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, msg)
	}
	if len(msg) > 0 {
		return "", fmt.Errorf("%s warns:\n%s", strings.Join(cmd.Args, " "), msg)
	}
	b, err := os.ReadFile(filepath.Join(tmp, "libcuda.so.1"))
	if err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(lib, b, 0o755); err != nil {
		return "", err
	}
	return lib, nil
}

// moduleRoot finds the directory of go.mod above the working directory
// (a test's package directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("fakecuda: no go.mod above the working directory")
		}
		dir = up
	}
}

// Set calls the fake's amt_fake_set(key, value) (see fakecuda.c): the
// switches fail_init, mem_limit and fail_launch, and reset.
func Set(t testing.TB, lib, key string, value int64) {
	t.Helper()
	f := sym(t, lib, "amt_fake_set")
	ckey := append([]byte(key), 0)
	r, _, _ := purego.SyscallN(f, uintptr(unsafe.Pointer(&ckey[0])), uintptr(value))
	if int32(r) != 0 {
		t.Fatalf("amt_fake_set(%q): unknown key", key)
	}
}

// Stat reads a counter of the fake (amt_fake_stat): allocated, allocs,
// launches, htod_calls, htod_bytes, dtoh_calls, dtoh_bytes.
func Stat(t testing.TB, lib, key string) int64 {
	t.Helper()
	f := sym(t, lib, "amt_fake_stat")
	ckey := append([]byte(key), 0)
	r, _, _ := purego.SyscallN(f, uintptr(unsafe.Pointer(&ckey[0])))
	if int64(r) < 0 {
		t.Fatalf("amt_fake_stat(%q): unknown key", key)
	}
	return int64(r)
}

func sym(t testing.TB, lib, name string) uintptr {
	t.Helper()
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	f, err := purego.Dlsym(h, name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
