/*
 * fk_pool.c - memory pools and the stream-ordered allocator of the fake
 * driver (cuMemAllocAsync, cuMemFreeAsync, cuMemPool*).
 *
 * A pool keeps freed blocks cached: they stay reserved (and count as used
 * device memory in cuMemGetInfo) until a synchronization point gives back
 * what exceeds the pool's release threshold (default 0), until
 * cuMemPoolTrimTo, or until an allocation would otherwise fail.  That is
 * the real driver's behaviour the shim must account for.
 */
#include <stdlib.h>
#include <string.h>

#include "fk_internal.h"

struct fk_block {
    uintptr_t p;
    size_t size;
};

struct CUmemPoolHandle_st {
    uint32_t magic;
    int dev;
    int is_default;
    uint64_t threshold;
    uint64_t reserved, reserved_high;
    uint64_t used, used_high;
    int reuse[3];               /* CU_MEMPOOL_ATTR_REUSE_* 1..3 */
    struct fk_block *cache;
    size_t ncache, capcache;
    struct CUmemPoolHandle_st *next;
};

static struct CUmemPoolHandle_st *fk_pools;

static struct CUmemPoolHandle_st *fk_pool_new_locked(int dev)
{
    struct CUmemPoolHandle_st *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->magic = FK_MAGIC_POOL;
    p->dev = dev;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    p->next = fk_pools;
    fk_pools = p;
    return p;
}

void fk_pool_init_dev_locked(int dev)
{
    struct CUmemPoolHandle_st *p = fk_pool_new_locked(dev);
    if (p)
        p->is_default = 1;
    fk_devs[dev].default_pool = fk_devs[dev].current_pool = p;
}

/* Return cached blocks to the device until at most keep bytes stay reserved. */
static void fk_pool_release_locked(struct CUmemPoolHandle_st *pool, uint64_t keep)
{
    struct fk_dev *d = &fk_devs[pool->dev];
    while (pool->reserved > keep && pool->ncache > 0) {
        struct fk_block b = pool->cache[--pool->ncache];
        fk_arena_free_locked(d, b.p, b.size);
        d->used -= b.size;
        pool->reserved -= b.size;
    }
}

void fk_pool_sync_trim_locked(void)
{
    for (struct CUmemPoolHandle_st *p = fk_pools; p; p = p->next)
        if (p->magic == FK_MAGIC_POOL)
            fk_pool_release_locked(p, p->threshold);
}

void fk_pool_free_block_locked(struct CUmemPoolHandle_st *pool, uintptr_t p, size_t block)
{
    pool->used -= block;
    if (pool->ncache == pool->capcache) {
        size_t cap = pool->capcache ? pool->capcache * 2 : 16;
        struct fk_block *n = realloc(pool->cache, cap * sizeof(*n));
        if (!n) {
            /* Cannot cache it: give it straight back to the device. */
            fk_arena_free_locked(&fk_devs[pool->dev], p, block);
            fk_devs[pool->dev].used -= block;
            pool->reserved -= block;
            return;
        }
        pool->cache = n;
        pool->capcache = cap;
    }
    pool->cache[pool->ncache].p = p;
    pool->cache[pool->ncache].size = block;
    pool->ncache++;
}

/* A block of at least size bytes: the smallest cached fit, else new memory. */
static CUresult fk_pool_take_locked(struct CUmemPoolHandle_st *pool, size_t size, uintptr_t *out, size_t *got)
{
    size_t best = (size_t)-1;
    for (size_t i = 0; i < pool->ncache; i++)
        if (pool->cache[i].size >= size && (best == (size_t)-1 || pool->cache[i].size < pool->cache[best].size))
            best = i;
    if (best != (size_t)-1) {
        *out = pool->cache[best].p;
        *got = pool->cache[best].size;
        pool->cache[best] = pool->cache[--pool->ncache];
        return CUDA_SUCCESS;
    }
    struct fk_dev *d = &fk_devs[pool->dev];
    for (int attempt = 0; attempt < 2; attempt++) {
        if (size <= fk_dev_free_locked(d) && fk_arena_alloc_locked(d, size, out) == 0) {
            d->used += size;
            pool->reserved += size;
            *got = size;
            return CUDA_SUCCESS;
        }
        /* Out of memory: the driver first gives the pool's cache back. */
        fk_pool_release_locked(pool, 0);
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult fk_pool_alloc(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream, int pt)
{
    FK_GUARD();
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&fk_lock);
    if (!pool)
        pool = fk_devs[sr.ctx->dev].current_pool;
    if (!pool || pool->magic != FK_MAGIC_POOL) {
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out_unlock;
    }
    struct fk_range r = {.size = bytesize, .kind = FK_POOLMEM, .dev = pool->dev, .ctx = sr.ctx, .pool = pool};
    rc = fk_pool_take_locked(pool, fk_round(bytesize, FK_ALIGN), &r.start, &r.block);
    if (rc != CUDA_SUCCESS)
        goto out_unlock;
    rc = fk_range_add_locked(&r);
    if (rc != CUDA_SUCCESS) {
        pool->used += r.block;      /* fk_pool_free_block_locked takes it off again */
        fk_pool_free_block_locked(pool, r.start, r.block);
        goto out_unlock;
    }
    pool->used += r.block;
    if (pool->used > pool->used_high)
        pool->used_high = pool->used;
    if (pool->reserved > pool->reserved_high)
        pool->reserved_high = pool->reserved;
    *dptr = r.start;
out_unlock:
    pthread_mutex_unlock(&fk_lock);
    return rc;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return fk_pool_alloc(dptr, bytesize, NULL, hStream, 0);
}
FK_ALIAS(cuMemAllocAsync);

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return fk_pool_alloc(dptr, bytesize, NULL, hStream, 1);
}
FK_ALIAS(cuMemAllocAsync_ptsz);

