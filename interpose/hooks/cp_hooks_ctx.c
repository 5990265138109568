/*
 * cp_hooks_ctx.c - initialisation, contexts, streams, captures and
 * synchronisation.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "cp_evt.h"
#include "cp_imap.h"
#include "cp_inflight.h"
#include "cp_launch.h"

/* The last DRIVER answer this hook recorded, and the file it went to. */
static pthread_mutex_t cp_drv_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t cp_drv_gen;         /* cp_rec_generation() + 1; 0: none yet */
static int64_t cp_drv_version;
static uint64_t cp_drv_result;
static atomic_int cp_init_failed;   /* a cuInit failed in this image */

/* A forked child: only the forking thread exists, any lock another thread
 * held at the fork stays held, and the parent's live memory is not the
 * child's (CUDA state is not inherited; a child that uses CUDA starts
 * over).  Start every shim-side table afresh. */
static void cp_hooks_atfork_child(void)
{
    pthread_mutex_init(&cp_drv_lock, NULL);
    atomic_store(&cp_init_failed, 0);
    cp_imap_reset();
    cp_launch_after_fork();
    cp_inflight_after_fork();
    cp_devinfo_after_fork();
}

/* Registered before main: every trace file (a forked child's too) repeats
 * the environment section. */
__attribute__((constructor(200))) static void cp_hooks_ctx_init(void)
{
    cp_rec_on_new_file(cp_devinfo_on_new_file);
    /* Launch counts live in per-thread counters until a flush or the end. */
    cp_rec_on_flush(cp_launch_flush);
    pthread_atfork(NULL, NULL, cp_hooks_atfork_child);
}

void cp_hook_init(cp_call *c, unsigned int Flags)
{
    (void)Flags;
    cp_ev_call(c, NULL, 1);
    if (c->res == CUDA_SUCCESS)
        cp_ev_devices();
    /* A failed cuInit is often the last thing a process does with CUDA,
     * and its life may be short: a child forked after its parent
     * initialised CUDA gets CUDA_ERROR_NOT_INITIALIZED here, and
     * multiprocessing.Pool kills its workers as soon as one raises, before
     * the writer flushes on its timer.  Flushed now, the first time. */
    else if (!atomic_exchange(&cp_init_failed, 1))
        cp_rec_flush();
}

/* cudart asks the driver's version before anything else and gives up
 * ("driver insufficient") without calling cuInit when it is too old: this
 * record is then the only witness.  Programs ask again and again (PyTorch
 * many times a training step), always getting the same answer: a record repeats nothing, so only
 * the first answer in each file and any answer that differs are recorded. */
void cp_hook_driver_version(cp_call *c, int *driverVersion)
{
    int64_t v = (c->res == CUDA_SUCCESS && driverVersion) ? *driverVersion : 0;
    uint64_t res = (uint64_t)c->res;
    uint32_t gen = cp_rec_generation() + 1;
    pthread_mutex_lock(&cp_drv_lock);
    int same = cp_drv_gen == gen && cp_drv_version == v && cp_drv_result == res;
    if (!same && cp_rec_put_driver(v, res) == 0) {
        cp_drv_gen = gen;
        cp_drv_version = v;
        cp_drv_result = res;
    }
    pthread_mutex_unlock(&cp_drv_lock);
}

static void cp_ctx_ev(const cp_call *c, int op, CUcontext target, int target_dev, uint64_t flags,
                      int want_stack)
{
    cp_where w;
    cp_ev_ctx(&w, want_stack);
    cp_ev_put_ctx(c, &w, NULL, (uint64_t)op, (uint64_t)(uintptr_t)target, target_dev, flags);
}

static void cp_ctx_created(const cp_call *c, CUcontext *pctx, unsigned flags, CUdevice dev)
{
    CUcontext ctx = (c->res == CUDA_SUCCESS && pctx) ? *pctx : NULL;
    if (ctx) {
        cp_ctx_learn(ctx, dev);
        cp_ev_set_tls_ctx(ctx);     /* cuCtxCreate pushes the new context */
    }
    cp_ctx_ev(c, CP_CTX_CREATE, ctx, dev, flags, 1);
}

void cp_hook_ctx_create2(cp_call *c, CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    cp_ctx_created(c, pctx, flags, dev);
}

void cp_hook_ctx_create3(cp_call *c, CUcontext *pctx, CUexecAffinityParam *paramsArray,
                         int numParams, unsigned int flags, CUdevice dev)
{
    (void)paramsArray, (void)numParams;
    cp_ctx_created(c, pctx, flags, dev);
}

void cp_hook_ctx_create4(cp_call *c, CUcontext *pctx, CUctxCreateParams *params,
                         unsigned int flags, CUdevice dev)
{
    (void)params;
    cp_ctx_created(c, pctx, flags, dev);
}

