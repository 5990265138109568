/*
 * fk_mem.c - device, managed and pinned host allocations of the fake
 * driver.
 *
 * Device memory comes from the current context's device arena, so the
 * address tells the device; it is ordinary host memory, so copies, memsets
 * and built-in kernels really move bytes.  Managed and pinned host memory
 * are separate anonymous mappings that do not count against the device.
 */
#include <time.h>
#include <sys/mman.h>

#include "fk_internal.h"

/* Take block bytes of dev's capacity and arena; 0 or CUDA_ERROR_OUT_OF_MEMORY. */
static CUresult fk_dev_take_locked(struct fk_dev *d, size_t block, uintptr_t *out)
{
    if (block > fk_dev_free_locked(d) || fk_arena_alloc_locked(d, block, out) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    d->used += block;
    return CUDA_SUCCESS;
}

static CUresult fk_devmem_alloc(CUdeviceptr *dptr, size_t bytesize)
{
    FK_GUARD();
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c;
    if (fk_ctx_current(&c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct fk_dev *d = &fk_devs[c->dev];
    struct fk_range r = {.size = bytesize, .block = fk_round(bytesize, FK_ALIGN), .kind = FK_DEVMEM,
                         .dev = c->dev, .ctx = c};
    pthread_mutex_lock(&fk_lock);
    CUresult rc = fk_dev_take_locked(d, r.block, &r.start);
    if (rc == CUDA_SUCCESS) {
        rc = fk_range_add_locked(&r);
        if (rc != CUDA_SUCCESS) {
            fk_arena_free_locked(d, r.start, r.block);
            d->used -= r.block;
        }
    }
    pthread_mutex_unlock(&fk_lock);
    if (rc == CUDA_SUCCESS)
        *dptr = r.start;
    return rc;
}

/* A real driver takes tens to hundreds of microseconds to map a large
 * allocation, and cuMemFree synchronises the device: FAKECUDA_ALLOC_US
 * lets a scenario have that cost. */
static void fk_alloc_delay(void)
{
    if (!fk_alloc_us)
        return;
    struct timespec ts = { fk_alloc_us / 1000000u, (long)(fk_alloc_us % 1000000u) * 1000 };
    nanosleep(&ts, NULL);
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    fk_alloc_delay();
    return fk_devmem_alloc(dptr, bytesize);
}
FK_ALIAS(cuMemAlloc_v2);

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes)
{
    FK_GUARD();
    if (!pPitch || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    /* Rows start 512-byte aligned, as cuMemAllocPitch gives on current GPUs. */
    size_t pitch = fk_round(WidthInBytes, 512);
    CUresult rc = fk_devmem_alloc(dptr, pitch * Height);
    if (rc == CUDA_SUCCESS)
        *pPitch = pitch;
    return rc;
}
FK_ALIAS(cuMemAllocPitch_v2);

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    FK_GUARD();
    if (dptr == 0)
        return CUDA_SUCCESS;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&fk_lock);
    struct fk_range *r = fk_range_find_locked(dptr);
    if (!r || r->start != dptr) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else if (r->kind == FK_DEVMEM) {
        struct fk_dev *d = &fk_devs[r->dev];
        fk_arena_free_locked(d, r->start, r->block);
        d->used -= r->block;
        fk_range_del_locked(r);
    } else if (r->kind == FK_POOLMEM) {
        /* cuMemFree of stream-ordered memory is allowed (it synchronizes). */
        fk_pool_free_block_locked(r->pool, r->start, r->block);
        fk_range_del_locked(r);
    } else if (r->kind == FK_MANAGED) {
        munmap((void *)r->start, r->block);
        fk_range_del_locked(r);
    } else {
        rc = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemFree_v2);

CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
    FK_GUARD();
    if (!free || !total)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c;
    if (fk_ctx_current(&c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk_lock);
    *free = fk_dev_free_locked(&fk_devs[c->dev]);
    *total = fk_devs[c->dev].capacity;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuMemGetInfo_v2);

/* An anonymous mapping recorded as kind; for managed and pinned host memory. */
static CUresult fk_map_alloc(uintptr_t *out, size_t bytesize, enum fk_kind kind, unsigned flags)
{
    struct CUctx_st *c;
    if (fk_ctx_current(&c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    size_t block = fk_round(bytesize, 4096);
    void *p = mmap(NULL, block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct fk_range r = {.start = (uintptr_t)p, .size = bytesize, .block = block, .kind = kind,
                         .dev = c->dev, .ctx = c, .flags = flags};
    pthread_mutex_lock(&fk_lock);
    CUresult rc = fk_range_add_locked(&r);
    pthread_mutex_unlock(&fk_lock);
    if (rc != CUDA_SUCCESS) {
        munmap(p, block);
        return rc;
    }
    *out = (uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    FK_GUARD();
    if (!dptr || bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t p;
    CUresult rc = fk_map_alloc(&p, bytesize, FK_MANAGED, flags);
    if (rc == CUDA_SUCCESS)
        *dptr = p;
    return rc;
}
FK_ALIAS(cuMemAllocManaged);

static CUresult fk_host_alloc(void **pp, size_t bytesize, unsigned int flags)
{
    FK_GUARD();
    if (!pp || bytesize == 0 || (flags & ~7u))
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t p;
    CUresult rc = fk_map_alloc(&p, bytesize, FK_HOSTALLOC, flags);
    if (rc == CUDA_SUCCESS)
        *pp = (void *)p;
    return rc;
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    return fk_host_alloc(pp, bytesize, Flags);
}
FK_ALIAS(cuMemHostAlloc);

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return fk_host_alloc(pp, bytesize, 0);
}
FK_ALIAS(cuMemAllocHost_v2);

/*
 * Forget the host range starting at p if it is of this kind (unmapping what
 * the driver allocated itself); missing is the error when it is not.
 */
static CUresult fk_host_forget(void *p, enum fk_kind kind, CUresult missing)
{
    FK_GUARD();
    CUresult rc = missing;
    pthread_mutex_lock(&fk_lock);
    struct fk_range *r = fk_range_find_locked((uintptr_t)p);
    if (r && r->start == (uintptr_t)p && r->kind == kind) {
        if (kind == FK_HOSTALLOC)
            munmap(p, r->block);
        fk_range_del_locked(r);
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}

CUresult cuMemFreeHost(void *p)
{
    return fk_host_forget(p, FK_HOSTALLOC, CUDA_ERROR_INVALID_VALUE);
}
FK_ALIAS(cuMemFreeHost);

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    FK_GUARD();
    if (!p || bytesize == 0 || (Flags & ~0xfu))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c;
    if (fk_ctx_current(&c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct fk_range r = {.start = (uintptr_t)p, .size = bytesize, .block = 0, .kind = FK_HOSTREG,
                         .dev = c->dev, .ctx = c, .flags = Flags};
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&fk_lock);
    /* Any overlap with memory the driver already knows is refused. */
    for (size_t i = 0; i < fk_range_count_locked(); i++) {
        struct fk_range *o = fk_range_at_locked(i);
        if (o->start < r.start + r.size && r.start < o->start + o->size) {
            rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
            break;
        }
    }
    if (rc == CUDA_SUCCESS)
        rc = fk_range_add_locked(&r);
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemHostRegister_v2);

CUresult cuMemHostUnregister(void *p)
{
    return fk_host_forget(p, FK_HOSTREG, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}
FK_ALIAS(cuMemHostUnregister);

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    FK_GUARD();
    if (!pFlags)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    struct fk_range *r = fk_range_find_locked((uintptr_t)p);
    /* Only cuMemHostAlloc/cuMemAllocHost memory: registered memory fails. */
    if (r && r->kind == FK_HOSTALLOC) {
        *pFlags = r->flags;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemHostGetFlags);

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    FK_GUARD();
    if (!pdptr || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    struct fk_range *r = fk_range_find_locked((uintptr_t)p);
    if (r && (r->kind == FK_HOSTALLOC || r->kind == FK_HOSTREG)) {
        *pdptr = (CUdeviceptr)(uintptr_t)p;     /* unified addressing: same value */
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemHostGetDevicePointer_v2);

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    FK_GUARD();
    CUresult rc = CUDA_ERROR_NOT_FOUND;
    pthread_mutex_lock(&fk_lock);
    struct fk_range *r = fk_range_find_locked(dptr);
    if (r && r->kind != FK_HOSTREG) {
        if (pbase)
            *pbase = r->start;
        if (psize)
            *psize = r->size;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemGetAddressRange_v2);
