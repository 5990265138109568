/*
 * fk_ptrattr.c - pointer queries and managed-memory hints of the fake
 * driver: cuPointerGetAttribute(s), cuMemAdvise(_v2), cuMemPrefetchAsync*.
 *
 * cuPointerGetAttribute fails with CUDA_ERROR_INVALID_VALUE on memory the
 * driver does not know (pageable host memory); cuPointerGetAttributes
 * succeeds and writes default values (memory type 0), as the real one does.
 */
#include <string.h>

#include "fk_internal.h"

/* Bytes written for an attribute; 0 = unsupported. */
static size_t fk_attr_size(CUpointer_attribute a)
{
    switch ((int)a) {
    case 1: case 3: case 4: case 11: case 17:   /* CONTEXT, DEVICE/HOST_POINTER, RANGE_START, MEMPOOL */
        return sizeof(void *);
    case 7: case 12: case 14:                   /* BUFFER_ID, RANGE_SIZE, ALLOWED_HANDLE_TYPES */
        return 8;
    case 2: case 6: case 8: case 9: case 10: case 13: case 15: case 16:
        return 4;
    default:
        return 0;
    }
}

/*
 * Value of attribute a for the range r containing ptr (r NULL: unknown
 * memory, defaults).  Returns CUDA_ERROR_INVALID_VALUE where a value does
 * not exist (host pointer of device memory, ...).
 */
static CUresult fk_attr_get(CUpointer_attribute a, const struct fk_range *r, CUdeviceptr ptr, void *data)
{
    uint64_t v = 0;
    int is_dev = r && (r->kind == FK_DEVMEM || r->kind == FK_POOLMEM || r->kind == FK_MANAGED ||
                       (r->kind == FK_VMM && r->dev >= 0));
    switch ((int)a) {
    case 1: v = r && r->kind != FK_VMM ? (uintptr_t)r->ctx : 0; break;     /* CONTEXT */
    case 2: v = !r ? 0 : is_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST; break;
    case 3: v = r ? ptr : 0; break;                                         /* DEVICE_POINTER */
    case 4:                                                                 /* HOST_POINTER */
        if (r && is_dev && r->kind != FK_MANAGED)
            return CUDA_ERROR_INVALID_VALUE;
        v = r ? ptr : 0;
        break;
    case 6: v = 0; break;                                                   /* SYNC_MEMOPS */
    case 7: v = r ? r->id : 0; break;                                       /* BUFFER_ID */
    case 8: v = r && r->kind == FK_MANAGED; break;                          /* IS_MANAGED */
    /* DEVICE_ORDINAL: unknown memory gives -2, the value cudart reports. */
    case 9: v = (uint32_t)(r ? r->dev : -2); break;
    case 10: v = r && r->kind == FK_DEVMEM; break;                          /* LEGACY_IPC */
    case 11: v = !r ? 0 : r->kind == FK_VMM ? r->res_start : r->start; break;
    case 12: v = !r ? 0 : r->kind == FK_VMM ? r->res_size : r->size; break;
    case 13: v = r != NULL; break;                                          /* MAPPED */
    case 14: v = r && r->kind == FK_VMM ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : 0; break;
    case 15: v = 0; break;                                                  /* GPUDIRECT_RDMA */
    case 16: v = !r ? 0 : r->kind == FK_VMM ? (uint64_t)r->access : 3; break; /* ACCESS_FLAGS */
    case 17: v = r && r->kind == FK_POOLMEM ? (uintptr_t)r->pool : 0; break; /* MEMPOOL_HANDLE */
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    size_t sz = fk_attr_size(a);
    if (sz == 8) {
        memcpy(data, &v, 8);
    } else {
        uint32_t v32 = (uint32_t)v;
        memcpy(data, &v32, 4);
    }
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    FK_GUARD();
    if (!data || fk_attr_size(attribute) == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    struct fk_range *r = fk_range_find_locked(ptr);
    CUresult rc = r ? fk_attr_get(attribute, r, ptr, data) : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuPointerGetAttribute);

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
                                CUdeviceptr ptr)
{
    FK_GUARD();
    if (!attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numAttributes; i++)
        if (fk_attr_size(attributes[i]) == 0 || !data[i])
            return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    struct fk_range *r = fk_range_find_locked(ptr);
    for (unsigned i = 0; i < numAttributes; i++) {
        /* A value that does not exist reads as NULL rather than failing. */
        if (fk_attr_get(attributes[i], r, ptr, data[i]) != CUDA_SUCCESS)
            memset(data[i], 0, fk_attr_size(attributes[i]));
    }
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuPointerGetAttributes);

/* [p, p+count) inside one managed allocation? */
static int fk_is_managed(CUdeviceptr p, size_t count)
{
    pthread_mutex_lock(&fk_lock);
    struct fk_range *r = fk_range_find_locked(p);
    int ok = r && r->kind == FK_MANAGED && count <= r->start + r->size - p;
    pthread_mutex_unlock(&fk_lock);
    return ok;
}

/* A device ordinal or CU_DEVICE_CPU (-1). */
static int fk_dev_or_cpu(int dev)
{
    return dev == -1 || (dev >= 0 && dev < fk_ndev);
}

static int fk_loc_ok(CUmemLocation loc)
{
    if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE)
        return loc.id >= 0 && loc.id < fk_ndev;
    return loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
           loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
}

static CUresult fk_advise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, int loc_ok)
{
    FK_GUARD();
    if ((int)advice < 1 || (int)advice > 6 || !fk_is_managed(devPtr, count))
        return CUDA_ERROR_INVALID_VALUE;
    return loc_ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{
    return fk_advise(devPtr, count, advice, fk_dev_or_cpu(device));
}
FK_ALIAS(cuMemAdvise);

CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location)
{
    return fk_advise(devPtr, count, advice, fk_loc_ok(location));
}
FK_ALIAS(cuMemAdvise_v2);

/* Host and "device" memory are the same pages: a prefetch only validates. */
static CUresult fk_prefetch(CUdeviceptr devPtr, size_t count, int loc_ok, unsigned flags, CUstream hStream,
                            int pt)
{
    FK_GUARD();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!fk_is_managed(devPtr, count))
        return CUDA_ERROR_INVALID_VALUE;
    return loc_ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
    return fk_prefetch(devPtr, count, fk_dev_or_cpu(dstDevice), 0, hStream, 0);
}
FK_ALIAS(cuMemPrefetchAsync);

CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
    return fk_prefetch(devPtr, count, fk_dev_or_cpu(dstDevice), 0, hStream, 1);
}
FK_ALIAS(cuMemPrefetchAsync_ptsz);

CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                               CUstream hStream)
{
    return fk_prefetch(devPtr, count, fk_loc_ok(location), flags, hStream, 0);
}
FK_ALIAS(cuMemPrefetchAsync_v2);

CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                                    CUstream hStream)
{
    return fk_prefetch(devPtr, count, fk_loc_ok(location), flags, hStream, 1);
}
FK_ALIAS(cuMemPrefetchAsync_v2_ptsz);
