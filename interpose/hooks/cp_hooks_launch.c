/*
 * cp_hooks_launch.c - kernel launches: counted per function, and checked for
 * pointer arguments into another device's memory.
 *
 * The launch path is the hot one (about a thousand a step in a PyTorch
 * training loop), so it records no event: it bumps a per-thread counter,
 * and the counts leave as CP_REC_LAUNCH_COUNT deltas every
 * CP_LC_EMIT_EVERY launches of a thread and at flush points.  The
 * cross-device check runs only while two or more devices hold memory.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cp_hot.h"
#include "cp_evt.h"
#include "cp_imap.h"
#include "cp_inflight.h"
#include "cp_launch.h"

#define CP_LC_SLOTS 1024            /* per thread, open addressing */
#define CP_LC_EMIT_EVERY 4096

/* A slot's count is written by its own thread only, with a plain load and
 * store: the emitter (any thread, under cp_lc_emit_lock) records the
 * difference from what it recorded last: no locked instruction on a
 * launch for a count that only its own thread writes, and a count a
 * failed LAUNCH_COUNT could not carry stays for the next one. */
typedef struct cp_lc_slot {
    _Atomic(uintptr_t) func;
    _Atomic uint64_t count;         /* launches so far */
    uint64_t emitted;               /* count when last recorded; under cp_lc_emit_lock */
    uint32_t api;
    uint32_t named_gen;             /* cp_rec_generation() + 1 of the file that
                                     * has func's name from this slot; under
                                     * cp_lc_emit_lock */
} cp_lc_slot;

typedef struct cp_lc_table {
    cp_lc_slot slot[CP_LC_SLOTS];
    struct cp_lc_table *next;
    unsigned since_emit;
} cp_lc_table;

static __thread cp_lc_table *cp_tls_lc;
static __thread uint64_t cp_tls_launches;   /* this thread's launches so far */
static __thread uint64_t cp_tls_taken;      /* ... at its last COPY/SYNC record */
static _Atomic(cp_lc_table *) cp_lc_all;
static pthread_mutex_t cp_lc_emit_lock = PTHREAD_MUTEX_INITIALIZER;

static void *cp_slot_param_info, *cp_slot_kparam_info;

static unsigned cp_ptr_hash(uintptr_t v, unsigned mask)
{
    return (unsigned)((v >> 4) * 0x9E3779B97F4A7C15ull >> 40) & mask;
}

/* --- function names: cp_kname.c ------------------------------------------------- */

void cp_hook_module_get_function(cp_call *c, CUfunction *hfunc, CUmodule hmod, const char *name)
{
    (void)hmod;
    if (c->res == CUDA_SUCCESS && hfunc)
        cp_launch_name_set(*hfunc, name);
}

void cp_hook_library_get_kernel(cp_call *c, CUkernel *pKernel, CUlibrary library,
                                const char *name)
{
    (void)library;
    if (c->res == CUDA_SUCCESS && pKernel)
        cp_launch_name_set(*pKernel, name);
}

void cp_hook_kernel_get_function(cp_call *c, CUfunction *pFunc, CUkernel kernel)
{
    if (c->res == CUDA_SUCCESS && pFunc) {
        const char *n = cp_launch_name(kernel);
        if (n)
            cp_launch_name_set(*pFunc, n);
    }
}

/* --- counting ----------------------------------------------------------------- */

static cp_lc_table *cp_lc_mine(void)
{
    cp_lc_table *t = cp_tls_lc;
    if (__builtin_expect(t != NULL, 1))
        return t;
    t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    /* Tables are never freed: a thread's counts outlive it until emitted. */
    t->next = atomic_load(&cp_lc_all);
    while (!atomic_compare_exchange_weak(&cp_lc_all, &t->next, t))
        ;
    cp_tls_lc = t;
    return t;
}

/* A function's name goes into its first LAUNCH_COUNT from this thread in
 * each file only: counts leave at every flush, and repeating a mangled
 * kernel name (often over a hundred bytes) each time would make
 * LAUNCH_COUNT a large part of a training trace.  The analyzer never needs it again. */
static void cp_lc_emit_table(cp_lc_table *t)
{
    uint32_t gen = cp_rec_generation() + 1;
    for (unsigned i = 0; i < CP_LC_SLOTS; i++) {
        cp_lc_slot *s = &t->slot[i];
        uintptr_t f = atomic_load_explicit(&s->func, memory_order_acquire);
        if (!f)
            continue;
        uint64_t now = atomic_load_explicit(&s->count, memory_order_relaxed), n = now - s->emitted;
        if (!n)
            continue;
        const char *name = s->named_gen == gen ? NULL : cp_launch_name((const void *)f);
        size_t len = name ? strnlen(name, 1024) : 0;
        cp_ev_announce(s->api);
        if (cp_rec_put_launch_count(s->api, f, n, name, len))
            return;     /* not recorded: still pending */
        s->emitted = now;
        if (name)
            s->named_gen = gen;
    }
}

