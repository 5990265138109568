/*
 * fk_vmm.c - virtual memory management of the fake driver: address
 * reservations, physical allocations, mappings and access rights.
 *
 * A physical allocation (cuMemCreate) is a memfd; mapping it maps the memfd
 * at the reserved address, so two mappings of one handle really alias.
 * Device-located allocations count against the device's capacity from
 * cuMemCreate until the last of cuMemRelease / cuMemUnmap.  A mapping is
 * PROT_NONE until cuMemSetAccess, and copies or kernels touching it before
 * that fail instead of faulting.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fk_internal.h"

#define FK_MAGIC_VMM 0x564d4d31u

struct fk_vmm_handle {
    uint32_t magic;
    int fd;
    size_t size;
    int dev;            /* -1: host memory */
    int released;
    int maps;
};

struct fk_resv {
    uintptr_t start;
    size_t size;
    struct fk_resv *next;
};

static struct fk_resv *fk_resvs;

static struct fk_resv *fk_resv_find_locked(uintptr_t p, size_t size)
{
    for (struct fk_resv *r = fk_resvs; r; r = r->next)
        if (p >= r->start && size <= r->size && p - r->start <= r->size - size)
            return r;
    return NULL;
}

/* Device of a VMM allocation property, -1 for host; -2 when invalid. */
static int fk_prop_dev(const CUmemAllocationProp *prop)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return -2;
    switch (prop->location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        return prop->location.id >= 0 && prop->location.id < fk_ndev ? prop->location.id : -2;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        return -1;
    default:
        return -2;
    }
}

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    FK_GUARD();
    if (!granularity || fk_prop_dev(prop) == -2 || (int)option < 0 || (int)option > 1)
        return CUDA_ERROR_INVALID_VALUE;
    *granularity = FK_GRANULARITY;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuMemGetAllocationGranularity);

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    FK_GUARD();
    (void)addr;     /* a hint only; the fake never honours it */
    if (!ptr || size == 0 || size % FK_GRANULARITY || flags != 0 || (alignment & (alignment - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    if (alignment < FK_GRANULARITY)
        alignment = FK_GRANULARITY;
    struct fk_resv *rv = malloc(sizeof(*rv));
    if (!rv)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* Over-reserve, then trim to an aligned window. */
    size_t span = size + alignment;
    char *m = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        free(rv);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    uintptr_t start = fk_round((uintptr_t)m, alignment);
    if (start > (uintptr_t)m)
        munmap(m, start - (uintptr_t)m);
    size_t tail = (uintptr_t)m + span - (start + size);
    if (tail)
        munmap((void *)(start + size), tail);
    rv->start = start;
    rv->size = size;
    pthread_mutex_lock(&fk_lock);
    rv->next = fk_resvs;
    fk_resvs = rv;
    pthread_mutex_unlock(&fk_lock);
    *ptr = start;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuMemAddressReserve);

/* Drop one reference of a physical allocation; the last one frees it. */
static void fk_vmm_unref_locked(struct fk_vmm_handle *h)
{
    if (!h->released || h->maps > 0)
        return;
    if (h->dev >= 0)
        fk_devs[h->dev].used -= h->size;
    close(h->fd);
    h->magic = FK_MAGIC_DEAD;
    free(h);
}

/* Remove the VMM ranges inside [p, p+size); 0 if none straddles an edge. */
static int fk_vmm_unmap_locked(uintptr_t p, size_t size, int force)
{
    size_t i = 0;
    int found = 0;
    while (i < fk_range_count_locked()) {
        struct fk_range *r = fk_range_at_locked(i);
        int overlap = r->start < p + size && p < r->start + r->size;
        if (!overlap || r->kind != FK_VMM) {
            i++;
            continue;
        }
        if (!force && (r->start < p || r->start + r->size > p + size))
            return -1;
        found = 1;
        struct fk_vmm_handle *h = r->vh;
        /* Back to a PROT_NONE hole so the reservation stays intact. */
        mmap((void *)r->start, r->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        fk_range_del_locked(r);
        h->maps--;
        fk_vmm_unref_locked(h);
    }
    return found ? 0 : -1;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    FK_GUARD();
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    for (struct fk_resv **pp = &fk_resvs; *pp; pp = &(*pp)->next) {
        struct fk_resv *rv = *pp;
        if (rv->start != ptr || rv->size != size)
            continue;
        fk_vmm_unmap_locked(rv->start, rv->size, 1);
        munmap((void *)rv->start, rv->size);
        *pp = rv->next;
        free(rv);
        rc = CUDA_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemAddressFree);

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    FK_GUARD();
    int dev = fk_prop_dev(prop);
    if (!handle || dev == -2 || size == 0 || size % FK_GRANULARITY || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* A container without the capability (an IMEX channel for fabric
     * handles) refuses shareable handle types. */
    if (prop->requestedHandleTypes & fk_forbid_handles)
        return CUDA_ERROR_NOT_PERMITTED;
    struct fk_vmm_handle *h = calloc(1, sizeof(*h));
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    h->fd = memfd_create("fakecuda-vmm", MFD_CLOEXEC);
    if (h->fd < 0 || ftruncate(h->fd, (off_t)size) != 0)
        goto fail_fd;
    h->magic = FK_MAGIC_VMM;
    h->size = size;
    h->dev = dev;
    if (dev >= 0) {
        pthread_mutex_lock(&fk_lock);
        int fits = size <= fk_dev_free_locked(&fk_devs[dev]);
        if (fits)
            fk_devs[dev].used += size;
        pthread_mutex_unlock(&fk_lock);
        if (!fits)
            goto fail_fd;
    }
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
    return CUDA_SUCCESS;
fail_fd:
    if (h->fd >= 0)
        close(h->fd);
    free(h);
    return CUDA_ERROR_OUT_OF_MEMORY;
}
FK_ALIAS(cuMemCreate);

static struct fk_vmm_handle *fk_handle(CUmemGenericAllocationHandle handle)
{
    struct fk_vmm_handle *h = (struct fk_vmm_handle *)(uintptr_t)handle;
    return h && h->magic == FK_MAGIC_VMM && !h->released ? h : NULL;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    FK_GUARD();
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    struct fk_vmm_handle *h = fk_handle(handle);
    if (h) {
        h->released = 1;
        fk_vmm_unref_locked(h);     /* memory lives on while still mapped */
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemRelease);

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    FK_GUARD();
    if (size == 0 || size % FK_GRANULARITY || offset % FK_GRANULARITY || ptr % FK_GRANULARITY || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    struct fk_vmm_handle *h = fk_handle(handle);
    struct fk_resv *rv = fk_resv_find_locked(ptr, size);
    if (!h || !rv || offset > h->size || size > h->size - offset)
        goto out_unlock;
    for (size_t i = 0; i < fk_range_count_locked(); i++) {
        struct fk_range *o = fk_range_at_locked(i);
        if (o->start < ptr + size && ptr < o->start + o->size)
            goto out_unlock;    /* already mapped */
    }
    void *m = mmap((void *)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, h->fd, (off_t)offset);
    if (m == MAP_FAILED) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
        goto out_unlock;
    }
    struct fk_range r = {.start = ptr, .size = size, .kind = FK_VMM, .dev = h->dev, .vh = h,
                         .res_start = rv->start, .res_size = rv->size};
    rc = fk_range_add_locked(&r);
    if (rc == CUDA_SUCCESS)
        h->maps++;
out_unlock:
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemMap);

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    FK_GUARD();
    if (size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    int bad = fk_vmm_unmap_locked(ptr, size, 0);
    pthread_mutex_unlock(&fk_lock);
    return bad ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
FK_ALIAS(cuMemUnmap);

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    FK_GUARD();
    if (!desc || count == 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* One host mapping serves every device: the widest right granted wins. */
    int access = 0;
    for (size_t i = 0; i < count; i++) {
        int loc_ok = desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE
                         ? desc[i].location.id >= 0 && desc[i].location.id < fk_ndev
                         : desc[i].location.type == CU_MEM_LOCATION_TYPE_HOST ||
                               desc[i].location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA;
        int f = (int)desc[i].flags;
        if (!loc_ok || (f != 0 && f != 1 && f != 3))
            return CUDA_ERROR_INVALID_VALUE;
        access |= f;
    }
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&fk_lock);
    /* The whole range must be mapped. */
    uintptr_t cur = ptr;
    while (cur < ptr + size) {
        struct fk_range *r = fk_range_find_locked(cur);
        if (!r || r->kind != FK_VMM) {
            rc = CUDA_ERROR_INVALID_VALUE;
            goto out_unlock;
        }
        cur = r->start + r->size;
    }
    for (cur = ptr; cur < ptr + size;) {
        struct fk_range *r = fk_range_find_locked(cur);
        r->access = access;
        cur = r->start + r->size;
    }
    mprotect((void *)ptr, size, access == 3 ? PROT_READ | PROT_WRITE : access == 1 ? PROT_READ : PROT_NONE);
out_unlock:
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuMemSetAccess);
