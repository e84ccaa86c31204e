package cuda

import (
	"errors"
	"fmt"
)

// Result is a CUresult, the status a CUDA driver call returns; the
// non-zero ones are errors. The constants are the ones amt meets (values
// from the driver API's cuda.h); errors.Is matches an *Error against them.
type Result int32

// Driver errors.
const (
	ErrInvalidValue          Result = 1   // CUDA_ERROR_INVALID_VALUE
	ErrOutOfMemory           Result = 2   // CUDA_ERROR_OUT_OF_MEMORY
	ErrNotInitialized        Result = 3   // CUDA_ERROR_NOT_INITIALIZED
	ErrNoDevice              Result = 100 // CUDA_ERROR_NO_DEVICE
	ErrInvalidDevice         Result = 101 // CUDA_ERROR_INVALID_DEVICE
	ErrInvalidImage          Result = 200 // CUDA_ERROR_INVALID_IMAGE
	ErrInvalidContext        Result = 201 // CUDA_ERROR_INVALID_CONTEXT
	ErrInvalidPTX            Result = 218 // CUDA_ERROR_INVALID_PTX
	ErrUnsupportedPTXVersion Result = 222 // CUDA_ERROR_UNSUPPORTED_PTX_VERSION
	ErrInvalidHandle         Result = 400 // CUDA_ERROR_INVALID_HANDLE
	ErrNotFound              Result = 500 // CUDA_ERROR_NOT_FOUND
	ErrIllegalAddress        Result = 700 // CUDA_ERROR_ILLEGAL_ADDRESS
	ErrLaunchOutOfResources  Result = 701 // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
	ErrLaunchFailed          Result = 719 // CUDA_ERROR_LAUNCH_FAILED
	ErrNotSupported          Result = 801 // CUDA_ERROR_NOT_SUPPORTED
	ErrSystemDriverMismatch  Result = 803 // CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
)

var resultNames = map[Result]string{
	ErrInvalidValue:          "CUDA_ERROR_INVALID_VALUE",
	ErrOutOfMemory:           "CUDA_ERROR_OUT_OF_MEMORY",
	ErrNotInitialized:        "CUDA_ERROR_NOT_INITIALIZED",
	ErrNoDevice:              "CUDA_ERROR_NO_DEVICE",
	ErrInvalidDevice:         "CUDA_ERROR_INVALID_DEVICE",
	ErrInvalidImage:          "CUDA_ERROR_INVALID_IMAGE",
	ErrInvalidContext:        "CUDA_ERROR_INVALID_CONTEXT",
	ErrInvalidPTX:            "CUDA_ERROR_INVALID_PTX",
	ErrUnsupportedPTXVersion: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	ErrInvalidHandle:         "CUDA_ERROR_INVALID_HANDLE",
	ErrNotFound:              "CUDA_ERROR_NOT_FOUND",
	ErrIllegalAddress:        "CUDA_ERROR_ILLEGAL_ADDRESS",
	ErrLaunchOutOfResources:  "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	ErrLaunchFailed:          "CUDA_ERROR_LAUNCH_FAILED",
	ErrNotSupported:          "CUDA_ERROR_NOT_SUPPORTED",
	ErrSystemDriverMismatch:  "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
}

// Error returns the CUresult's name in cuda.h, or its number.
func (r Result) Error() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("CUresult %d", int32(r))
}

// Error is a failed driver call.
type Error struct {
	Call   string // the driver function, such as "cuMemAlloc_v2"
	Result Result
	Name   string // the driver's name for Result (cuGetErrorName)
	Text   string // the driver's description of Result (cuGetErrorString)
	Detail string // what was asked, or the JIT compiler's log; may be empty
}

func (e *Error) Error() string {
	name := e.Name
	if name == "" {
		name = e.Result.Error()
	}
	s := "cuda: " + e.Call
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	s += ": " + name
	if e.Text != "" {
		s += ": " + e.Text
	}
	return s
}

// Unwrap returns the Result, so that errors.Is(err, ErrOutOfMemory) works.
func (e *Error) Unwrap() error { return e.Result }

// ErrNotBuilt is returned by Open in a binary built without -tags gpu.
var ErrNotBuilt = errors.New("cuda: this amt was built without GPU support (build with -tags gpu)")

// ErrNoDriver wraps the failure to load the CUDA driver library.
var ErrNoDriver = errors.New("cuda: cannot load the NVIDIA CUDA driver library")

// Unavailable reports whether err means there is no usable GPU here at all
// — no GPU support built in, no driver, no device, or a driver too old for
// the kernels — as opposed to a failure while using one (out of memory, a
// failed launch), so that a caller configured to fall back to the CPU can
// tell the two apart.
func Unavailable(err error) bool {
	return errors.Is(err, ErrNotBuilt) || errors.Is(err, ErrNoDriver) || errors.Is(err, ErrNoDevice) ||
		errors.Is(err, ErrInvalidDevice) || errors.Is(err, ErrNotInitialized) ||
		errors.Is(err, ErrUnsupportedPTXVersion) || errors.Is(err, ErrSystemDriverMismatch)
}

// Config says which driver library and device Open uses.
type Config struct {
	// Lib is the driver library: "" means $AMT_CUDA_LIB when set,
	// otherwise libcuda.so.1 (installed with every NVIDIA driver).
	Lib string
	// Ordinal is the device number, 0 for the first GPU.
	Ordinal int
}