void cp_launch_after_fork(void)
{
    pthread_mutex_init(&cp_lc_emit_lock, NULL);
    cp_lc_table *t = cp_tls_lc;
    if (t) {
        for (unsigned i = 0; i < CP_LC_SLOTS; i++)     /* the parent's to record */
            t->slot[i].emitted = atomic_load_explicit(&t->slot[i].count, memory_order_relaxed);
        t->next = NULL;
    }
    atomic_store(&cp_lc_all, t);
    cp_tls_launches = 0;
    cp_tls_taken = 0;
}

void cp_launch_flush(void)
{
    pthread_mutex_lock(&cp_lc_emit_lock);
    for (cp_lc_table *t = atomic_load(&cp_lc_all); t; t = t->next)
        cp_lc_emit_table(t);
    pthread_mutex_unlock(&cp_lc_emit_lock);
}

/* One running count serves both: COPY/SYNC records carry the launches
 * since the previous one (a snapshot, not a reset), ALLOC records the
 * count itself; the launch path keeps its single increment. */
uint64_t cp_launch_take(void)
{
    uint64_t n = cp_tls_launches - cp_tls_taken;
    cp_tls_taken = cp_tls_launches;
    return n;
}

uint64_t cp_launch_total(void)
{
    return cp_tls_launches;
}

CP_HOT static inline void cp_lc_count(uint32_t api, const void *func)
{
    cp_tls_launches++;
    cp_lc_table *t = cp_lc_mine();
    if (!t)
        return;
    uintptr_t f = (uintptr_t)func;
    unsigned h = cp_ptr_hash(f, CP_LC_SLOTS - 1);
    for (unsigned i = 0; i < CP_LC_SLOTS; i++, h = (h + 1) & (CP_LC_SLOTS - 1)) {
        cp_lc_slot *s = &t->slot[h];
        uintptr_t k = atomic_load_explicit(&s->func, memory_order_relaxed);
        if (k == f && s->api == api) {
            atomic_store_explicit(&s->count, atomic_load_explicit(&s->count, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            goto counted;
        }
        if (k == 0) {
            s->api = api;
            atomic_store_explicit(&s->count, 1, memory_order_relaxed);
            atomic_store_explicit(&s->func, f, memory_order_release);
            goto counted;
        }
    }
    return;     /* a thread launching over 1024 distinct functions: uncounted */
counted:
    if (++t->since_emit >= CP_LC_EMIT_EVERY) {
        t->since_emit = 0;
        if (pthread_mutex_trylock(&cp_lc_emit_lock) == 0) {
            cp_lc_emit_table(t);
            pthread_mutex_unlock(&cp_lc_emit_lock);
        }
    }
}

/* --- the cross-device check ------------------------------------------------------ */

#define CP_PI_SLOTS 4096
#define CP_PI_MAX 64

typedef struct cp_pinfo {
    uintptr_t func;
    int n;                          /* 8-byte parameters found; -1: no info */
    uint16_t off[CP_PI_MAX];
    uint16_t idx[CP_PI_MAX];
} cp_pinfo;

static _Atomic(cp_pinfo *) cp_pi[CP_PI_SLOTS];

/* Parameter layout of f, cached per function: offsets of the 8-byte
 * parameters (pointer candidates; the allocation map decides). */
static const cp_pinfo *cp_pinfo_get(const void *f)
{
    unsigned h = cp_ptr_hash((uintptr_t)f, CP_PI_SLOTS - 1);
    for (unsigned i = 0; i < CP_PI_SLOTS; i++, h = (h + 1) & (CP_PI_SLOTS - 1)) {
        cp_pinfo *e = atomic_load_explicit(&cp_pi[h], memory_order_acquire);
        if (!e)
            break;
        if (e->func == (uintptr_t)f)
            return e;
    }
    if (cp_ev_capturing())
        return NULL;
    cp_pinfo *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->func = (uintptr_t)f;
    CUresult (*fpi)(CUfunction, size_t, size_t *, size_t *) =
        cp_real(&cp_slot_param_info, "cuFuncGetParamInfo", CP_REAL_DRIVER);
    CUresult (*kpi)(CUkernel, size_t, size_t *, size_t *) =
        cp_real(&cp_slot_kparam_info, "cuKernelGetParamInfo", CP_REAL_DRIVER);
    size_t off, size;
    /* A CUkernel may be passed where a CUfunction is expected (CUDA 12). */
    int use_kernel = !(fpi && fpi((CUfunction)f, 0, &off, &size) == CUDA_SUCCESS) &&
                     kpi && kpi((CUkernel)f, 0, &off, &size) == CUDA_SUCCESS;
    for (size_t i = 0; i < 4096 && e->n < CP_PI_MAX; i++) {
        CUresult r = use_kernel ? kpi((CUkernel)f, i, &off, &size)
                                : (fpi ? fpi((CUfunction)f, i, &off, &size) : CUDA_ERROR_NOT_FOUND);
        if (r != CUDA_SUCCESS)
            break;
        if (size == 8 && off < 65536) {
            e->off[e->n] = (uint16_t)off;
            e->idx[e->n] = (uint16_t)i;
            e->n++;
        }
    }
    h = cp_ptr_hash((uintptr_t)f, CP_PI_SLOTS - 1);
    for (unsigned i = 0; i < CP_PI_SLOTS; i++, h = (h + 1) & (CP_PI_SLOTS - 1)) {
        cp_pinfo *expect = NULL;
        if (atomic_compare_exchange_strong(&cp_pi[h], &expect, e))
            return e;
        if (expect->func == (uintptr_t)f) {
            free(e);
            return expect;
        }
    }
    free(e);
    return NULL;
}

static void cp_xdev_rec(const cp_call *c, CUstream s, const void *f, unsigned idx, uint64_t ptr,
                        const cp_range *r, const cp_where *at)
{
    cp_where w = *at;
    w.stack = cp_stack_capture_for_finding();
    const char *name = cp_launch_name(f);
    size_t len = name ? strnlen(name, 1024) : 0;
    cp_ev_put_xdev(c, &w, s, (uint64_t)(uintptr_t)f, idx, ptr, r->dev, r->base, r->size, name,
                   len);
}

CP_HOT static void cp_xdev_check(const cp_call *c, const void *f, CUstream s,
                                 void **params, void **extra)
{
    uint64_t mask = cp_imap_dev_mask();
    if (!(mask & (mask - 1)))
        return;     /* fewer than two devices hold memory: nothing to mix */
    const cp_pinfo *pi = cp_pinfo_get(f);
    if (!pi || pi->n <= 0)
        return;
    const uint8_t *buf = NULL;
    size_t buf_size = 0;
    if (!params && extra) {
        for (void **e = extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
            if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = e[1];
            else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1])
                buf_size = *(size_t *)e[1];
        }
    }
    cp_where w;
    cp_ev_ctx(&w, 0);
    for (int i = 0; i < pi->n; i++) {
        uint64_t v;
        if (params && params[pi->idx[i]])
            memcpy(&v, params[pi->idx[i]], 8);
        else if (buf && (size_t)pi->off[i] + 8 <= buf_size)
            memcpy(&v, buf + pi->off[i], 8);
        else
            continue;
        cp_range r;
        if (v && cp_imap_find(CP_IMAP_DEV, v, &r) == 0 && r.mclass == CP_MC_DEVICE &&
            w.dev >= 0 && r.dev >= 0 && r.dev != w.dev)
            cp_xdev_rec(c, s, f, pi->idx[i], v, &r, &w);
    }
}

