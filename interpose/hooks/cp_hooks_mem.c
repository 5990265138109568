/*
 * cp_hooks_mem.c - device, stream-ordered, managed and host memory.
 *
 * Every allocation becomes a CP_REC_ALLOC and enters cuprobe's maps (so
 * copies and launches can be classified without asking the driver); every
 * free a CP_REC_FREE with the size the map remembered.  A failed allocation
 * is recorded too, followed by an OOM snapshot when the driver said
 * CUDA_ERROR_OUT_OF_MEMORY.
 */
#include "cp_hot.h"
#include "cp_evt.h"
#include "cp_framework.h"
#include "cp_imap.h"
#include "cp_launch.h"
#include "cp_mem.h"

static void *cp_slot_dev_pool, *cp_slot_pool_attr;

/* The pool's own view at a stream-ordered allocation failure: how much it
 * reserves versus uses, and its release threshold. */
static void cp_pool_attrs_at_failure(const cp_call *c, const cp_where *w, CUstream s,
                                     CUmemoryPool pool)
{
    static const CUmemPool_attribute attrs[] = {
        CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
        CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
    };
    CUresult (*dev_pool)(CUmemoryPool *, CUdevice) = cp_real(&cp_slot_dev_pool, "cuDeviceGetMemPool", CP_REAL_DRIVER);
    CUresult (*get)(CUmemoryPool, CUmemPool_attribute, void *) =
        cp_real(&cp_slot_pool_attr, "cuMemPoolGetAttribute", CP_REAL_DRIVER);
    if (cp_ev_capturing() || !get)
        return;
    if (!pool && (!dev_pool || w->dev < 0 || dev_pool(&pool, w->dev) != CUDA_SUCCESS))
        return;
    for (unsigned i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
        uint64_t v = 0;
        if (get(pool, attrs[i], &v) != CUDA_SUCCESS)
            continue;
        cp_ev_put_pool(c, w, s, CP_POOL_ATTR_AT_FAILURE, (uint64_t)(uintptr_t)pool, w->dev,
                       (uint64_t)attrs[i], v);
    }
}

CP_HOT void cp_mem_alloc_ev(const cp_call *c, CUstream s, const cp_range *r,
                            uint64_t flags, CUmemoryPool pool, int which)
{
    cp_where w;
    cp_ev_ctx(&w, 1);
    cp_range live = *r;
    if (live.dev == CP_DEV_FROM_CTX)
        live.dev = w.dev;
    else if (live.dev >= 0)
        w.dev = live.dev;   /* cuMemCreate names its device: the record says it */
    int grew = 1;
    CP_ST_T(t0);
    if (c->res == CUDA_SUCCESS && which >= 0)
        grew = cp_imap_insert(which, &live);
    CP_ST_P(CP_ST_MAP, t0);
    /* Device memory at a new high: the companion samples the framework's
     * allocator.  Not at every allocation: under cudaMallocAsync every
     * tensor is one, and a sample takes the GIL (docs/framework.md,
     * torch.segment).  A range the map could not keep (-ENOMEM) wakes it. */
    if (c->res == CUDA_SUCCESS && which != CP_IMAP_HOST && grew != 0)
        cp_fw_watch_note();
    CP_ST_T(t1);
    cp_ev_put_alloc(c, &w, s, live.kind, live.base, which == CP_IMAP_HANDLE ? live.aux : live.size,
                    flags, (uint64_t)(uintptr_t)pool, cp_launch_total());
    CP_ST_P(CP_ST_REC, t1);
    if (c->res == CUDA_ERROR_OUT_OF_MEMORY) {
        uint64_t want = which == CP_IMAP_HANDLE ? live.aux : live.size;
        if (live.kind == CP_MK_ASYNC || live.kind == CP_MK_POOL)
            cp_pool_attrs_at_failure(c, &w, s, pool);
        cp_ev_oom(c, &w, s, live.dev, want);
    }
}

