//go:build gpu

package cuda

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CUDA driver API, loaded at run time with purego (no cgo): each call
// goes through purego.SyscallN with the C signature of cuda.h written
// beside it. Handles (CUcontext, CUmodule, CUfunction, CUstream) are
// uintptr, CUdeviceptr is uint64, CUdevice and int are int32, size_t is
// uint64 (64-bit platforms only), and CUresult is the low 32 bits of the
// return register.

// sym indexes driver.fn.
type sym int

const (
	symInit                    sym = iota // CUresult cuInit(unsigned int Flags)
	symDriverGetVersion                   // CUresult cuDriverGetVersion(int *driverVersion)
	symDeviceGetCount                     // CUresult cuDeviceGetCount(int *count)
	symDeviceGet                          // CUresult cuDeviceGet(CUdevice *device, int ordinal)
	symDeviceGetName                      // CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
	symDeviceTotalMem                     // CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
	symDeviceGetAttribute                 // CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
	symDevicePrimaryCtxRetain             // CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
	symDevicePrimaryCtxRelease            // CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
	symCtxSetCurrent                      // CUresult cuCtxSetCurrent(CUcontext ctx)
	symCtxSynchronize                     // CUresult cuCtxSynchronize(void)
	symMemAlloc                           // CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
	symMemFree                            // CUresult cuMemFree_v2(CUdeviceptr dptr)
	symMemGetInfo                         // CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
	symMemcpyHtoDAsync                    // CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
	symMemcpyDtoHAsync                    // CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
	symMemcpyDtoDAsync                    // CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
	symMemsetD32Async                     // CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t N, CUstream s)
	symStreamCreate                       // CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
	symStreamDestroy                      // CUresult cuStreamDestroy_v2(CUstream hStream)
	symStreamSynchronize                  // CUresult cuStreamSynchronize(CUstream hStream)
	symModuleLoadDataEx                   // CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues)
	symModuleUnload                       // CUresult cuModuleUnload(CUmodule hmod)
	symModuleGetFunction                  // CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
	symLaunchKernel                       // CUresult cuLaunchKernel(CUfunction f, unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, unsigned sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
	symGetErrorName                       // CUresult cuGetErrorName(CUresult error, const char **pStr)
	symGetErrorString                     // CUresult cuGetErrorString(CUresult error, const char **pStr)
	numSyms
)

// symNames are the exported names, versioned as cuda.h maps them.
var symNames = [numSyms]string{
	"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName",
	"cuDeviceTotalMem_v2", "cuDeviceGetAttribute", "cuDevicePrimaryCtxRetain",
	"cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuCtxSynchronize", "cuMemAlloc_v2",
	"cuMemFree_v2", "cuMemGetInfo_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
	"cuMemcpyDtoDAsync_v2", "cuMemsetD32Async", "cuStreamCreate", "cuStreamDestroy_v2",
	"cuStreamSynchronize", "cuModuleLoadDataEx", "cuModuleUnload", "cuModuleGetFunction",
	"cuLaunchKernel", "cuGetErrorName", "cuGetErrorString",
}

// Device attributes (CUdevice_attribute) and JIT options (CUjit_option).
const (
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
	jitErrorLogBuffer          = 5
	jitErrorLogBufferSize      = 6
)

// libEnv names the environment variable that overrides the driver library
// (Config.Lib).
const libEnv = "AMT_CUDA_LIB"

// driver is a loaded driver library.
type driver struct {
	path   string
	handle uintptr
	fn     [numSyms]uintptr
}

// loadDriver opens the driver library and resolves every function amt
// calls; a missing one is an error naming it (a driver too old).
func loadDriver(path string) (*driver, error) {
	if path == "" {
		path = os.Getenv(libEnv)
	}
	if path == "" {
		path = "libcuda.so.1"
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("%w %s (%v): is the NVIDIA driver installed? ($%s names another library)", ErrNoDriver, path, err, libEnv)
	}
	d := &driver{path: path, handle: h}
	for i, name := range symNames {
		a, err := purego.Dlsym(h, name)
		if err != nil {
			return nil, fmt.Errorf("%w %s: it has no %s (the driver is too old; amt needs CUDA 11 or newer)", ErrNoDriver, path, name)
		}
		d.fn[i] = a
	}
	return d, nil
}

// call invokes a driver function and returns its CUresult. Pointers are
// passed as uintptr(unsafe.Pointer(p)) in the call expression; like
// purego.SyscallN, call is marked uintptrescapes, so what they point to is
// moved to the heap and kept alive until the call returns.
//
//go:uintptrescapes
func (d *driver) call(s sym, args ...uintptr) Result {
	r, _, _ := purego.SyscallN(d.fn[s], args...)
	return Result(int32(uint32(r)))
}

// check turns a CUresult into nil or an *Error naming the call, with the
// driver's own name and description of the code.
func (d *driver) check(s sym, r Result, detail string) error {
	if r == 0 {
		return nil
	}
	return &Error{Call: symNames[s], Result: r, Name: d.errorText(symGetErrorName, r),
		Text: d.errorText(symGetErrorString, r), Detail: detail}
}

// errorText asks the driver for a CUresult's name or description ("" when
// it does not know the code).
func (d *driver) errorText(s sym, r Result) string {
	var p *byte
	r2, _, _ := purego.SyscallN(d.fn[s], uintptr(uint32(r)), uintptr(unsafe.Pointer(&p)))
	if r2 != 0 || p == nil {
		return ""
	}
	return cString(p, 512)
}

// cString copies a NUL-terminated C string of at most max bytes.
func cString(p *byte, max int) string {
	var b []byte
	for i := 0; i < max; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}
