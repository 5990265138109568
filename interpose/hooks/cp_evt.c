/*
 * cp_evt.c - event prefix, contexts, classification, devices and OOM
 * snapshots (see cp_evt.h).
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cp_hot.h"
#include "cp_evt.h"
#include "cp_imap.h"
#include "cp_launch.h"
#include "cp_spin.h"
#include "cp_stack.h"

static void *cp_slot_get_current, *cp_slot_get_device, *cp_slot_ptr_attrs;

/* --- capture state ------------------------------------------------------------ */

static atomic_int cp_captures;
static __thread CUcontext cp_tls_ctx;

int cp_ev_capturing(void)
{
    return atomic_load_explicit(&cp_captures, memory_order_relaxed) > 0;
}

void cp_ev_capture_delta(int d)
{
    if (atomic_fetch_add(&cp_captures, d) + d < 0)
        atomic_store(&cp_captures, 0);  /* an end without a begin we saw */
}

void cp_ev_set_tls_ctx(CUcontext ctx)
{
    cp_tls_ctx = ctx;
}

CUcontext cp_ev_tls_ctx(void)
{
    return cp_tls_ctx;
}

/* --- context -> device ----------------------------------------------------- */

#define CP_CTX_SLOTS 256
static _Atomic(CUcontext) cp_ctx_key[CP_CTX_SLOTS];
static atomic_int cp_ctx_dev[CP_CTX_SLOTS];

static unsigned cp_ctx_slot(CUcontext ctx)
{
    uintptr_t v = (uintptr_t)ctx;
    return (unsigned)((v >> 4) ^ (v >> 13)) & (CP_CTX_SLOTS - 1);
}

void cp_ctx_learn(CUcontext ctx, int dev)
{
    if (!ctx)
        return;
    unsigned h = cp_ctx_slot(ctx);
    for (unsigned i = 0; i < CP_CTX_SLOTS; i++, h = (h + 1) & (CP_CTX_SLOTS - 1)) {
        CUcontext k = atomic_load(&cp_ctx_key[h]);
        if (k == ctx) {
            atomic_store(&cp_ctx_dev[h], dev);
            return;
        }
        if (k == NULL || k == (CUcontext)-1) {
            CUcontext expect = k;
            atomic_store(&cp_ctx_dev[h], dev);
            if (atomic_compare_exchange_strong(&cp_ctx_key[h], &expect, ctx))
                return;
        }
    }
}

void cp_ctx_forget(CUcontext ctx)
{
    unsigned h = cp_ctx_slot(ctx);
    for (unsigned i = 0; i < CP_CTX_SLOTS; i++, h = (h + 1) & (CP_CTX_SLOTS - 1)) {
        CUcontext k = atomic_load(&cp_ctx_key[h]);
        if (k == NULL)
            return;
        if (k == ctx) {
            atomic_store(&cp_ctx_key[h], (CUcontext)-1);  /* tombstone */
            return;
        }
    }
}

CP_HOT int cp_ctx_device(CUcontext ctx)
{
    if (!ctx)
        return -1;
    unsigned h = cp_ctx_slot(ctx);
    for (unsigned i = 0; i < CP_CTX_SLOTS; i++, h = (h + 1) & (CP_CTX_SLOTS - 1)) {
        CUcontext k = atomic_load_explicit(&cp_ctx_key[h], memory_order_acquire);
        if (k == ctx)
            return atomic_load_explicit(&cp_ctx_dev[h], memory_order_relaxed);
        if (k == NULL)
            return -1;
    }
    return -1;
}

CP_HOT void cp_ev_ctx(cp_where *w, int want_stack)
{
    CP_ST_T(t0);
    w->ctx = cp_tls_ctx;
    w->dev = -1;
    w->stack = 0;
    if (!cp_ev_capturing()) {
        CUresult (*get_current)(CUcontext *) = cp_real(&cp_slot_get_current, "cuCtxGetCurrent", CP_REAL_DRIVER);
        CUcontext ctx = NULL;
        if (get_current && get_current(&ctx) == CUDA_SUCCESS)
            w->ctx = ctx;
        w->dev = cp_ctx_device(w->ctx);
        if (w->dev < 0 && w->ctx) {
            /* A context made before we saw it (or by another route): ask
             * once, then remember. */
            CUresult (*get_device)(CUdevice *) = cp_real(&cp_slot_get_device, "cuCtxGetDevice", CP_REAL_DRIVER);
            CUdevice d;
            if (get_device && get_device(&d) == CUDA_SUCCESS) {
                w->dev = d;
                cp_ctx_learn(w->ctx, d);
            }
        }
    } else {
        w->dev = cp_ctx_device(w->ctx);
    }
    CP_ST_P(CP_ST_CTX, t0);
    if (want_stack)
        cp_ev_site(w);
}

CP_HOT void cp_ev_site(cp_where *w)
{
    CP_ST_T(t0);
    w->stack = cp_stack_capture(0, 1);
    CP_ST_P(CP_ST_SITE, t0);
}

/* --- API announcements and the EV prefix -------------------------------------- */