/* What every launch records, whichever entry point: its count, its entry
 * in the in-flight ring when the driver took it (g, b: the grid and block;
 * NULL for a cuLaunchKernelEx without a config), the cross-device check. */
CP_HOT static inline void cp_launch_ev(const cp_call *c, CUfunction f, const unsigned *g,
                                       const unsigned *b, unsigned shmem, CUstream s,
                                       void **params, void **extra)
{
    CP_ST_T(t0);
    cp_lc_count(c->api, f);
    CP_ST_P(CP_ST_LCOUNT, t0);
    CP_ST_T(t1);
    if (c->res == CUDA_SUCCESS && g)
        cp_inflight_launch(c, f, g, b, shmem, s);
    CP_ST_P(CP_ST_INFLIGHT, t1);
    CP_ST_T(t2);
    cp_xdev_check(c, f, s, params, extra);
    CP_ST_P(CP_ST_XDEV, t2);
}

void cp_hook_launch(cp_call *c, CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                    CUstream s, void **params, void **extra)
{
    const unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz };
    cp_launch_ev(c, f, g, b, shmem, s, params, extra);
}

void cp_hook_launch_ex(cp_call *c, const CUlaunchConfig *config, CUfunction f, void **params,
                       void **extra)
{
    if (!config) {
        cp_launch_ev(c, f, NULL, NULL, 0, NULL, params, extra);
        return;
    }
    const unsigned g[3] = { config->gridDimX, config->gridDimY, config->gridDimZ };
    const unsigned b[3] = { config->blockDimX, config->blockDimY, config->blockDimZ };
    cp_launch_ev(c, f, g, b, config->sharedMemBytes, config->hStream, params, extra);
}

void cp_hook_launch_coop(cp_call *c, CUfunction f, unsigned int gx, unsigned int gy,
                         unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
                         unsigned int shmem, CUstream s, void **params)
{
    const unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz };
    cp_launch_ev(c, f, g, b, shmem, s, params, NULL);
}

/* A graph replays its captured copies and launches with no API call: count
 * the replays per graph (the capture itself was recorded op by op). */
void cp_hook_graph_launch(cp_call *c, CUgraphExec g, CUstream s)
{
    static const unsigned one[3] = { 1, 1, 1 };
    cp_lc_count(c->api, g);
    if (c->res == CUDA_SUCCESS)
        cp_inflight_launch(c, g, one, one, 0, s);
}
