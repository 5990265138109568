/*
 * cp_wrap.c - the wrappers, generated from include/cp_api_table.h.
 *
 * Every wrapper has the same shape: find the driver's own function, and if
 * this thread is not already inside cuprobe and tracing is on, time the real
 * call and hand the arguments to the row's hook.  The result and errno the
 * program sees are the driver's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cp_inflight.h"
#include "cp_rec.h"
#include "cp_real.h"
#include "cp_wrap.h"

/* The depth guard: our own driver calls (queries made by hooks) and any
 * driver that calls its exported names internally must not be recorded
 * again.  initial-exec TLS: one %fs-relative load. */
static __thread int cp_tls_depth;

/* The driver's functions by API id, filled by the resolvers or on first
 * use; accessed with __atomic builtins (cp_real() fills a slot). */
static void *cp_real_tab[CP_ID_COUNT];

int cp_hook_depth(void)
{
    return cp_tls_depth;
}

static inline int cp_enter(void)
{
    if (cp_tls_depth || !cp_rec_on())
        return 0;
    cp_tls_depth = 1;
    return 1;
}

static inline void cp_leave(const cp_call *c)
{
    cp_tls_depth = 0;
    errno = c->saved_errno;
}

static inline void cp_call_start(cp_call *c, uint32_t id, int mode)
{
    c->api = id;
    c->t0 = mode == CP_M_EV ? cp_now_ns() : 0;
}

static inline void cp_call_stop(cp_call *c, CUresult r, int mode)
{
    c->saved_errno = errno;
    c->res = r;
    if (mode == CP_M_EV) {
        /* A clock that had to restart its line may read back (cp_clock.h):
         * a duration is never negative. */
        uint64_t t1 = cp_now_ns();
        c->dur = t1 > c->t0 ? t1 - c->t0 : 0;
    } else {
        c->dur = 0;
    }
}

#ifdef CP_SELFTIME
/* Benchmark builds only (`make selftime`: -DCP_SELFTIME into build/st): each
 * thread counts, per API, its calls and the nanoseconds spent in the wrapper
 * and in the driver's function, so that a benchmark can tell the shim's own
 * time from the driver's and from time lost outside the calls
 * (cuprobe_bench_selftime(), read by bench/gpu_steps.py's toggle mode).
 * Not in normal builds: three more clock reads a call. */
#include <stdlib.h>
struct cp_st {
    /* calls, ns in the wrapper, ns in the driver; then the parts: times, ns */
    uint64_t v[CP_ID_COUNT + CP_ST_PARTS][3];
};
#define CP_ST_THREADS 512
static struct cp_st *cp_st_tab[CP_ST_THREADS];
static atomic_int cp_st_used;
static __thread struct cp_st *cp_st_mine;

static struct cp_st *cp_st_get(void)
{
    if (!cp_st_mine) {
        int i = atomic_fetch_add(&cp_st_used, 1);
        if (i >= CP_ST_THREADS)
            return NULL;
        cp_st_mine = calloc(1, sizeof *cp_st_mine);
        __atomic_store_n(&cp_st_tab[i], cp_st_mine, __ATOMIC_RELEASE);
    }
    return cp_st_mine;
}

static inline void cp_st_add(struct cp_st *st, uint32_t id, uint64_t t0, uint64_t r0, uint64_t r1)
{
    if (!st)
        return;
    uint64_t t1 = cp_now_ns();
    uint64_t *v = st->v[id];
    /* Relaxed single-writer updates: cuprobe_bench_selftime() reads them
     * from another thread. */
    __atomic_store_n(&v[0], v[0] + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&v[1], v[1] + (t1 - t0), __ATOMIC_RELAXED);
    __atomic_store_n(&v[2], v[2] + (r1 - r0), __ATOMIC_RELAXED);
}

uint64_t cp_st_now(void)
{
    return cp_now_ns();
}

void cp_st_part(unsigned part, uint64_t t0)
{
    struct cp_st *st = cp_st_get();
    if (!st || part >= CP_ST_PARTS)
        return;
    uint64_t *v = st->v[CP_ID_COUNT + part];
    __atomic_store_n(&v[0], v[0] + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&v[1], v[1] + (cp_now_ns() - t0), __ATOMIC_RELAXED);
}

/*! cuprobe_bench_selftime() : every thread's counts summed into
 *  out[3 * id + k] (k: calls, ns in the wrapper, ns in the driver) for the
 *  first cap / 3 APIs, then the parts (k: times, ns).  @return : the
 *  number of rows (API ids, then parts). */
CP_EXPORT int cuprobe_bench_selftime(uint64_t *out, int cap);
int cuprobe_bench_selftime(uint64_t *out, int cap)
{
    int n = atomic_load(&cp_st_used);
    memset(out, 0, (size_t)cap * sizeof *out);
    for (int i = 0; i < n && i < CP_ST_THREADS; i++) {
        struct cp_st *st = __atomic_load_n(&cp_st_tab[i], __ATOMIC_ACQUIRE);
        for (int id = 0; st && id < CP_ID_COUNT + CP_ST_PARTS && 3 * id + 2 < cap; id++)
            for (int k = 0; k < 3; k++)
                out[3 * id + k] += __atomic_load_n(&st->v[id][k], __ATOMIC_RELAXED);
    }
    return CP_ID_COUNT + CP_ST_PARTS;
}

