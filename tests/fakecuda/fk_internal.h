/*
 * fk_internal.h - state shared between the files of the fake CUDA driver.
 *
 * Everything declared here is hidden: the fake never calls one of its own
 * exported cu* entry points (a preloaded shim would intercept such a call),
 * it calls these fk_* helpers instead.  One global mutex (fk_lock) guards
 * all driver state; copies and kernels run outside it on plain host memory.
 */
#ifndef FK_INTERNAL_H
#define FK_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_api.h"

#pragma GCC visibility push(hidden)

#define FK_MAX_DEVICES 16
#define FK_GRANULARITY ((size_t)2 << 20)  /* VMM granularity: 2 MiB */
#define FK_ALIGN 256                      /* cuMemAlloc alignment */

/*
 * FK_ALIAS(name): a hidden alias of an exported entry point.  The GPA table
 * takes addresses through these so they bind inside the library (no GOT
 * entry a preloaded shim could override), and dladdr() of the address still
 * names the exported symbol.
 */
#define FK_ALIAS(name) \
    extern __typeof__(name) fk_pfn_##name __attribute__((alias(#name), visibility("hidden")))

/* fk_fault.c: FAKECUDA_FAIL_LAUNCH.  fk_fault_launched() after every
 * successful launch; fk_fault_sync() at every synchronising call (the
 * pending fault becomes the sticky error it returns); fk_fault_sticky_code()
 * the sticky error, 0 while none. */
void fk_fault_launched(void);
CUresult fk_fault_sync(void);
CUresult fk_fault_sticky_code(void);

/* Entry guard: stub library -> 34, before a successful cuInit -> 3; a
 * sticky fault (fk_fault.c) -> its error. */
#define FK_GUARD() \
    do { CUresult fk_rc_ = fk_guard(); if (fk_rc_ != CUDA_SUCCESS) return fk_rc_; } while (0)

#define FK_MAGIC_CTX 0x43545831u
#define FK_MAGIC_STREAM 0x53545231u
#define FK_MAGIC_EVENT 0x45564e31u
#define FK_MAGIC_POOL 0x504f4f31u
#define FK_MAGIC_GRAPH 0x47524131u
#define FK_MAGIC_EXEC 0x47455831u
#define FK_MAGIC_DEAD 0xdeadu

/* --- free-extent allocator over one device's arena (fk_mem.c) --- */
struct fk_extent {
    size_t off;
    size_t size;
};

struct fk_dev {
    int phys;               /* physical index (UUID, PCI bus derive from it) */
    char name[256];
    int cc_major, cc_minor;
    size_t capacity;        /* FAKECUDA_MEM */
    size_t used_other;      /* FAKECUDA_USED: "other processes" */
    size_t used;            /* ours: allocations, pool reserves, VMM device memory */
    char *arena;            /* capacity bytes, MAP_NORESERVE */
    size_t arena_size;
    struct fk_extent *free_ext;
    size_t n_free, cap_free;
    struct CUctx_st *primary;
    struct CUmemPoolHandle_st *default_pool;
    struct CUmemPoolHandle_st *current_pool;
};

struct CUctx_st {
    uint32_t magic;
    int dev;                /* logical ordinal */
    unsigned flags;
    int primary;
    int retain;             /* primary: retain count; 0 = inactive */
};

/* --- captured work (fk_stream.c) --- */
enum fk_node_kind { FK_NODE_COPY = 1, FK_NODE_MEMSET, FK_NODE_KERNEL };
struct fk_kdef;
struct fk_node {
    enum fk_node_kind kind;
    void *dst;
    const void *src;
    size_t n;               /* bytes (copy) or elements (memset) */
    unsigned value;
    int elem;               /* memset element size */
    const struct fk_kdef *kdef;
    unsigned char params[64];
};

struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned flags;
    int priority;
    CUstreamCaptureStatus capture;
    CUstreamCaptureMode mode;
    struct CUgraph_st *graph;   /* graph being captured */
};

/* A stream argument after resolution (NULL, LEGACY, PER_THREAD or real). */
struct fk_sref {
    struct CUctx_st *ctx;
    struct CUstream_st *s;      /* NULL for the special streams */
};

