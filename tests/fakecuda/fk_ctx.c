/*
 * fk_ctx.c - contexts of the fake driver: primary contexts, created
 * contexts and the per-thread context stack.
 *
 * Context objects are never freed: a destroyed one keeps its memory with a
 * dead magic, so a stale handle yields CUDA_ERROR_INVALID_CONTEXT instead of
 * a use-after-free.  Destroying a context (or releasing a primary context to
 * zero, or resetting it) frees the memory allocated in it, as the real
 * driver does.
 */
#include <stdlib.h>

#include "fk_internal.h"

#define FK_CTX_STACK 64

/* The calling thread's context stack; the top is the current context. */
static __thread struct CUctx_st *fk_tls_stack[FK_CTX_STACK];
static __thread int fk_tls_depth;

CUresult fk_ctx_check(struct CUctx_st *ctx)
{
    if (!ctx || ctx->magic != FK_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx->primary && __atomic_load_n(&ctx->retain, __ATOMIC_ACQUIRE) == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    return CUDA_SUCCESS;
}

CUresult fk_ctx_current(struct CUctx_st **out)
{
    struct CUctx_st *c = fk_tls_depth ? fk_tls_stack[fk_tls_depth - 1] : NULL;
    if (fk_ctx_check(c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

static CUresult fk_dev_ok(CUdevice dev)
{
    return dev >= 0 && dev < fk_ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FK_GUARD();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_dev_ok(dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fk_lock);
    struct fk_dev *d = &fk_devs[dev];
    if (!d->primary) {
        d->primary = calloc(1, sizeof(*d->primary));
        if (!d->primary) {
            pthread_mutex_unlock(&fk_lock);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        d->primary->magic = FK_MAGIC_CTX;
        d->primary->dev = dev;
        d->primary->primary = 1;
    }
    /* The same handle comes back after a release to zero, as on real GPUs. */
    __atomic_add_fetch(&d->primary->retain, 1, __ATOMIC_RELEASE);
    *pctx = d->primary;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDevicePrimaryCtxRetain);

/* Drop one retain (or all, for reset); at zero the context's memory goes. */
static CUresult fk_primary_drop(CUdevice dev, int reset)
{
    FK_GUARD();
    if (fk_dev_ok(dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&fk_lock);
    struct CUctx_st *p = fk_devs[dev].primary;
    if (!p || p->retain == 0) {
        rc = reset ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    } else {
        int left = reset ? 0 : p->retain - 1;
        if (left == 0)
            fk_mem_drop_ctx_locked(p);
        __atomic_store_n(&p->retain, left, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    return fk_primary_drop(dev, 0);
}
FK_ALIAS(cuDevicePrimaryCtxRelease_v2);

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    return fk_primary_drop(dev, 1);
}
FK_ALIAS(cuDevicePrimaryCtxReset_v2);

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    FK_GUARD();
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_dev_ok(dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fk_lock);
    struct CUctx_st *p = fk_devs[dev].primary;
    *flags = p ? p->flags : 0;
    *active = p && p->retain > 0;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDevicePrimaryCtxGetState);

/* cuCtxCreate*: a new context, pushed onto the caller's stack. */
static CUresult fk_ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FK_GUARD();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_dev_ok(dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    if (fk_tls_depth == FK_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct CUctx_st *c = fk_handle_alloc(sizeof(*c));
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->magic = FK_MAGIC_CTX;
    c->dev = dev;
    c->flags = flags;
    fk_tls_stack[fk_tls_depth++] = c;
    *pctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return fk_ctx_create(pctx, flags, dev);
}
FK_ALIAS(cuCtxCreate_v2);

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
                        CUdevice dev)
{
    FK_GUARD();
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return fk_ctx_create(pctx, flags, dev);
}
FK_ALIAS(cuCtxCreate_v3);

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
{
    (void)ctxCreateParams;  /* affinity / CIG parameters: nothing to emulate */
    return fk_ctx_create(pctx, flags, dev);
}
FK_ALIAS(cuCtxCreate_v4);

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    FK_GUARD();
    if (fk_ctx_check(ctx) != CUDA_SUCCESS || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk_lock);
    fk_mem_drop_ctx_locked(ctx);
    ctx->magic = FK_MAGIC_DEAD;
    pthread_mutex_unlock(&fk_lock);
    /* Current on this thread: it is popped (other threads see a dead handle). */
    int j = 0;
    for (int i = 0; i < fk_tls_depth; i++)
        if (fk_tls_stack[i] != ctx)
            fk_tls_stack[j++] = fk_tls_stack[i];
    fk_tls_depth = j;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuCtxDestroy_v2);

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    FK_GUARD();
    if (!ctx) {
        /* NULL unbinds: pops the top (no-op on an empty stack). */
        if (fk_tls_depth)
            fk_tls_depth--;
        return CUDA_SUCCESS;
    }
    if (fk_ctx_check(ctx) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (fk_tls_depth == 0)
        fk_tls_depth = 1;
    fk_tls_stack[fk_tls_depth - 1] = ctx;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuCtxSetCurrent);

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    FK_GUARD();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = fk_tls_depth ? fk_tls_stack[fk_tls_depth - 1] : NULL;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuCtxGetCurrent);

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    FK_GUARD();
    if (fk_ctx_check(ctx) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (fk_tls_depth == FK_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fk_tls_stack[fk_tls_depth++] = ctx;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuCtxPushCurrent_v2);

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    FK_GUARD();
    if (fk_tls_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *c = fk_tls_stack[--fk_tls_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuCtxPopCurrent_v2);

/* NULL ctx = the current one (CUDA 13 _v2 semantics). */
static CUresult fk_ctx_or_current(CUcontext ctx, struct CUctx_st **out)
{
    if (!ctx)
        return fk_ctx_current(out);
    if (fk_ctx_check(ctx) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = ctx;
    return CUDA_SUCCESS;
}

static CUresult fk_ctx_get_device(CUdevice *device, CUcontext ctx)
{
    FK_GUARD();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c;
    CUresult rc = fk_ctx_or_current(ctx, &c);
    if (rc == CUDA_SUCCESS)
        *device = c->dev;
    return rc;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    return fk_ctx_get_device(device, NULL);
}
FK_ALIAS(cuCtxGetDevice);

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    return fk_ctx_get_device(device, ctx);
}
FK_ALIAS(cuCtxGetDevice_v2);

/* Work is synchronous, so a sync only does what syncs do on the side. */
static CUresult fk_ctx_sync(CUcontext ctx)
{
    FK_GUARD();
    if (fk_fault_sync() != CUDA_SUCCESS)
        return fk_fault_sync();
    struct CUctx_st *c;
    CUresult rc = fk_ctx_or_current(ctx, &c);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&fk_lock);
    if (fk_capture_conflict_locked(c)) {
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    } else {
        /* Pools give memory above their release threshold back at syncs. */
        fk_pool_sync_trim_locked();
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}

CUresult cuCtxSynchronize(void)
{
    return fk_ctx_sync(NULL);
}
FK_ALIAS(cuCtxSynchronize);

CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    return fk_ctx_sync(ctx);
}
FK_ALIAS(cuCtxSynchronize_v2);