CP_HOT void cp_mem_free_ev(const cp_call *c, CUstream s, int which, uint64_t ptr, int kind)
{
    cp_where w;
    cp_range r = { .kind = (uint8_t)kind };
    int known = 0;
    cp_ev_ctx(&w, 0);
    CP_ST_T(t0);
    if (c->res == CUDA_SUCCESS && ptr)
        known = cp_imap_remove(which, ptr, &r) == 0;
    CP_ST_P(CP_ST_MAP, t0);
    /* Only a failed free's site and a large driver block's are read
     * (cp_trace.h, CP_FREE_SITE_MIN_BYTES); PyTorch frees every tensor, so
     * the rest skip the capture. */
    if (!known || (cp_free_site_kind(r.kind) &&
                   (which == CP_IMAP_HANDLE ? r.aux : r.size) >= CP_FREE_SITE_MIN_BYTES))
        cp_ev_site(&w);
    CP_ST_T(t2);
    cp_ev_put_free(c, &w, s, r.kind, ptr, which == CP_IMAP_HANDLE ? r.aux : r.size);
    CP_ST_P(CP_ST_REC, t2);
}

/* How often the device map left its fast paths, at exit (CUPROBE_LOG=2):
 * the flushes of its pending layer say whether a workload's tensors
 * outlive it. */
__attribute__((destructor)) static void cp_mem_map_report(void)
{
    uint64_t st[CP_IMAP_ST_N];
    cp_imap_stats(st);
    if (!st[CP_IMAP_ST_MOVED] && !st[CP_IMAP_ST_COMPACT] && !st[CP_IMAP_ST_TREE_FREES] &&
        !st[CP_IMAP_ST_INDEX])
        return;
    cp_log(2, "device map: flushes when full %llu, other %llu; indexed for a lookup %llu; "
              "ranges moved to the tree %llu; compactions %llu; frees from the tree %llu",
           (unsigned long long)st[CP_IMAP_ST_FLUSH_FULL],
           (unsigned long long)st[CP_IMAP_ST_FLUSH_OTHER],
           (unsigned long long)st[CP_IMAP_ST_INDEX], (unsigned long long)st[CP_IMAP_ST_MOVED],
           (unsigned long long)st[CP_IMAP_ST_COMPACT],
           (unsigned long long)st[CP_IMAP_ST_TREE_FREES]);
}

static cp_range cp_dev_range(uint64_t base, uint64_t size, int mclass, int kind)
{
    cp_range r = { .base = base, .size = size, .dev = CP_DEV_FROM_CTX,
                   .mclass = (uint8_t)mclass, .kind = (uint8_t)kind };
    return r;
}

static cp_range cp_host_range(uint64_t base, uint64_t size, int mclass, int kind)
{
    cp_range r = { .base = base, .size = size, .dev = -1,
                   .mclass = (uint8_t)mclass, .kind = (uint8_t)kind };
    return r;
}

#define CP_OUT(p) ((c->res == CUDA_SUCCESS && (p)) ? (uint64_t)*(p) : 0)

void cp_hook_mem_alloc(cp_call *c, CUdeviceptr *dptr, size_t bytesize)
{
    cp_range r = cp_dev_range(CP_OUT(dptr), bytesize, CP_MC_DEVICE, CP_MK_DEVICE);
    cp_mem_alloc_ev(c, NULL, &r, 0, NULL, CP_IMAP_DEV);
}

void cp_hook_mem_alloc_pitch(cp_call *c, CUdeviceptr *dptr, size_t *pPitch,
                             size_t WidthInBytes, size_t Height, unsigned int ElementSizeBytes)
{
    uint64_t pitch = CP_OUT(pPitch);
    cp_range r = cp_dev_range(CP_OUT(dptr), (pitch ? pitch : WidthInBytes) * Height,
                              CP_MC_DEVICE, CP_MK_DEVICE);
    cp_mem_alloc_ev(c, NULL, &r, ElementSizeBytes, NULL, CP_IMAP_DEV);
}

void cp_hook_mem_free(cp_call *c, CUdeviceptr dptr)
{
    cp_mem_free_ev(c, NULL, CP_IMAP_DEV, dptr, CP_MK_DEVICE);
}