/* --- device memory ranges (fk_mem.c) --- */
enum fk_kind { FK_DEVMEM = 1, FK_POOLMEM, FK_MANAGED, FK_HOSTALLOC, FK_HOSTREG, FK_VMM };
struct fk_vmm_handle;
struct fk_range {
    uintptr_t start;
    size_t size;            /* requested size */
    size_t block;           /* bytes taken from the arena / accounted */
    enum fk_kind kind;
    int dev;                /* logical ordinal; -1 for host VMM */
    struct CUctx_st *ctx;
    unsigned flags;         /* host alloc/register flags */
    int access;             /* VMM: 0 none, 1 read, 3 read-write */
    struct CUmemPoolHandle_st *pool;
    struct fk_vmm_handle *vh;
    uintptr_t res_start;    /* VMM: reservation containing it */
    size_t res_size;
    uint64_t id;            /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
};

/* ---- fk_device.c: configuration and devices ---- */
extern pthread_mutex_t fk_lock;     /* guards every piece of driver state */
extern int fk_ndev;                 /* visible devices (after CUDA_VISIBLE_DEVICES) */
extern struct fk_dev fk_devs[FK_MAX_DEVICES];   /* indexed by logical ordinal */
extern int fk_driver_version;       /* FAKECUDA_DRIVER_VERSION */
extern int fk_gpa_newer;            /* FAKECUDA_GPA_NEWER=1 */
extern int fk_stub;                 /* FAKECUDA_STUB=1 */
extern unsigned fk_forbid_handles; /* FAKECUDA_FORBID_HANDLES: cuMemCreate handle types refused (800) */
extern unsigned fk_alloc_us;        /* FAKECUDA_ALLOC_US: time of cuMemAlloc / cuMemFree */
extern int fk_ptds_default;         /* CUDA_API_PER_THREAD_DEFAULT_STREAM=1 */

/*! fk_env_load() :
 *  Reads the environment once (any thread, any time, also before cuInit). */
void fk_env_load(void);

/*! fk_guard() :
 *  Entry check of every call that needs cuInit.  Thread-safe, lock-free.
 *  @return : CUDA_SUCCESS after a successful cuInit, CUDA_ERROR_STUB_LIBRARY
 *            in stub mode, else CUDA_ERROR_NOT_INITIALIZED. */
CUresult fk_guard(void);

/*! fk_dev_free_locked() :
 *  @return : bytes still allocatable on d (capacity - other processes - ours).
 *  fk_lock must be held. */
size_t fk_dev_free_locked(const struct fk_dev *d);

/*! fk_handle_alloc() :
 *  Zeroed memory for a handle object that is never freed (stale handles stay
 *  readable) and stays reachable for leak checkers.  Takes fk_lock.
 *  @return : the object, or NULL when out of memory. */
void *fk_handle_alloc(size_t size);

/* ---- fk_ctx.c: contexts ---- */

/*! fk_ctx_current() :
 *  @return : CUDA_SUCCESS with *out = the calling thread's current context,
 *            or CUDA_ERROR_INVALID_CONTEXT (none, destroyed, released). */
CUresult fk_ctx_current(struct CUctx_st **out);

/*! fk_ctx_check() :
 *  @return : CUDA_SUCCESS if ctx is a live context, else CUDA_ERROR_INVALID_CONTEXT. */
CUresult fk_ctx_check(struct CUctx_st *ctx);

/* ---- fk_stream.c: streams, capture, the work primitives ---- */

/*! fk_sref_get() :
 *  Resolves a stream argument (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or
 *  a created stream) into *out.
 *  @return : CUDA_SUCCESS, CUDA_ERROR_INVALID_HANDLE (not a live stream) or
 *            CUDA_ERROR_INVALID_CONTEXT (special stream without a current context). */
CUresult fk_sref_get(CUstream s, struct fk_sref *out);

/*! fk_op_copy(), fk_op_memset(), fk_op_kernel() :
 *  Perform one unit of work now, or record it when sr's stream is capturing.
 *  Callers validate pointers first.  memset: elem is 1, 2 or 4 bytes and count
 *  in elements; kernel: params is the packed 64-byte argument buffer.
 *  @return : CUDA_SUCCESS, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED or
 *            CUDA_ERROR_OUT_OF_MEMORY (recording). */
