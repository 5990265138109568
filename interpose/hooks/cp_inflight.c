/*
 * cp_inflight.c - per-thread launch rings and the first sticky error (see
 * cp_inflight.h).
 *
 * Why per thread and not one ring per context: the launch path then takes
 * no lock and no atomic read-modify-write, and shares no cache line with
 * other launching threads; each entry carries its context, so the error
 * path filters a context's launches out of every thread's ring, which is
 * the per-context view.
 *
 * "Since the last successful synchronisation": a global epoch counts
 * successful synchronisations; each launch stores the epoch it saw, and
 * each synchronisation remembers, for its context (or stream), the epoch
 * it ended.  A launch is in flight when no synchronisation of its context,
 * nor of its stream, ended after it.  A launch made by another thread
 * while a synchronisation is running can be counted as finished by it: the
 * list may then miss such a launch; it never lists one a synchronisation
 * covered.  Event synchronisations are not counted (which stream's work
 * they cover is not known here): the list errs on the side of more.
 *
 * Entries are published with a sequence number written last; the error
 * path, which may run on another thread while one is being written, keeps
 * only entries whose number is the same before and after it copied them.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cp_hot.h"
#include "cp_evt.h"
#include "cp_inflight.h"
#include "cp_klog.h"
#include "cp_launch.h"
#include "cp_pystack.h"
#include "cp_stack.h"

typedef struct cp_if_ent {
    _Atomic uint64_t seq;       /* the thread's launch number, 0 = being written */
    uint32_t epoch;
    uint32_t api;
    uintptr_t func, stream, ctx, ret;
    uint32_t grid[3], block[3], shmem;
    uint32_t n_py;
    cp_pyraw py[CP_INFLIGHT_PY];
} cp_if_ent;

typedef struct cp_if_ring {
    cp_if_ent e[CP_INFLIGHT_RING];
    uint64_t n;                 /* launches so far (owner thread only) */
    uint32_t tid;
    struct cp_if_ring *next;
} cp_if_ring;

#define CP_IF_SYNC_SLOTS 64

typedef struct cp_if_sync {
    _Atomic uintptr_t key;      /* ctx or stream; 0 = free */
    _Atomic uint32_t epoch;     /* the epoch the last synchronisation ended */
} cp_if_sync;

static __thread cp_if_ring *cp_tls_ring;
static _Atomic(cp_if_ring *) cp_if_all;
static _Atomic uint32_t cp_if_epoch = 1;
static cp_if_sync cp_if_ctx_sync[CP_IF_SYNC_SLOTS], cp_if_stream_sync[CP_IF_SYNC_SLOTS];
static atomic_int cp_if_reported;

static cp_if_ring *cp_if_mine(void)
{
    cp_if_ring *r = cp_tls_ring;
    if (__builtin_expect(r != NULL, 1))
        return r;
    r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->tid = cp_rec_tid();
    /* Rings are never freed: a thread's launches may be in flight after it
     * ended. */
    r->next = atomic_load(&cp_if_all);
    while (!atomic_compare_exchange_weak(&cp_if_all, &r->next, r))
        ;
    cp_tls_ring = r;
    return r;
}

CP_HOT void cp_inflight_launch(const cp_call *c, const void *func,
                               const unsigned grid[3], const unsigned block[3],
                               unsigned shmem, CUstream s)
{
    cp_if_ring *r = cp_if_mine();
    if (!r)
        return;
    uint64_t seq = ++r->n;
    cp_if_ent *e = &r->e[seq & (CP_INFLIGHT_RING - 1)];
    atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    e->epoch = atomic_load_explicit(&cp_if_epoch, memory_order_relaxed);
    e->api = c->api;
    e->func = (uintptr_t)func;
    e->stream = (uintptr_t)s;
    e->ctx = (uintptr_t)cp_ev_tls_ctx();
    e->ret = c->ret;
    memcpy(e->grid, grid, sizeof e->grid);
    memcpy(e->block, block, sizeof e->block);
    e->shmem = shmem;
    e->n_py = (uint32_t)cp_pystack_raw(e->py, CP_INFLIGHT_PY);
    atomic_store_explicit(&e->seq, seq, memory_order_release);
}

/* The slot of key in table t, claimed when absent (NULL when full). */
static cp_if_sync *cp_if_slot(cp_if_sync *t, uintptr_t key, int claim)
{
    unsigned h = (unsigned)((key >> 4) * 0x9E3779B97F4A7C15ull >> 58) & (CP_IF_SYNC_SLOTS - 1);
    for (unsigned i = 0; i < CP_IF_SYNC_SLOTS; i++, h = (h + 1) & (CP_IF_SYNC_SLOTS - 1)) {
        uintptr_t k = atomic_load(&t[h].key);
        if (k == key)
            return &t[h];
        if (k == 0) {
            if (!claim)
                return NULL;
            uintptr_t expect = 0;
            if (atomic_compare_exchange_strong(&t[h].key, &expect, key) || expect == key)
                return &t[h];
        }
    }
    return NULL;
}

void cp_inflight_synced(CUcontext ctx, CUstream stream, int whole_ctx)
{
    uint32_t e = atomic_fetch_add(&cp_if_epoch, 1) + 1;
    cp_if_sync *s = whole_ctx ? cp_if_slot(cp_if_ctx_sync, (uintptr_t)ctx, 1)
                              : cp_if_slot(cp_if_stream_sync, (uintptr_t)stream + 1, 1);
    if (s)
        atomic_store(&s->epoch, e);
}

