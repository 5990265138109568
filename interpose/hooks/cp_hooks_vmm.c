/*
 * cp_hooks_vmm.c - virtual memory management (PyTorch expandable segments,
 * NCCL) and memory pools.
 *
 * Physical bytes are accounted at cuMemCreate / cuMemRelease (ALLOC/FREE of
 * kind VMM_PHYS or VMM_HOST, ptr = the handle); addresses become live device
 * (or pinned host) ranges at cuMemMap and leave at cuMemUnmap, so copies and
 * launches into mapped memory are classified like any other.
 */
#include "cp_evt.h"
#include "cp_mem.h"

static void cp_vmm_ev(const cp_call *c, int op, uint64_t va, uint64_t size, uint64_t handle,
                      int loc_type, int loc_id, uint64_t offset, uint64_t flags)
{
    cp_where w;
    cp_ev_ctx(&w, op == CP_VMM_RESERVE);
    cp_ev_put_vmm(c, &w, NULL, (uint64_t)op, va, size, handle, (uint64_t)loc_type, loc_id, offset,
                  flags);
}

void cp_hook_vmm_reserve(cp_call *c, CUdeviceptr *ptr, size_t size, size_t alignment,
                         CUdeviceptr addr, unsigned long long flags)
{
    (void)alignment, (void)addr;
    uint64_t va = (c->res == CUDA_SUCCESS && ptr) ? *ptr : 0;
    cp_vmm_ev(c, CP_VMM_RESERVE, va, size, 0, 0, -1, 0, flags);
}

void cp_hook_vmm_addr_free(cp_call *c, CUdeviceptr ptr, size_t size)
{
    cp_vmm_ev(c, CP_VMM_ADDR_FREE, ptr, size, 0, 0, -1, 0, 0);
}

void cp_hook_vmm_create(cp_call *c, CUmemGenericAllocationHandle *handle, size_t size,
                        const CUmemAllocationProp *prop, unsigned long long flags)
{
    int host = prop && prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE;
    cp_range r = {
        .base = (c->res == CUDA_SUCCESS && handle) ? *handle : 0,
        .size = 1,
        .dev = (prop && !host) ? prop->location.id : -1,
        .mclass = host ? CP_MC_PINNED : CP_MC_DEVICE,
        .kind = host ? CP_MK_VMM_HOST : CP_MK_VMM_PHYS,
        .aux = size,
    };
    cp_mem_alloc_ev(c, NULL, &r, flags, NULL, CP_IMAP_HANDLE);
}

void cp_hook_vmm_release(cp_call *c, CUmemGenericAllocationHandle handle)
{
    cp_mem_free_ev(c, NULL, CP_IMAP_HANDLE, handle, CP_MK_VMM_PHYS);
}

void cp_hook_vmm_map(cp_call *c, CUdeviceptr ptr, size_t size, size_t offset,
                     CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    cp_range h = { .dev = -1, .mclass = CP_MC_DEVICE, .kind = CP_MK_VMM_PHYS };
    int known = cp_imap_find(CP_IMAP_HANDLE, handle, &h) == 0;
    if (c->res == CUDA_SUCCESS) {
        cp_range r = { .base = ptr, .size = size, .dev = h.dev, .mclass = h.mclass,
                       .kind = h.kind, .aux = handle };
        cp_imap_insert(h.mclass == CP_MC_PINNED ? CP_IMAP_HOST : CP_IMAP_DEV, &r);
    }
    cp_vmm_ev(c, CP_VMM_MAP, ptr, size, handle,
              known ? (h.mclass == CP_MC_PINNED ? CU_MEM_LOCATION_TYPE_HOST
                                                : CU_MEM_LOCATION_TYPE_DEVICE) : 0,
              h.dev, offset, flags);
}

void cp_hook_vmm_unmap(cp_call *c, CUdeviceptr ptr, size_t size)
{
    cp_range r = { .aux = 0, .dev = -1 };
    if (c->res == CUDA_SUCCESS && cp_imap_remove(CP_IMAP_DEV, ptr, &r) != 0)
        cp_imap_remove(CP_IMAP_HOST, ptr, &r);
    cp_vmm_ev(c, CP_VMM_UNMAP, ptr, size, r.aux, 0, r.dev, 0, 0);
}

void cp_hook_vmm_set_access(cp_call *c, CUdeviceptr ptr, size_t size,
                            const CUmemAccessDesc *desc, size_t count)
{
    int loc_type = 0, loc_id = -1;
    uint64_t fl = 0;
    if (desc && count) {
        loc_type = desc[0].location.type;
        loc_id = desc[0].location.id;
        fl = desc[0].flags;
    }
    cp_vmm_ev(c, CP_VMM_SET_ACCESS, ptr, size, count, loc_type, loc_id, 0, fl);
}

/* --- pools ------------------------------------------------------------------ */

static void cp_pool_ev(const cp_call *c, int op, CUmemoryPool pool, int dev, uint64_t attr,
                       uint64_t value)
{
    cp_where w;
    cp_ev_ctx(&w, op == CP_POOL_CREATE);
    cp_ev_put_pool(c, &w, NULL, (uint64_t)op, (uint64_t)(uintptr_t)pool, dev, attr, value);
}

void cp_hook_pool_create(cp_call *c, CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    int dev = (poolProps && poolProps->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
                  ? poolProps->location.id : -1;
    cp_pool_ev(c, CP_POOL_CREATE, (c->res == CUDA_SUCCESS && pool) ? *pool : NULL, dev,
               poolProps ? (uint64_t)poolProps->location.type : 0,
               poolProps ? poolProps->maxSize : 0);
}

void cp_hook_pool_destroy(cp_call *c, CUmemoryPool pool)
{
    cp_pool_ev(c, CP_POOL_DESTROY, pool, -1, 0, 0);
}

void cp_hook_pool_trim(cp_call *c, CUmemoryPool pool, size_t minBytesToKeep)
{
    cp_pool_ev(c, CP_POOL_TRIM, pool, -1, 0, minBytesToKeep);
}

void cp_hook_pool_set_attr(cp_call *c, CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    /* Every pool attribute that can be set is 32-bit (reuse flags) or
     * 64-bit (thresholds, high-water resets); read what its type says. */
    uint64_t v = 0;
    if (value)
        v = attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES ? (uint64_t)*(int *)value
                                                                      : *(uint64_t *)value;
    cp_pool_ev(c, CP_POOL_SET_ATTR, pool, -1, (uint64_t)attr, v);
}
