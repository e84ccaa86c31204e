// fakecuda.c — a fake libcuda.so.1 for amt's tests on machines without an
// NVIDIA GPU.
//
// It implements the CUDA driver API calls amt uses (nn/cuda/driver.go) on
// host memory and runs amt's kernels compiled for the host from the same
// sources as the PTX (nn/cuda/kernels/*.cu with -include shim.h), so that
// the Go side — the binding, the launches, the kernels' arithmetic — is
// exercised as it is with a GPU. The test builds it with the system C
// compiler:
//
//	cc -O2 -fPIC -shared -pthread -Ikernels -o libcuda.so.1
//	   fakecuda/fakecuda.c -x c -include fakecuda/shim.h kernels/*.cu
//
// What it checks, as a real driver would: calls before cuInit, calls
// without a current context, module images that are not PTX or whose
// entries have no host kernel (or a parameter block of another size),
// unknown functions, launch configurations beyond the limits of a compute
// capability 7.0 device, copies outside an allocation, and frees of
// unknown pointers. Device memory is filled with 0xff bytes (NaN) when
// allocated, so that reading memory nothing wrote shows, and ends at a
// PROT_NONE guard page, so that a kernel writing past the end of a buffer
// faults. Kernels run synchronously inside cuLaunchKernel, the blocks
// shared out among a few OS threads, each block's threads as fibers (see
// shim.h).
//
// Failures are injected through amt_fake_set (or, at load time, the
// environment variables in parentheses):
//
//	fail_init (AMT_FAKECUDA_FAIL_INIT)      cuInit returns this CUresult
//	                                        (100: CUDA_ERROR_NO_DEVICE).
//	mem_limit (AMT_FAKECUDA_MEM_LIMIT)      device memory in bytes; an
//	                                        allocation beyond it fails with
//	                                        CUDA_ERROR_OUT_OF_MEMORY.
//	fail_launch (AMT_FAKECUDA_FAIL_LAUNCH)  the n-th launch from now faults:
//	                                        like a kernel that crashed on a
//	                                        GPU, it reports success, and the
//	                                        context's next synchronising call
//	                                        and every call after it return
//	                                        CUDA_ERROR_LAUNCH_FAILED.
//	reset                                   clears counters and the sticky
//	                                        error of every context.
//
// amt_fake_stat reads counters: allocated (bytes now), allocs (live
// allocations), launches, htod_calls, htod_bytes, dtoh_calls, dtoh_bytes.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

#if !defined(__x86_64__) && !defined(AMT_FAKE_UCONTEXT)
#define AMT_FAKE_UCONTEXT 1
#endif
#ifdef AMT_FAKE_UCONTEXT
#include <ucontext.h>
#endif

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_UNKNOWN = 999,
};