/* Per API id: the generation + 1 whose file has the API record, or that
 * value with CP_API_PENDING while one thread writes it.  Another thread
 * must not use the id before the record is committed: its event's time
 * (the call's end, read earlier) is placed after committed definitions
 * only (cp_rec_commit_at). */
#define CP_API_PENDING 0x80000000u
static _Atomic uint32_t cp_api_gen[CP_ID_COUNT];

/* Out of line: inlined, it made every event's cp_ev_announce() a full
 * frame (six registers saved and restored) for a load and a compare. */
static __attribute__((noinline, cold)) void cp_ev_announce_slow(uint32_t api, uint32_t gen,
                                                                uint32_t seen)
{
    /* Bounded: a writer preempted between its claim and its commit is
     * waited for (yielding), never forever: past the bound the event goes
     * out as before this protocol (its name may then follow it). */
    for (unsigned spins = 0; spins < 20000; spins++) {
        if (seen == gen)
            return;
        if (seen != (gen | CP_API_PENDING)) {
            if (atomic_compare_exchange_strong_explicit(&cp_api_gen[api], &seen,
                                                        gen | CP_API_PENDING,
                                                        memory_order_acquire,
                                                        memory_order_acquire)) {
                const char *name = cp_api_name(api);
                (void)cp_rec_put_api(api, name, strlen(name), cp_api_routes(api));
                atomic_store_explicit(&cp_api_gen[api], gen, memory_order_release);
                return;
            }
            continue;   /* seen was reloaded by the failed CAS */
        }
        if (spins < 100)
            cp_cpu_relax();
        else
            sched_yield();
        seen = atomic_load_explicit(&cp_api_gen[api], memory_order_acquire);
    }
}

void cp_ev_announce(uint32_t api)
{
    uint32_t gen = (cp_rec_generation() + 1) & ~CP_API_PENDING;
    /* Acquire: the API record is committed, and g_def_ts raised, before
     * the generation is stored. */
    uint32_t seen = atomic_load_explicit(&cp_api_gen[api], memory_order_acquire);
    if (__builtin_expect(seen != gen, 0))
        cp_ev_announce_slow(api, gen, seen);
}

CP_HOT uint8_t *cp_ev_begin(unsigned type, const cp_call *c, const cp_where *w,
                            CUstream stream, size_t extra)
{
    cp_ev_announce(c->api);
    uint8_t *p = cp_rec_begin(type, CP_EV_MAX + extra);
    if (!p)
        return NULL;
    return cp_enc_ev(p, c->api, (uint64_t)c->res, (uint64_t)(uintptr_t)w->ctx, w->dev,
                     (uint64_t)(uintptr_t)stream, c->dur, w->stack);
}

void cp_ev_call(const cp_call *c, CUstream stream, int want_stack)
{
    cp_where w;
    cp_ev_ctx(&w, want_stack);
    cp_ev_put_call(c, &w, stream);
}

void cp_pre_failed(cp_call *c)
{
    cp_ev_call(c, NULL, 1);
}

/* --- classification ------------------------------------------------------------- */

void cp_classify(uint64_t addr, int host_side, int may_query, int *mclass, int *dev)
{
    cp_range r;
    *dev = -1;
    if (!host_side && cp_imap_find(CP_IMAP_DEV, addr, &r) == 0) {
        *mclass = r.mclass;
        *dev = r.dev;
        return;
    }
    if (cp_imap_find(CP_IMAP_HOST, addr, &r) == 0) {
        *mclass = r.mclass;
        return;
    }
    *mclass = CP_MC_UNKNOWN;
    if (!may_query || cp_ev_capturing())
        return;
    /* Memory CUDA got before we were loaded, or by a route we do not hook:
     * one query.  cuPointerGetAttributes never fails on a pageable pointer,
     * it reports memory type 0 (interposition.md section 5). */
    CUresult (*attrs)(unsigned, CUpointer_attribute *, void **, CUdeviceptr) =
        cp_real(&cp_slot_ptr_attrs, "cuPointerGetAttributes", CP_REAL_DRIVER);
    if (!attrs)
        return;
    CUpointer_attribute which[3] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                     CU_POINTER_ATTRIBUTE_IS_MANAGED };
    unsigned memtype = 0;
    int ordinal = -1;
    int managed = 0;    /* the driver writes a bool-sized value, zero the int */
    void *data[3] = { &memtype, &ordinal, &managed };
    if (attrs(3, which, data, (CUdeviceptr)addr) != CUDA_SUCCESS)
        return;
    if (managed & 0xff) {
        *mclass = CP_MC_MANAGED;
        *dev = ordinal;
    } else if (memtype == CU_MEMORYTYPE_DEVICE) {
        *mclass = CP_MC_DEVICE;
        *dev = ordinal;
    } else if (memtype == CU_MEMORYTYPE_HOST) {
        *mclass = CP_MC_PINNED;
    } else if (memtype == 0) {
        *mclass = CP_MC_PAGEABLE;
    }
}

/* Until call-site capture is linked in, events carry no stack. */
__attribute__((weak)) uint64_t cp_stack_capture(int skip, int with_python)
{
    (void)skip, (void)with_python;
    return 0;
}

uint64_t cp_stack_capture_for_finding(void)
{
    return cp_stack_capture(0, 1);
}