void cp_hook_ctx_destroy(cp_call *c, CUcontext ctx)
{
    int dev = cp_ctx_device(ctx);
    cp_ctx_ev(c, CP_CTX_DESTROY, ctx, dev, 0, 0);
    if (c->res == CUDA_SUCCESS)
        cp_ctx_forget(ctx);
}

void cp_hook_ctx_retain(cp_call *c, CUcontext *pctx, CUdevice dev)
{
    CUcontext ctx = (c->res == CUDA_SUCCESS && pctx) ? *pctx : NULL;
    if (ctx)
        cp_ctx_learn(ctx, dev);
    cp_ctx_ev(c, CP_CTX_RETAIN, ctx, dev, 0, 1);
}

void cp_hook_ctx_release(cp_call *c, CUdevice dev)
{
    cp_ctx_ev(c, CP_CTX_RELEASE, NULL, dev, 0, 0);
}

void cp_hook_ctx_reset(cp_call *c, CUdevice dev)
{
    cp_ctx_ev(c, CP_CTX_RESET, NULL, dev, 0, 1);
}

void cp_hook_ctx_set(cp_call *c, CUcontext ctx)
{
    if (c->res == CUDA_SUCCESS)
        cp_ev_set_tls_ctx(ctx);
    cp_ctx_ev(c, CP_CTX_SET, ctx, cp_ctx_device(ctx), 0, 0);
}

void cp_hook_ctx_push(cp_call *c, CUcontext ctx)
{
    if (c->res == CUDA_SUCCESS)
        cp_ev_set_tls_ctx(ctx);
    cp_ctx_ev(c, CP_CTX_PUSH, ctx, cp_ctx_device(ctx), 0, 0);
}

void cp_hook_ctx_pop(cp_call *c, CUcontext *pctx)
{
    CUcontext popped = (c->res == CUDA_SUCCESS && pctx) ? *pctx : NULL;
    cp_ctx_ev(c, CP_CTX_POP, popped, cp_ctx_device(popped), 0, 0);
}

static void cp_stream_ev(const cp_call *c, int op, CUstream s, uint64_t flags, int prio)
{
    cp_where w;
    cp_ev_ctx(&w, 0);
    cp_ev_put_stream(c, &w, s, (uint64_t)op, (uint64_t)(uintptr_t)s, flags, prio);
}

void cp_hook_stream_create(cp_call *c, CUstream *ph, unsigned int Flags)
{
    cp_stream_ev(c, CP_STREAM_CREATE, (c->res == CUDA_SUCCESS && ph) ? *ph : NULL, Flags, 0);
}

void cp_hook_stream_create_prio(cp_call *c, CUstream *ph, unsigned int flags, int priority)
{
    cp_stream_ev(c, CP_STREAM_CREATE, (c->res == CUDA_SUCCESS && ph) ? *ph : NULL, flags,
                 priority);
}

void cp_hook_stream_destroy(cp_call *c, CUstream s)
{
    cp_stream_ev(c, CP_STREAM_DESTROY, s, 0, 0);
}

/* Captures: counted first, so that from here on no hook makes an extra
 * driver call (it would invalidate the capture, CUDA_ERROR_STREAM_CAPTURE_*). */
void cp_hook_capture_begin(cp_call *c, CUstream s, CUstreamCaptureMode mode)
{
    if (c->res == CUDA_SUCCESS)
        cp_ev_capture_delta(1);
    cp_stream_ev(c, CP_STREAM_BEGIN_CAPTURE, s, (uint64_t)mode, 0);
}

/* CUDA 10.0's form, without a mode: it captures in global mode. */
void cp_hook_capture_begin1(cp_call *c, CUstream s)
{
    cp_hook_capture_begin(c, s, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

void cp_hook_capture_end(cp_call *c, CUstream s, CUgraph *g)
{
    (void)g;
    cp_stream_ev(c, CP_STREAM_END_CAPTURE, s, 0, 0);
    /* The capture is over whatever the result (an invalidated one ends too). */
    cp_ev_capture_delta(-1);
}

static void cp_sync_ev(const cp_call *c, int op, CUstream s)
{
    cp_where w;
    cp_ev_ctx(&w, 1);
    if (c->res == CUDA_SUCCESS && op != CP_SYNC_EVENT)
        cp_inflight_synced(w.ctx, s, op == CP_SYNC_CTX);
    cp_ev_put_sync(c, &w, s, (uint64_t)op, cp_launch_take());
}

void cp_hook_ctx_sync(cp_call *c)
{
    cp_sync_ev(c, CP_SYNC_CTX, NULL);
}

void cp_hook_ctx_sync2(cp_call *c, CUcontext ctx)
{
    (void)ctx;
    cp_sync_ev(c, CP_SYNC_CTX, NULL);
}

void cp_hook_stream_sync(cp_call *c, CUstream s)
{
    cp_sync_ev(c, CP_SYNC_STREAM, s);
}

void cp_hook_event_sync(cp_call *c, CUevent e)
{
    (void)e;
    cp_sync_ev(c, CP_SYNC_EVENT, NULL);
}