static CUresult fk_pool_alloc_explicit(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s, int pt)
{
    FK_GUARD();
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_pool_alloc(dptr, bytesize, pool, s, pt);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    return fk_pool_alloc_explicit(dptr, bytesize, pool, hStream, 0);
}
FK_ALIAS(cuMemAllocFromPoolAsync);

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    return fk_pool_alloc_explicit(dptr, bytesize, pool, hStream, 1);
}
FK_ALIAS(cuMemAllocFromPoolAsync_ptsz);

static CUresult fk_free_async(CUdeviceptr dptr, CUstream hStream, int pt)
{
    FK_GUARD();
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    struct fk_range *r = fk_range_find_locked(dptr);
    if (r && r->start == dptr && r->kind == FK_POOLMEM) {
        fk_pool_free_block_locked(r->pool, r->start, r->block);
        fk_range_del_locked(r);
        rc = CUDA_SUCCESS;
    } else if (r && r->start == dptr && r->kind == FK_DEVMEM) {
        /* cuMemAlloc memory may be freed stream-ordered too. */
        fk_arena_free_locked(&fk_devs[r->dev], r->start, r->block);
        fk_devs[r->dev].used -= r->block;
        fk_range_del_locked(r);
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) { return fk_free_async(dptr, hStream, 0); }
FK_ALIAS(cuMemFreeAsync);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) { return fk_free_async(dptr, hStream, 1); }
FK_ALIAS(cuMemFreeAsync_ptsz);

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    FK_GUARD();
    if (!pool || !poolProps || poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_NOT_SUPPORTED;    /* host-located pools: not emulated */
    if (poolProps->location.id < 0 || poolProps->location.id >= fk_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fk_lock);
    struct CUmemPoolHandle_st *p = fk_pool_new_locked(poolProps->location.id);
    pthread_mutex_unlock(&fk_lock);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pool = p;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuMemPoolCreate);

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    FK_GUARD();
    if (!pool || pool->magic != FK_MAGIC_POOL || pool->is_default)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    fk_pool_release_locked(pool, 0);
    if (fk_devs[pool->dev].current_pool == pool)
        fk_devs[pool->dev].current_pool = fk_devs[pool->dev].default_pool;
    /* Kept on the list with a dead magic: outstanding blocks still point here. */
    pool->magic = FK_MAGIC_DEAD;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuMemPoolDestroy);

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    FK_GUARD();
    if (!pool || pool->magic != FK_MAGIC_POOL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    fk_pool_release_locked(pool, minBytesToKeep);
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuMemPoolTrimTo);

/*
 * Shared by get and set: check the call, take fk_lock (held on success) and
 * find where attribute attr of pool is kept (*at, *width bytes: int or
 * uint64_t), *at = NULL for an attribute pools do not have.
 */
static CUresult fk_pool_attr_lock(CUmemoryPool pool, CUmemPool_attribute attr, const void *value, void **at,
                                  size_t *width)
{
    FK_GUARD();
    if (!pool || pool->magic != FK_MAGIC_POOL || !value)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    *width = sizeof(uint64_t);
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *at = &pool->reuse[attr - 1];
        *width = sizeof(int);
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *at = &pool->threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *at = &pool->reserved; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *at = &pool->reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *at = &pool->used; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *at = &pool->used_high; break;
    default: *at = NULL;
    }
    return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    void *at;
    size_t width;
    CUresult rc = fk_pool_attr_lock(pool, attr, value, &at, &width);
    if (rc != CUDA_SUCCESS)
        return rc;
    switch (attr) {
    /* High watermarks can only be reset, to the current value, by writing 0. */
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*(cuuint64_t *)value != 0)
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            *(uint64_t *)at = attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH ? pool->used : pool->reserved;
        break;
    /* The current sizes are read-only. */
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        rc = CUDA_ERROR_INVALID_VALUE;
        break;
    default:
        if (at)
            memcpy(at, value, width);
        else
            rc = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemPoolSetAttribute);

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    void *at;
    size_t width;
    CUresult rc = fk_pool_attr_lock(pool, attr, value, &at, &width);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (at)
        memcpy(value, at, width);
    else
        rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemPoolGetAttribute);

static CUresult fk_dev_pool(CUmemoryPool *out, CUdevice dev, int current)
{
    FK_GUARD();
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= fk_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fk_lock);
    *out = current ? fk_devs[dev].current_pool : fk_devs[dev].default_pool;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    return fk_dev_pool(pool_out, dev, 0);
}
FK_ALIAS(cuDeviceGetDefaultMemPool);
CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev) { return fk_dev_pool(pool, dev, 1); }
FK_ALIAS(cuDeviceGetMemPool);

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    FK_GUARD();
    if (dev < 0 || dev >= fk_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!pool || pool->magic != FK_MAGIC_POOL || pool->dev != dev)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    fk_devs[dev].current_pool = pool;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDeviceSetMemPool);