void cp_hook_mem_alloc_managed(cp_call *c, CUdeviceptr *dptr, size_t bytesize,
                               unsigned int flags)
{
    cp_range r = cp_dev_range(CP_OUT(dptr), bytesize, CP_MC_MANAGED, CP_MK_MANAGED);
    cp_mem_alloc_ev(c, NULL, &r, flags, NULL, CP_IMAP_DEV);
}

void cp_hook_mem_alloc_async(cp_call *c, CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    cp_range r = cp_dev_range(CP_OUT(dptr), bytesize, CP_MC_DEVICE, CP_MK_ASYNC);
    cp_mem_alloc_ev(c, hStream, &r, 0, NULL, CP_IMAP_DEV);
}

void cp_hook_mem_alloc_pool(cp_call *c, CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                            CUstream hStream)
{
    cp_range r = cp_dev_range(CP_OUT(dptr), bytesize, CP_MC_DEVICE, CP_MK_POOL);
    cp_mem_alloc_ev(c, hStream, &r, 0, pool, CP_IMAP_DEV);
}

void cp_hook_mem_free_async(cp_call *c, CUdeviceptr dptr, CUstream hStream)
{
    cp_mem_free_ev(c, hStream, CP_IMAP_DEV, dptr, CP_MK_ASYNC);
}

void cp_hook_host_alloc(cp_call *c, void **pp, size_t bytesize, unsigned int Flags)
{
    cp_range r = cp_host_range(CP_OUT((uint64_t *)pp), bytesize, CP_MC_PINNED,
                               CP_MK_HOST_PINNED);
    cp_mem_alloc_ev(c, NULL, &r, Flags, NULL, CP_IMAP_HOST);
}

void cp_hook_host_alloc_host(cp_call *c, void **pp, size_t bytesize)
{
    cp_range r = cp_host_range(CP_OUT((uint64_t *)pp), bytesize, CP_MC_PINNED,
                               CP_MK_HOST_PINNED);
    cp_mem_alloc_ev(c, NULL, &r, 0, NULL, CP_IMAP_HOST);
}

void cp_hook_host_free(cp_call *c, void *p)
{
    cp_mem_free_ev(c, NULL, CP_IMAP_HOST, (uint64_t)(uintptr_t)p, CP_MK_HOST_PINNED);
}

void cp_hook_host_register(cp_call *c, void *p, size_t bytesize, unsigned int Flags)
{
    cp_range r = cp_host_range((uint64_t)(uintptr_t)p, bytesize, CP_MC_REGISTERED,
                               CP_MK_HOST_REGISTERED);
    if (c->res != CUDA_SUCCESS)
        r.base = (uint64_t)(uintptr_t)p;   /* keep the address for the report */
    cp_mem_alloc_ev(c, NULL, &r, Flags, NULL, c->res == CUDA_SUCCESS ? CP_IMAP_HOST : -1);
}

void cp_hook_host_unregister(cp_call *c, void *p)
{
    cp_mem_free_ev(c, NULL, CP_IMAP_HOST, (uint64_t)(uintptr_t)p, CP_MK_HOST_REGISTERED);
}

/* Managed-memory hints: plain call records (the report shows them with
 * their call sites next to the managed allocations). */
void cp_hook_mem_advise_dev(cp_call *c, CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                            CUdevice device)
{
    (void)devPtr, (void)count, (void)advice, (void)device;
    cp_ev_call(c, NULL, 0);
}

void cp_hook_mem_advise_loc(cp_call *c, CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                            CUmemLocation location)
{
    (void)devPtr, (void)count, (void)advice, (void)location;
    cp_ev_call(c, NULL, 0);
}

void cp_hook_mem_prefetch_dev(cp_call *c, CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                              CUstream hStream)
{
    (void)devPtr, (void)count, (void)dstDevice;
    cp_ev_call(c, hStream, 0);
}

void cp_hook_mem_prefetch_loc(cp_call *c, CUdeviceptr devPtr, size_t count,
                              CUmemLocation location, unsigned int flags, CUstream hStream)
{
    (void)devPtr, (void)count, (void)location, (void)flags;
    cp_ev_call(c, hStream, 0);
}