static uint32_t cp_if_synced_at(cp_if_sync *t, uintptr_t key)
{
    cp_if_sync *s = cp_if_slot(t, key, 0);
    return s ? atomic_load(&s->epoch) : 0;
}

/* The seqlock reader's fence between copying an entry and re-reading its
 * sequence number.  TSan does not model stand-alone fences (gcc refuses
 * them under -Werror=tsan), so sanitizer builds use an acquire RMW on
 * the sequence word itself, which orders the same loads. */
#if defined(__SANITIZE_THREAD__)
static inline void cp_if_fence_acquire(_Atomic uint64_t *seq)
{
    (void)atomic_fetch_add_explicit(seq, 0, memory_order_acq_rel);
}
#else
static inline void cp_if_fence_acquire(_Atomic uint64_t *seq)
{
    (void)seq;
    atomic_thread_fence(memory_order_acquire);
}
#endif

/* One in-flight launch, copied out of its ring. */
typedef struct cp_if_out {
    cp_if_ent e;
    uint64_t seq;
    uint32_t tid;
} cp_if_out;

static int cp_if_cmp(const void *a, const void *b)
{
    const cp_if_out *x = a, *y = b;
    if (x->e.epoch != y->e.epoch)
        return x->e.epoch < y->e.epoch ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Collect the launches in flight on ctx.  @return : how many (at most
 * max), *overflow set when a ring had lost older ones still in flight. */
static int cp_if_collect(uintptr_t ctx, cp_if_out *out, int max, int *overflow)
{
    uint32_t ctx_epoch = ctx ? cp_if_synced_at(cp_if_ctx_sync, ctx) : 0;
    int n = 0;
    *overflow = 0;
    for (cp_if_ring *r = atomic_load(&cp_if_all); r; r = r->next) {
        int kept = 0;
        for (unsigned i = 0; i < CP_INFLIGHT_RING && n < max; i++) {
            cp_if_ent *src = &r->e[i];
            uint64_t s1 = atomic_load_explicit(&src->seq, memory_order_acquire);
            if (!s1)
                continue;
            cp_if_out *o = &out[n];
            memcpy(&o->e, src, sizeof o->e);
            cp_if_fence_acquire(&src->seq);
            if (atomic_load_explicit(&src->seq, memory_order_relaxed) != s1)
                continue;   /* overwritten while we copied it */
            if (o->e.ctx && ctx && o->e.ctx != ctx)
                continue;
            if (o->e.epoch < ctx_epoch)
                continue;   /* its context was synchronised after it */
            if (cp_if_synced_at(cp_if_stream_sync, o->e.stream + 1) > o->e.epoch)
                continue;   /* its stream was */
            o->seq = s1;
            o->tid = r->tid;
            kept++;
            n++;
        }
        if (kept == CP_INFLIGHT_RING)
            *overflow = 1;
    }
    qsort(out, (size_t)n, sizeof *out, cp_if_cmp);
    return n;
}

static void cp_if_write(const cp_if_out *o)
{
    uint64_t ids[CP_INFLIGHT_PY], ips[1];
    int n_py = cp_pystack_intern_raw(o->e.py, (int)o->e.n_py, ids, CP_INFLIGHT_PY);
    int n_native = 0;
    if (o->e.ret)
        ips[n_native++] = (uint64_t)o->e.ret - 1;
    uint64_t stack = cp_stack_intern(ips, n_native, ids, n_py);
    /* A graph's handle is no function: never ask the driver its name. */
    int graph = strncmp(cp_api_name(o->e.api), "cuGraphLaunch", 13) == 0;
    const char *name = graph ? "(CUDA graph)" : cp_launch_name((const void *)o->e.func);
    size_t len = name ? strnlen(name, 1024) : 0;
    cp_ev_announce(o->e.api);
    (void)cp_rec_put_inflight(o->tid, o->e.api, o->e.func, name, len, o->e.grid[0], o->e.grid[1],
                              o->e.grid[2], o->e.block[0], o->e.block[1], o->e.block[2],
                              o->e.shmem, o->e.stream, o->e.ctx, stack);
}

void cp_inflight_error(const cp_call *c)
{
    if (!cp_inflight_sticky(c->res)) {
        cp_klog_fatal((int)c->res);
        return;
    }
    if (atomic_exchange(&cp_if_reported, 1))
        return;     /* only the first: every later call repeats the error */
    cp_if_out *out = malloc(sizeof(*out) * 4 * CP_INFLIGHT_RING);
    cp_where w;
    int overflow = 0, n = 0;
    cp_ev_ctx(&w, 1);
    if (out)
        n = cp_if_collect((uintptr_t)w.ctx, out, 4 * CP_INFLIGHT_RING, &overflow);
    cp_ev_put_async_error(c, &w, NULL, (uint64_t)n, (uint64_t)overflow);
    for (int i = 0; i < n; i++)
        cp_if_write(&out[i]);
    free(out);
    cp_klog_fatal((int)c->res);
    cp_log(2, "%s returned sticky error %d: %d launch%s in flight recorded", cp_api_name(c->api),
           (int)c->res, n, n == 1 ? "" : "es");
    /* The program is about to see the error and usually dies of it. */
    cp_rec_flush();
}

void cp_inflight_after_fork(void)
{
    cp_if_ring *r = cp_tls_ring;
    if (r) {
        memset(r->e, 0, sizeof r->e);
        r->next = NULL;
    }
    atomic_store(&cp_if_all, r);
    atomic_store(&cp_if_reported, 0);
    memset(cp_if_ctx_sync, 0, sizeof cp_if_ctx_sync);
    memset(cp_if_stream_sync, 0, sizeof cp_if_stream_sync);
}