CUresult fk_op_copy(const struct fk_sref *sr, void *dst, const void *src, size_t n);
CUresult fk_op_memset(const struct fk_sref *sr, void *dst, unsigned value, int elem, size_t count);
CUresult fk_op_kernel(const struct fk_sref *sr, const struct fk_kdef *k, const unsigned char *params);

/*! fk_run_node() :
 *  Executes one recorded unit of work (graph replay). */
void fk_run_node(const struct fk_node *nd);

/*! fk_capture_conflict_locked() :
 *  A context-wide sync while streams of ctx capture in global or thread-local
 *  mode invalidates those captures.  fk_lock must be held.
 *  @return : 1 if some capture was invalidated (the sync must fail), else 0. */
int fk_capture_conflict_locked(const struct CUctx_st *ctx);

/* ---- fk_range.c: the memory map and the device arenas (fk_lock held) ---- */

/*! fk_range_find_locked() :
 *  @return : the known range containing address p, or NULL. */
struct fk_range *fk_range_find_locked(uintptr_t p);

/*! fk_range_add_locked() :
 *  Inserts a copy of *r (ranges never overlap) and gives it a buffer id.
 *  @return : CUDA_SUCCESS or CUDA_ERROR_OUT_OF_MEMORY. */
CUresult fk_range_add_locked(const struct fk_range *r);

/*! fk_range_del_locked() :
 *  Removes and frees r (a pointer from find/at; invalid afterwards). */
void fk_range_del_locked(struct fk_range *r);

/*! fk_range_count_locked(), fk_range_at_locked() :
 *  Iterate the ranges in address order; deleting shifts later indexes down. */
size_t fk_range_count_locked(void);
struct fk_range *fk_range_at_locked(size_t i);

/*! fk_arena_alloc_locked() :
 *  First fit of size bytes (a multiple of FK_ALIGN) in d's arena; does not
 *  account d->used.  @return : 0 with *out set, or -1 when no extent fits. */
int fk_arena_alloc_locked(struct fk_dev *d, size_t size, uintptr_t *out);

/*! fk_arena_free_locked() :
 *  Returns a block from fk_arena_alloc_locked (same size) to d's arena. */
void fk_arena_free_locked(struct fk_dev *d, uintptr_t p, size_t size);

/*! fk_mem_check() :
 *  Takes fk_lock.  write: the access writes; unknown_ok: memory the driver
 *  does not know counts as pageable host memory (unified-addressing copies).
 *  @return : 1 if [p, p+n) may be accessed so, else 0. */
int fk_mem_check(uintptr_t p, size_t n, int write, int unknown_ok);

/*! fk_mem_drop_ctx_locked() :
 *  Frees the device, managed and host memory allocated in ctx (context
 *  destroy / primary context release to zero / reset). */
void fk_mem_drop_ctx_locked(const struct CUctx_st *ctx);

/*! fk_round() :
 *  @return : n rounded up to a multiple of a. */
size_t fk_round(size_t n, size_t a);

/* ---- fk_pool.c: memory pools (fk_lock held) ---- */

/*! fk_pool_init_dev_locked() :
 *  Creates device dev's default pool (at cuInit). */
void fk_pool_init_dev_locked(int dev);

/*! fk_pool_sync_trim_locked() :
 *  A synchronization point: every pool releases cached memory above its
 *  release threshold. */
void fk_pool_sync_trim_locked(void);

/*! fk_pool_free_block_locked() :
 *  Returns an allocated block to pool's cache (stays reserved). */
void fk_pool_free_block_locked(struct CUmemPoolHandle_st *pool, uintptr_t p, size_t block);

/* ---- fk_kernel.c: built-in kernels ---- */

/*! fk_kernel_run() :
 *  Runs built-in kernel k on its packed argument buffer (pointers checked). */
void fk_kernel_run(const struct fk_kdef *k, const unsigned char *params);

#pragma GCC visibility pop

#endif /* FK_INTERNAL_H */