static const struct cuerror {
	CUresult code;
	const char *name, *text;
} errors[] = {
	{CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
	{CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	{CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	{CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	{CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	{CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
	{CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
	{CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

// ---- configuration and counters ----

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static CUresult fail_init;
static long long mem_limit = 16LL << 30;
static long long fail_launch; // launches left before the injected fault; 0: none
static long long allocated, allocs, launches, htod_calls, htod_bytes, dtoh_calls, dtoh_bytes;

struct ctx {
	int retained;
	CUresult sticky; // a fault of an earlier launch, reported from now on
};
static struct ctx primary; // the one device's primary context

// An allocation: the mapping [base, base+maplen) ends with a guard page;
// the device pointer is ptr = guard − size rounded up to 16 bytes.
struct alloc {
	char *base, *ptr;
	size_t size, maplen;
	struct alloc *next;
};
static struct alloc *allocations;
static __thread struct ctx *current;

static long long env_ll(const char *name, long long def) {
	const char *v = getenv(name);
	return v && *v ? strtoll(v, NULL, 0) : def;
}

__attribute__((constructor)) static void load_config(void) {
	fail_init = (CUresult)env_ll("AMT_FAKECUDA_FAIL_INIT", 0);
	mem_limit = env_ll("AMT_FAKECUDA_MEM_LIMIT", mem_limit);
	fail_launch = env_ll("AMT_FAKECUDA_FAIL_LAUNCH", 0);
}

// amt_fake_set changes a switch (see the file comment); it returns 0, or
// -1 for an unknown key.
int amt_fake_set(const char *key, long long value) {
	int ok = 0;
	pthread_mutex_lock(&mu);
	if (!strcmp(key, "fail_init"))
		fail_init = (CUresult)value;
	else if (!strcmp(key, "mem_limit"))
		mem_limit = value;
	else if (!strcmp(key, "fail_launch"))
		fail_launch = value;
	else if (!strcmp(key, "reset")) {
		fail_init = 0;
		fail_launch = 0;
		mem_limit = 16LL << 30;
		primary.sticky = CUDA_SUCCESS;
		launches = htod_calls = htod_bytes = dtoh_calls = dtoh_bytes = 0;
	} else
		ok = -1;
	pthread_mutex_unlock(&mu);
	return ok;
}

// amt_fake_stat returns a counter, or -1 for an unknown key.
long long amt_fake_stat(const char *key) {
	long long v = -1;
	pthread_mutex_lock(&mu);
	if (!strcmp(key, "allocated"))
		v = allocated;
	else if (!strcmp(key, "allocs"))
		v = allocs;
	else if (!strcmp(key, "launches"))
		v = launches;
	else if (!strcmp(key, "htod_calls"))
		v = htod_calls;
	else if (!strcmp(key, "htod_bytes"))
		v = htod_bytes;
	else if (!strcmp(key, "dtoh_calls"))
		v = dtoh_calls;
	else if (!strcmp(key, "dtoh_bytes"))
		v = dtoh_bytes;
	pthread_mutex_unlock(&mu);
	return v;
}

// check_ctx returns the error every call needing a context gives now,
// the sticky error of an earlier fault aside.
static CUresult check_ctx(void) {
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	return CUDA_SUCCESS;
}

// check returns the error every call needing a context gives now.
static CUresult check(void) {
	CUresult r = check_ctx();
	return r ? r : current->sticky;
}

// check_device returns the error every call on device d gives now.
static CUresult check_device(CUdevice d) {
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

// ---- errors ----

// find_error returns the entry of errors for e, or NULL.
static const struct cuerror *find_error(CUresult e) {
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == e)
			return &errors[i];
	return NULL;
}

CUresult cuGetErrorName(CUresult e, const char **s) {
	const struct cuerror *x = find_error(e);
	*s = x ? x->name : NULL;
	return x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult e, const char **s) {
	const struct cuerror *x = find_error(e);
	*s = x ? x->text : NULL;
	return x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// ---- initialisation, device, context ----

CUresult cuInit(unsigned flags) {
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	CUresult r = fail_init;
	if (r == CUDA_SUCCESS)
		initialized = 1;
	pthread_mutex_unlock(&mu);
	return r;
}

CUresult cuDriverGetVersion(int *v) {
	*v = 12040;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n) {
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*n = 1;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	CUresult r = check_device(ordinal);
	if (r)
		return r;
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
	CUresult r = check_device(d);
	if (r)
		return r;
	if (len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "amt fake CUDA device (host CPU)");
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
	CUresult r = check_device(d);
	if (r)
		return r;
	*bytes = (size_t)mem_limit;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
	CUresult r = check_device(d);
	if (r)
		return r;
	switch (attr) {
	case 75: // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
		*v = 7;
		return CUDA_SUCCESS;
	case 76: // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
		*v = 0;
		return CUDA_SUCCESS;
	case 16: // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
		*v = 1;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDevicePrimaryCtxRetain(struct ctx **c, CUdevice d) {
	CUresult r = check_device(d);
	if (r)
		return r;
	pthread_mutex_lock(&mu);
	primary.retained++;
	pthread_mutex_unlock(&mu);
	*c = &primary;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	CUresult r = check_device(d);
	if (r)
		return r;
	pthread_mutex_lock(&mu);
	if (primary.retained == 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (--primary.retained == 0) {
		// The last release destroys the context: its error and its
		// memory go with it.
		primary.sticky = CUDA_SUCCESS;
		while (allocations) {
			struct alloc *a = allocations;
			allocations = a->next;
			munmap(a->base, a->maplen);
			free(a);
		}
		allocated = allocs = 0;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

CUresult cuCtxSetCurrent(struct ctx *c) {
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (c && (c != &primary || primary.retained == 0))
		return CUDA_ERROR_INVALID_CONTEXT;
	current = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) { return check(); }

// ---- memory ----


// find returns the allocation holding [p, p+n), or NULL.
static struct alloc *find(CUdeviceptr p, size_t n) {
	for (struct alloc *a = allocations; a; a = a->next) {
		uintptr_t lo = (uintptr_t)a->ptr;
		if (p >= lo && p + n <= lo + a->size && p + n >= p)
			return a;
	}
	return NULL;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dp, size_t size) {
	CUresult r = check();
	if (r)
		return r;
	if (size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (size + 15) & ~(size_t)15;
	size_t maplen = (body + page - 1) / page * page + page;
	pthread_mutex_lock(&mu);
	if (allocated + (long long)size > mem_limit) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	char *base = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct alloc *a = malloc(sizeof *a);
	if (base == MAP_FAILED || !a) {
		if (base != MAP_FAILED)
			munmap(base, maplen);
		free(a);
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	char *guard = base + maplen - page;
	mprotect(guard, page, PROT_NONE);
	a->base = base;
	a->ptr = guard - body;
	a->size = size;
	a->maplen = maplen;
	a->next = allocations;
	allocations = a;
	allocated += (long long)size;
	allocs++;
	pthread_mutex_unlock(&mu);
	memset(a->ptr, 0xff, body);
	*dp = (CUdeviceptr)(uintptr_t)a->ptr;
	return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
	CUresult r = check_ctx();
	if (r)
		return r;
	if (p == 0)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&mu);
	for (struct alloc **pa = &allocations; *pa; pa = &(*pa)->next) {
		struct alloc *a = *pa;
		if ((uintptr_t)a->ptr == p) {
			*pa = a->next;
			allocated -= (long long)a->size;
			allocs--;
			pthread_mutex_unlock(&mu);
			munmap(a->base, a->maplen);
			free(a);
			return CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&mu);
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
	CUresult r = check();
	if (r)
		return r;
	pthread_mutex_lock(&mu);
	*total = (size_t)mem_limit;
	*free_bytes = (size_t)(mem_limit - allocated);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

// copy checks a device range and copies.
static CUresult copy(void *dst, const void *src, CUdeviceptr dev, size_t n, long long *calls, long long *bytes) {
	CUresult r = check();
	if (r)
		return r;
	if (n == 0)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&mu);
	struct alloc *a = find(dev, n);
	if (a) {
		(*calls)++;
		*bytes += (long long)n;
	}
	pthread_mutex_unlock(&mu);
	if (!a || !dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	memmove(dst, src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, void *stream) {
	(void)stream;
	return copy((void *)(uintptr_t)dst, src, dst, n, &htod_calls, &htod_bytes);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, void *stream) {
	(void)stream;
	return copy(dst, (const void *)(uintptr_t)src, src, n, &dtoh_calls, &dtoh_bytes);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *stream) {
	(void)stream;
	CUresult r = check();
	if (r)
		return r;
	pthread_mutex_lock(&mu);
	int ok = find(dst, n) && find(src, n);
	pthread_mutex_unlock(&mu);
	if (n && !ok)
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n, void *stream) {
	(void)stream;
	CUresult r = check();
	if (r)
		return r;
	pthread_mutex_lock(&mu);
	int ok = find(dst, n * 4) != NULL;
	pthread_mutex_unlock(&mu);
	if (n && (!ok || dst % 4))
		return CUDA_ERROR_INVALID_VALUE;
	unsigned *p = (unsigned *)(uintptr_t)dst;
	for (size_t i = 0; i < n; i++)
		p[i] = v;
	return CUDA_SUCCESS;
}

// ---- streams ----

struct stream {
	int magic;
};
#define STREAM_MAGIC 0x5354524d

CUresult cuStreamCreate(struct stream **s, unsigned flags) {
	CUresult r = check();
	if (r)
		return r;
	if (flags > 1)
		return CUDA_ERROR_INVALID_VALUE;
	*s = malloc(sizeof **s);
	if (!*s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	(*s)->magic = STREAM_MAGIC;
	return CUDA_SUCCESS;
}

// free_handle frees h, a stream or a module (whose first member is its
// magic), unless it is not one of magic magic.
static CUresult free_handle(void *h, int magic) {
	int *m = h;
	if (!m || *m != magic)
		return CUDA_ERROR_INVALID_HANDLE;
	*m = 0;
	free(h);
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(struct stream *s) {
	CUresult r = check_ctx();
	return r ? r : free_handle(s, STREAM_MAGIC);
}

CUresult cuStreamSynchronize(struct stream *s) {
	if (s && s->magic != STREAM_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	return check();
}

// ---- kernels and modules ----

struct kernel {
	const char *name;
	amt_fake_entry fn;
	size_t param_size;
	int barrier; // its PTX has bar.sync: threads run as fibers
	struct kernel *next;
};
static struct kernel *kernels;

void amt_fake_register(const char *name, amt_fake_entry fn, size_t param_size) {
	struct kernel *k = malloc(sizeof *k);
	if (!k)
		abort();
	k->name = name;
	k->fn = fn;
	k->param_size = param_size;
	k->next = kernels;
	kernels = k;
}

static struct kernel *lookup(const char *name, size_t n) {
	for (struct kernel *k = kernels; k; k = k->next)
		if (strlen(k->name) == n && !strncmp(k->name, name, n))
			return k;
	return NULL;
}

#define MAX_ENTRIES 64

struct module {
	int magic;
	int n;
	struct kernel *entries[MAX_ENTRIES];
};
#define MODULE_MAGIC 0x4d4f444c

// jit_error writes a message into the CU_JIT_ERROR_LOG_BUFFER option.
static void jit_error(unsigned nopt, const int *opts, void **vals, const char *msg) {
	char *buf = NULL;
	size_t size = 0;
	for (unsigned i = 0; i < nopt; i++) {
		if (opts[i] == 5) // CU_JIT_ERROR_LOG_BUFFER
			buf = vals[i];
		if (opts[i] == 6) // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
			size = (size_t)(uintptr_t)vals[i];
	}
	if (buf && size)
		snprintf(buf, size, "%s", msg);
}

// cuModuleLoadDataEx "JIT-compiles" a PTX image: it reads the entries
// (".entry name(" followed by ".param .align 8 .b8 name_param_0[size]")
// and binds each to the host kernel of that name, checking the size of
// its parameter block.
CUresult cuModuleLoadDataEx(struct module **m, const void *image, unsigned nopt, int *opts, void **vals) {
	CUresult r = check();
	if (r)
		return r;
	const char *ptx = image;
	if (!ptx || !strstr(ptx, ".version") || !strstr(ptx, ".target")) {
		jit_error(nopt, opts, vals, "fakecuda: the image is not PTX text");
		return CUDA_ERROR_INVALID_IMAGE;
	}
	struct module *mod = calloc(1, sizeof *mod);
	if (!mod)
		return CUDA_ERROR_OUT_OF_MEMORY;
	mod->magic = MODULE_MAGIC;
	char msg[256];
	for (const char *e = strstr(ptx, ".entry "); e; e = strstr(e + 1, ".entry ")) {
		const char *name = e + strlen(".entry ");
		size_t n = strcspn(name, "( \t\n");
		struct kernel *k = lookup(name, n);
		if (!k) {
			snprintf(msg, sizeof msg, "fakecuda: entry %.*s has no host kernel", (int)n, name);
			goto fail;
		}
		const char *sz = strstr(name, "_param_0[");
		size_t size = sz ? strtoul(sz + strlen("_param_0["), NULL, 10) : 0;
		if (size != k->param_size) {
			snprintf(msg, sizeof msg, "fakecuda: entry %s takes %zu parameter bytes, its host kernel %zu", k->name,
			         size, k->param_size);
			goto fail;
		}
		if (mod->n == MAX_ENTRIES) {
			snprintf(msg, sizeof msg, "fakecuda: more than %d entries", MAX_ENTRIES);
			goto fail;
		}
		// The entry's body, up to the next entry, tells whether it
		// synchronises; without a barrier its threads can run as plain
		// calls, which is much faster.
		const char *end = strstr(name, ".entry ");
		const char *bar = strstr(name, "bar.sync");
		k->barrier = bar && (!end || bar < end);
		mod->entries[mod->n++] = k;
	}
	*m = mod;
	return CUDA_SUCCESS;
fail:
	jit_error(nopt, opts, vals, msg);
	free(mod);
	return CUDA_ERROR_INVALID_PTX;
}

CUresult cuModuleUnload(struct module *m) {
	CUresult r = check();
	return r ? r : free_handle(m, MODULE_MAGIC);
}

CUresult cuModuleGetFunction(struct kernel **f, struct module *m, const char *name) {
	CUresult r = check();
	if (r)
		return r;
	if (!m || m->magic != MODULE_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->entries[i]->name, name)) {
			*f = m->entries[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

// ---- the block scheduler ----

__thread amt_dim3 amt_fake_thread_idx, amt_fake_block_idx, amt_fake_block_dim, amt_fake_grid_dim;

#define STACK_SIZE (256 << 10)

struct fiber {
#ifdef AMT_FAKE_UCONTEXT
	ucontext_t ctx;
#else
	void *sp;
#endif
	char *stack; // the usable stack (above a guard page)
	int done;
};

// Per OS thread: the scheduler's saved context, the running fiber, the
// kernel and arguments, and a free list of stacks.
#ifdef AMT_FAKE_UCONTEXT
static __thread ucontext_t sched_ctx;
#else
static __thread void *sched_sp;
#endif
static __thread struct fiber *running;
static __thread amt_fake_entry run_fn;
static __thread void *const *run_args;
static __thread char **free_stacks;
static __thread int nfree, capfree;

#ifndef AMT_FAKE_UCONTEXT
// amt_fiber_swap saves the callee-saved registers on the current stack,
// stores the stack pointer in *save and continues on stack to (System V
// x86-64).
void amt_fiber_swap(void **save, void *to);
__asm__(".text\n"
        ".p2align 4\n"
        ".globl amt_fiber_swap\n"
        ".hidden amt_fiber_swap\n"
        ".type amt_fiber_swap,@function\n"
        "amt_fiber_swap:\n"
        "\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
        "\tmovq %rsp, (%rdi)\n"
        "\tmovq %rsi, %rsp\n"
        "\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
        "\tret\n"
        ".size amt_fiber_swap,.-amt_fiber_swap\n");
#endif

static void to_scheduler(struct fiber *f) {
#ifdef AMT_FAKE_UCONTEXT
	swapcontext(&f->ctx, &sched_ctx);
#else
	amt_fiber_swap(&f->sp, sched_sp);
#endif
}

static void fiber_main(void) {
	run_fn(run_args);
	running->done = 1;
	to_scheduler(running);
	abort(); // a finished fiber is never resumed
}

void amt_fake_syncthreads(void) {
	if (!running) { // the PTX of this kernel has no barrier: other sources?
		fprintf(stderr, "fakecuda: __syncthreads in a kernel whose PTX has no bar.sync; regenerate the PTX\n");
		abort();
	}
	to_scheduler(running);
}

static char *get_stack(void) {
	if (nfree > 0)
		return free_stacks[--nfree];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, STACK_SIZE + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	mprotect(m, page, PROT_NONE); // overflow faults
	return m + page;
}

static void put_stack(char *s) {
	if (nfree == capfree) {
		int c = capfree ? 2 * capfree : 64;
		char **n = realloc(free_stacks, (size_t)c * sizeof *n);
		if (!n)
			abort();
		free_stacks = n;
		capfree = c;
	}
	free_stacks[nfree++] = s;
}

static int start(struct fiber *f) {
	f->stack = get_stack();
	if (!f->stack)
		return -1;
	f->done = 0;
#ifdef AMT_FAKE_UCONTEXT
	getcontext(&f->ctx);
	f->ctx.uc_stack.ss_sp = f->stack;
	f->ctx.uc_stack.ss_size = STACK_SIZE;
	f->ctx.uc_link = NULL;
	makecontext(&f->ctx, fiber_main, 0);
#else
	void **sp = (void **)(f->stack + STACK_SIZE); // 16-byte aligned
	*--sp = NULL;                                 // fiber_main's return address slot
	*--sp = (void *)fiber_main;                   // where amt_fiber_swap returns
	for (int i = 0; i < 6; i++)
		*--sp = NULL; // rbp, rbx, r12–r15
	f->sp = sp;
#endif
	return 0;
}

static void resume(struct fiber *f) {
	running = f;
#ifdef AMT_FAKE_UCONTEXT
	swapcontext(&sched_ctx, &f->ctx);
#else
	amt_fiber_swap(&sched_sp, f->sp);
#endif
}

// set_thread_idx sets the index of thread t of the block.
static void set_thread_idx(int t) {
	amt_dim3 bd = amt_fake_block_dim;
	amt_fake_thread_idx.x = (unsigned)t % bd.x;
	amt_fake_thread_idx.y = (unsigned)t / bd.x % bd.y;
	amt_fake_thread_idx.z = (unsigned)t / (bd.x * bd.y);
}

// run_thread runs fiber f, thread t of the block, until it waits at a
// barrier (counted in *waiting) or finishes (in *finished, its stack
// freed).
static void run_thread(struct fiber *f, int t, int *waiting, int *finished) {
	set_thread_idx(t);
	resume(f);
	if (f->done) {
		put_stack(f->stack);
		(*finished)++;
	} else
		(*waiting)++;
}

// run_block runs one block to completion: its threads one after the other
// as plain calls when the kernel has no barrier, as fibers otherwise. It
// returns 0, or -1 when the threads disagreed about a barrier (some
// finished while others waited) or no stack could be had.
static int run_block(struct fiber *fs, int nthreads, int barrier) {
	if (!barrier) {
		running = NULL;
		for (int t = 0; t < nthreads; t++) {
			set_thread_idx(t);
			run_fn(run_args);
		}
		return 0;
	}
	int waiting = 0, finished = 0;
	// First pass: start every thread; most kernels finish without a
	// barrier, and their stack serves the next thread.
	for (int t = 0; t < nthreads; t++) {
		if (start(&fs[t]))
			return -1;
		run_thread(&fs[t], t, &waiting, &finished);
	}
	while (waiting > 0) {
		if (finished > 0)
			return -1;
		waiting = 0;
		for (int t = 0; t < nthreads; t++) {
			if (!fs[t].done)
				run_thread(&fs[t], t, &waiting, &finished);
		}
	}
	return 0;
}

// ---- running a grid on a pool of OS threads ----
//
// The blocks of a grid are independent, so they are shared out among
// AMT_FAKECUDA_THREADS OS threads (default: the online CPUs, at most 16),
// the calling one included, each taking the next block until none is
// left. Every output is computed by exactly one fiber whichever thread
// runs it, so results do not depend on the split. Launches are serialised.
// The pool's threads block every signal, so that the Go runtime's signals
// are delivered to its own threads.

struct job {
	amt_fake_entry fn;
	int barrier;
	void **params;
	amt_dim3 grid, block;
	long long nblocks;
	long long next; // the next block to run (atomic)
	int bad;        // a block failed (atomic)
};

static pthread_mutex_t launch_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_wake = PTHREAD_COND_INITIALIZER, pool_done = PTHREAD_COND_INITIALIZER;
static int pool_size = -1; // threads besides the caller; -1: not started
static struct job *pool_job;
static long pool_gen;
static int pool_active;

// run_blocks runs blocks of j until none is left.
static void run_blocks(struct job *j) {
	int nthreads = (int)(j->block.x * j->block.y * j->block.z);
	struct fiber *fs = malloc((size_t)nthreads * sizeof *fs);
	if (!fs) {
		__atomic_store_n(&j->bad, 1, __ATOMIC_SEQ_CST);
		return;
	}
	run_fn = j->fn;
	run_args = j->params;
	amt_fake_block_dim = j->block;
	amt_fake_grid_dim = j->grid;
	for (;;) {
		long long b = __atomic_fetch_add(&j->next, 1, __ATOMIC_SEQ_CST);
		if (b >= j->nblocks || __atomic_load_n(&j->bad, __ATOMIC_SEQ_CST))
			break;
		amt_fake_block_idx.x = (unsigned)(b % j->grid.x);
		amt_fake_block_idx.y = (unsigned)(b / j->grid.x % j->grid.y);
		amt_fake_block_idx.z = (unsigned)(b / ((long long)j->grid.x * j->grid.y));
		if (run_block(fs, nthreads, j->barrier))
			__atomic_store_n(&j->bad, 1, __ATOMIC_SEQ_CST);
	}
	free(fs);
}

static void *pool_worker(void *arg) {
	(void)arg;
	long seen = 0;
	for (;;) {
		pthread_mutex_lock(&pool_mu);
		while (pool_gen == seen)
			pthread_cond_wait(&pool_wake, &pool_mu);
		seen = pool_gen;
		struct job *j = pool_job;
		pthread_mutex_unlock(&pool_mu);
		run_blocks(j);
		pthread_mutex_lock(&pool_mu);
		if (--pool_active == 0)
			pthread_cond_signal(&pool_done);
		pthread_mutex_unlock(&pool_mu);
	}
	return NULL;
}

static void start_pool(void) {
	long n = env_ll("AMT_FAKECUDA_THREADS", sysconf(_SC_NPROCESSORS_ONLN));
	if (n < 1)
		n = 1;
	if (n > 16)
		n = 16;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); // inherited by the new threads
	pool_size = 0;
	for (long i = 1; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, pool_worker, NULL) != 0)
			break;
		pthread_detach(t);
		pool_size++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

// run_grid runs every block of j; it returns non-zero when a block failed.
static int run_grid(struct job *j) {
	pthread_mutex_lock(&launch_mu);
	if (pool_size < 0)
		start_pool();
	if (pool_size == 0 || j->nblocks == 1)
		run_blocks(j);
	else {
		pthread_mutex_lock(&pool_mu);
		pool_job = j;
		pool_active = pool_size;
		pool_gen++;
		pthread_cond_broadcast(&pool_wake);
		pthread_mutex_unlock(&pool_mu);
		run_blocks(j);
		pthread_mutex_lock(&pool_mu);
		while (pool_active > 0)
			pthread_cond_wait(&pool_done, &pool_mu);
		pthread_mutex_unlock(&pool_mu);
	}
	pthread_mutex_unlock(&launch_mu);
	return j->bad;
}

// cuLaunchKernel checks the configuration as a compute capability 7.0
// device would and runs the grid.
CUresult cuLaunchKernel(struct kernel *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, struct stream *s, void **params, void **extra) {
	CUresult r = check();
	if (r)
		return r;
	if (!f || (s && s->magic != STREAM_MAGIC))
		return CUDA_ERROR_INVALID_HANDLE;
	if (extra || !params || gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || gy > 65535 ||
	    gz > 65535 || gx > 2147483647u || bx > 1024 || by > 1024 || bz > 64)
		return CUDA_ERROR_INVALID_VALUE;
	if ((unsigned long long)bx * by * bz > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	if (shared != 0) // dynamic shared memory: amt's kernels use none
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&mu);
	launches++;
	int fault = fail_launch > 0 && --fail_launch == 0;
	if (fault)
		current->sticky = CUDA_ERROR_LAUNCH_FAILED;
	pthread_mutex_unlock(&mu);
	if (fault)
		return CUDA_SUCCESS; // reported asynchronously, as a kernel fault is

	struct job j = {f->fn, f->barrier, params, {gx, gy, gz}, {bx, by, bz}, (long long)gx * gy * gz};
	int bad = run_grid(&j);
	if (bad) {
		fprintf(stderr, "fakecuda: kernel %s: threads of a block disagreed about __syncthreads\n", f->name);
		pthread_mutex_lock(&mu);
		current->sticky = CUDA_ERROR_LAUNCH_FAILED;
		pthread_mutex_unlock(&mu);
	}
	return CUDA_SUCCESS;
}
