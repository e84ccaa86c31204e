// shim.h — the host side of ../kernels/amt.h: what the kernel sources need
// from CUDA, defined over the fake driver's block scheduler (fakecuda.c).
// The kernels are compiled for the host with
//
//	cc -x c -include fakecuda/shim.h kernels/*.cu
//
// Each block's threads run as fibers on one OS thread: threadIdx and the
// other built-in indices are thread-local variables the scheduler sets
// before it resumes a fiber, __syncthreads() suspends the calling fiber
// until every thread of the block has reached the barrier, and
// __shared__ arrays are thread-local statics (one copy per OS thread,
// shared by the fibers of the block it is running).
#ifndef AMT_FAKECUDA_SHIM_H
#define AMT_FAKECUDA_SHIM_H

#define AMT_HOST_SHIM 1

#include <stddef.h>

typedef struct {
	unsigned x, y, z;
} amt_dim3;

extern __thread amt_dim3 amt_fake_thread_idx, amt_fake_block_idx, amt_fake_block_dim, amt_fake_grid_dim;

#define threadIdx amt_fake_thread_idx
#define blockIdx amt_fake_block_idx
#define blockDim amt_fake_block_dim
#define gridDim amt_fake_grid_dim

void amt_fake_syncthreads(void);
#define __syncthreads() amt_fake_syncthreads()

#define __global__
#define __device__
#define __shared__ static __thread
#define AMT_INLINE static inline __attribute__((always_inline))

// A kernel's host entry point: args is cuLaunchKernel's kernelParams.
typedef void (*amt_fake_entry)(void *const *args);

// amt_fake_register records a kernel (from a constructor, at load time).
void amt_fake_register(const char *name, amt_fake_entry fn, size_t param_size);

#define KERNEL(name, T, p)                                                                         \
	static void name(const T p);                                                                   \
	static void amt_fake_entry_##name(void *const *args) { name(*(const T *)args[0]); }            \
	__attribute__((constructor)) static void amt_fake_register_##name(void) {                      \
		amt_fake_register(#name, amt_fake_entry_##name, sizeof(T));                                \
	}                                                                                              \
	static void name(const T p)

#endif