/*! cuprobe_bench_api() : the name of API id (cuprobe_bench_selftime's rows). */
CP_EXPORT const char *cuprobe_bench_api(int id);
const char *cuprobe_bench_api(int id)
{
    static const char *const parts[CP_ST_PARTS] = {
#define CP_ST_X(id, name) "part:" name,
        CP_ST_PART_TABLE(CP_ST_X)
#undef CP_ST_X
    };
    if (id >= CP_ID_COUNT && id < CP_ID_COUNT + CP_ST_PARTS)
        return parts[id - CP_ID_COUNT];
    return id >= 0 && id < CP_ID_COUNT ? cp_api_name((uint32_t)id) : "";
}
#define CP_ST_ENTER struct cp_st *st_ = cp_st_get(); uint64_t st_t0_ = cp_now_ns(), st_r0_, st_r1_;
#define CP_ST_REAL(r, call) do { st_r0_ = cp_now_ns(); r = call; st_r1_ = cp_now_ns(); } while (0)
#define CP_ST_LEAVE(id) cp_st_add(st_, id, st_t0_, st_r0_, st_r1_)
#else
#define CP_ST_ENTER
#define CP_ST_REAL(r, call) (r = call)
#define CP_ST_LEAVE(id) ((void)0)
#endif

static CUresult cp_no_real(uint32_t id)
{
    static atomic_int logged;
    if (!atomic_exchange(&logged, 1))
        cp_log(1, "%s: libcuda has no such function; returning CUDA_ERROR_NOT_FOUND",
               cp_api_name(id));
    return CUDA_ERROR_NOT_FOUND;
}

#define CP_CALL_ARGS(...) (&c_ __VA_OPT__(,) __VA_ARGS__)
#define CP_API(name, pfn, mode, hook, params, args)                        \
    typedef CUresult (*cp_fn_##name) params;                               \
    CP_EXPORT CUresult name params;                                        \
    CUresult name params                                                   \
    {                                                                      \
        cp_fn_##name real_ = (cp_fn_##name)cp_real_fn(CP_ID_##name);       \
        if (__builtin_expect(real_ == NULL, 0))                            \
            return cp_no_real(CP_ID_##name);                               \
        CUresult r_;                                                       \
        CP_ST_ENTER                                                        \
        if (!cp_enter()) {                                                 \
            CP_ST_REAL(r_, real_ args);                                    \
            CP_ST_LEAVE(CP_ID_##name);                                     \
            return r_;                                                     \
        }                                                                  \
        cp_call c_;                                                        \
        cp_call_start(&c_, CP_ID_##name, mode);                            \
        c_.ret = (uintptr_t)__builtin_return_address(0);                   \
        if (mode == CP_M_PRE) {                                            \
            cp_call_stop(&c_, CUDA_SUCCESS, CP_M_LITE);                    \
            cp_hook_##hook CP_CALL_ARGS args;                              \
        }                                                                  \
        CP_ST_REAL(r_, real_ args);                                        \
        cp_call_stop(&c_, r_, mode);                                       \
        if (mode != CP_M_PRE)                                              \
            cp_hook_##hook CP_CALL_ARGS args;                              \
        else if (r_ != CUDA_SUCCESS)                                       \
            cp_pre_failed(&c_);                                            \
        if (__builtin_expect(cp_inflight_fatal(r_), 0))                   \
            cp_inflight_error(&c_);                                        \
        cp_leave(&c_);                                                     \
        CP_ST_LEAVE(CP_ID_##name);                                         \
        return r_;                                                         \
    }
#define CP_API0(name, pfn, mode, hook)                                     \
    typedef CUresult (*cp_fn_##name)(void);                                \
    CP_EXPORT CUresult name(void);                                         \
    CUresult name(void)                                                    \
    {                                                                      \
        cp_fn_##name real_ = (cp_fn_##name)cp_real_fn(CP_ID_##name);       \
        if (__builtin_expect(real_ == NULL, 0))                            \
            return cp_no_real(CP_ID_##name);                               \
        if (!cp_enter())                                                   \
            return real_();                                                \
        cp_call c_;                                                        \
        cp_call_start(&c_, CP_ID_##name, mode);                            \
        c_.ret = (uintptr_t)__builtin_return_address(0);                   \
        CUresult r_ = real_();                                             \
        cp_call_stop(&c_, r_, mode);                                       \
        cp_hook_##hook(&c_);                                               \
        if (__builtin_expect(cp_inflight_fatal(r_), 0))                   \
            cp_inflight_error(&c_);                                        \
        cp_leave(&c_);                                                     \
        return r_;                                                         \
    }
#include "cp_api_table.h"
#undef CP_API
#undef CP_API0

static void *const cp_wrappers[CP_ID_COUNT] = {
#define CP_API(name, pfn, mode, hook, params, args) (void *)name,
#define CP_API0(name, pfn, mode, hook) (void *)name,
#include "cp_api_table.h"
#undef CP_API
#undef CP_API0
};

void *cp_wrapper_fn(uint32_t id)
{
    return id < CP_ID_COUNT ? cp_wrappers[id] : NULL;
}

void cp_real_set(uint32_t id, void *real)
{
    if (id < CP_ID_COUNT && real)
        __atomic_store_n(&cp_real_tab[id], real, __ATOMIC_RELEASE);
}

void *cp_real_fn(uint32_t id)
{
    void *p = __atomic_load_n(&cp_real_tab[id], __ATOMIC_ACQUIRE);
    if (__builtin_expect(p != NULL, 1))
        return p;
    /* A PLT caller reached our exported wrapper before any resolver handed
     * out this function: look the exact name up in libcuda itself. */
    return cp_real(&cp_real_tab[id], cp_api_name(id), CP_REAL_DRIVER);
}
