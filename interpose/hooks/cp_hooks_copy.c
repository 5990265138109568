/*
 * cp_hooks_copy.c - every copy and memset variant.
 *
 * Each copy records its bytes, both endpoints' memory class and device
 * (device n, pinned, registered, pageable, managed, array) and the time the
 * caller spent in the call: an "async" copy from pageable memory blocks the
 * caller, and that time is the cost the report shows.
 */
#include "cp_evt.h"
#include "cp_launch.h"

/* How an API declares an endpoint. */
enum { CP_EP_DEVICE = 0, CP_EP_HOST = 1, CP_EP_UNIFIED = 2, CP_EP_ARRAY = 3 };

typedef struct cp_ep {
    uint64_t addr;
    int decl;
} cp_ep;

static void cp_ep_classify(const cp_ep *e, const cp_where *w, int *mclass, int *dev)
{
    if (e->decl == CP_EP_ARRAY) {
        *mclass = CP_MC_ARRAY;
        *dev = w->dev;
        return;
    }
    cp_classify(e->addr, e->decl == CP_EP_HOST, 1, mclass, dev);
}

static void cp_copy_rec(const cp_call *c, const cp_where *w, CUstream s, cp_ep dst, cp_ep src,
                        uint64_t bytes, unsigned flags, uint64_t n_batch)
{
    int dc, dd, sc, sd;
    cp_ep_classify(&dst, w, &dc, &dd);
    cp_ep_classify(&src, w, &sc, &sd);
    if (cp_ev_capturing())
        flags |= CP_CF_CAPTURING;
    cp_ev_put_copy(c, w, s, bytes, (uint64_t)dc, dd, (uint64_t)sc, sd, dst.addr, src.addr, flags,
                   n_batch, cp_launch_take());
}

static void cp_copy_eps(const cp_call *c, CUstream s, cp_ep dst, cp_ep src, uint64_t bytes,
                        unsigned flags)
{
    cp_where w;
    cp_ev_ctx(&w, 1);
    cp_copy_rec(c, &w, s, dst, src, bytes, flags, 0);
}

static void cp_copy(const cp_call *c, CUstream s, uint64_t dst, int dst_decl, uint64_t src,
                    int src_decl, uint64_t bytes, unsigned flags)
{
    cp_copy_eps(c, s, (cp_ep){ dst, dst_decl }, (cp_ep){ src, src_decl }, bytes, flags);
}

#define U64(p) ((uint64_t)(uintptr_t)(p))

void cp_hook_cpy(cp_call *c, CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    cp_copy(c, NULL, dst, CP_EP_UNIFIED, src, CP_EP_UNIFIED, n, 0);
}

void cp_hook_cpy_async(cp_call *c, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    cp_copy(c, s, dst, CP_EP_UNIFIED, src, CP_EP_UNIFIED, n, CP_CF_ASYNC);
}

void cp_hook_cpy_peer(cp_call *c, CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                      CUcontext sctx, size_t n)
{
    (void)dctx, (void)sctx;
    cp_copy(c, NULL, dst, CP_EP_DEVICE, src, CP_EP_DEVICE, n, CP_CF_PEER);
}

void cp_hook_cpy_peer_async(cp_call *c, CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                            CUcontext sctx, size_t n, CUstream s)
{
    (void)dctx, (void)sctx;
    cp_copy(c, s, dst, CP_EP_DEVICE, src, CP_EP_DEVICE, n, CP_CF_PEER | CP_CF_ASYNC);
}

void cp_hook_htod(cp_call *c, CUdeviceptr dst, const void *src, size_t n)
{
    cp_copy(c, NULL, dst, CP_EP_DEVICE, U64(src), CP_EP_HOST, n, 0);
}

void cp_hook_dtoh(cp_call *c, void *dst, CUdeviceptr src, size_t n)
{
    cp_copy(c, NULL, U64(dst), CP_EP_HOST, src, CP_EP_DEVICE, n, 0);
}

void cp_hook_dtod(cp_call *c, CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    cp_copy(c, NULL, dst, CP_EP_DEVICE, src, CP_EP_DEVICE, n, 0);
}

void cp_hook_htod_async(cp_call *c, CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    cp_copy(c, s, dst, CP_EP_DEVICE, U64(src), CP_EP_HOST, n, CP_CF_ASYNC);
}

void cp_hook_dtoh_async(cp_call *c, void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    cp_copy(c, s, U64(dst), CP_EP_HOST, src, CP_EP_DEVICE, n, CP_CF_ASYNC);
}

void cp_hook_dtod_async(cp_call *c, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    cp_copy(c, s, dst, CP_EP_DEVICE, src, CP_EP_DEVICE, n, CP_CF_ASYNC);
}

void cp_hook_htoa(cp_call *c, CUarray dst, size_t off, const void *src, size_t n)
{
    (void)off;
    cp_copy(c, NULL, U64(dst), CP_EP_ARRAY, U64(src), CP_EP_HOST, n, 0);
}

void cp_hook_atoh(cp_call *c, void *dst, CUarray src, size_t off, size_t n)
{
    (void)off;
    cp_copy(c, NULL, U64(dst), CP_EP_HOST, U64(src), CP_EP_ARRAY, n, 0);
}

void cp_hook_dtoa(cp_call *c, CUarray dst, size_t off, CUdeviceptr src, size_t n)
{
    (void)off;
    cp_copy(c, NULL, U64(dst), CP_EP_ARRAY, src, CP_EP_DEVICE, n, 0);
}

void cp_hook_atod(cp_call *c, CUdeviceptr dst, CUarray src, size_t off, size_t n)
{
    (void)off;
    cp_copy(c, NULL, dst, CP_EP_DEVICE, U64(src), CP_EP_ARRAY, n, 0);
}

void cp_hook_atoa(cp_call *c, CUarray dst, size_t doff, CUarray src, size_t soff, size_t n)
{
    (void)doff, (void)soff;
    cp_copy(c, NULL, U64(dst), CP_EP_ARRAY, U64(src), CP_EP_ARRAY, n, 0);
}

void cp_hook_htoa_async(cp_call *c, CUarray dst, size_t off, const void *src, size_t n,
                        CUstream s)
{
    (void)off;
    cp_copy(c, s, U64(dst), CP_EP_ARRAY, U64(src), CP_EP_HOST, n, CP_CF_ASYNC);
}

void cp_hook_atoh_async(cp_call *c, void *dst, CUarray src, size_t off, size_t n, CUstream s)
{
    (void)off;
    cp_copy(c, s, U64(dst), CP_EP_HOST, U64(src), CP_EP_ARRAY, n, CP_CF_ASYNC);
}

/* --- 2D / 3D: the descriptor says where each side lives --------------------- */

static cp_ep cp_ep_of(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr)
{
    switch (t) {
    case CU_MEMORYTYPE_HOST: return (cp_ep){ U64(host), CP_EP_HOST };
    case CU_MEMORYTYPE_DEVICE: return (cp_ep){ dev, CP_EP_DEVICE };
    case CU_MEMORYTYPE_ARRAY: return (cp_ep){ U64(arr), CP_EP_ARRAY };
    default: return (cp_ep){ dev, CP_EP_UNIFIED };
    }
}

/* CUDA_MEMCPY2D, CUDA_MEMCPY3D and CUDA_MEMCPY3D_PEER name their endpoint
 * fields alike; a NULL descriptor (the driver rejects it) is a plain call. */
#define CP_COPY_DESC(c, d, s, bytes, flags)                                              \
    do {                                                                                 \
        if (!(d))                                                                        \
            cp_ev_call(c, s, 1);                                                         \
        else                                                                             \
            cp_copy_eps(c, s,                                                            \
                        cp_ep_of((d)->dstMemoryType, (d)->dstHost, (d)->dstDevice,       \
                                 (d)->dstArray),                                         \
                        cp_ep_of((d)->srcMemoryType, (d)->srcHost, (d)->srcDevice,       \
                                 (d)->srcArray),                                         \
                        bytes, flags);                                                   \
    } while (0)
#define CP_BYTES_2D(d) ((uint64_t)(d)->WidthInBytes * (d)->Height)
#define CP_BYTES_3D(d) (CP_BYTES_2D(d) * ((d)->Depth ? (d)->Depth : 1))

void cp_hook_cpy2d(cp_call *c, const CUDA_MEMCPY2D *p)
{
    CP_COPY_DESC(c, p, NULL, CP_BYTES_2D(p), CP_CF_2D);
}

void cp_hook_cpy2d_async(cp_call *c, const CUDA_MEMCPY2D *p, CUstream s)
{
    CP_COPY_DESC(c, p, s, CP_BYTES_2D(p), CP_CF_2D | CP_CF_ASYNC);
}

void cp_hook_cpy3d(cp_call *c, const CUDA_MEMCPY3D *p)
{
    CP_COPY_DESC(c, p, NULL, CP_BYTES_3D(p), CP_CF_3D);
}

void cp_hook_cpy3d_async(cp_call *c, const CUDA_MEMCPY3D *p, CUstream s)
{
    CP_COPY_DESC(c, p, s, CP_BYTES_3D(p), CP_CF_3D | CP_CF_ASYNC);
}

void cp_hook_cpy3d_peer(cp_call *c, const CUDA_MEMCPY3D_PEER *p)
{
    CP_COPY_DESC(c, p, NULL, CP_BYTES_3D(p), CP_CF_3D | CP_CF_PEER);
}

void cp_hook_cpy3d_peer_async(cp_call *c, const CUDA_MEMCPY3D_PEER *p, CUstream s)
{
    CP_COPY_DESC(c, p, s, CP_BYTES_3D(p), CP_CF_3D | CP_CF_PEER | CP_CF_ASYNC);
}

/* --- batches: one record per copy for the first CP_BATCH_DETAIL, then one
 * record that sums the rest (classified by its first copy) ---------------- */

#define CP_BATCH_DETAIL 32

static void cp_batch(const cp_call *c, CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                     size_t count, CUstream s)
{
    cp_where w;
    cp_ev_ctx(&w, 1);
    if (!dsts || !srcs || !sizes || count == 0) {
        cp_copy_rec(c, &w, s, (cp_ep){ 0, CP_EP_UNIFIED }, (cp_ep){ 0, CP_EP_UNIFIED }, 0,
                    CP_CF_ASYNC | CP_CF_BATCH, count);
        return;
    }
    size_t i;
    for (i = 0; i < count && i < CP_BATCH_DETAIL; i++)
        cp_copy_rec(c, &w, s, (cp_ep){ dsts[i], CP_EP_UNIFIED }, (cp_ep){ srcs[i], CP_EP_UNIFIED },
                    sizes[i], CP_CF_ASYNC | CP_CF_BATCH, count);
    if (i < count) {
        uint64_t rest = 0;
        for (size_t j = i; j < count; j++)
            rest += sizes[j];
        cp_copy_rec(c, &w, s, (cp_ep){ dsts[i], CP_EP_UNIFIED }, (cp_ep){ srcs[i], CP_EP_UNIFIED },
                    rest, CP_CF_ASYNC | CP_CF_BATCH, count);
    }
}

void cp_hook_batch12(cp_call *c, CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                     size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                     size_t *failIdx, CUstream s)
{
    (void)attrs, (void)attrsIdxs, (void)numAttrs, (void)failIdx;
    cp_batch(c, dsts, srcs, sizes, count, s);
}

void cp_hook_batch13(cp_call *c, CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                     size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                     CUstream s)
{
    (void)attrs, (void)attrsIdxs, (void)numAttrs;
    cp_batch(c, dsts, srcs, sizes, count, s);
}

static cp_ep cp_ep_3dop(const CUmemcpy3DOperand *o)
{
    if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
        return (cp_ep){ U64(o->op.array.array), CP_EP_ARRAY };
    return (cp_ep){ o->op.ptr.ptr, CP_EP_UNIFIED };
}

static void cp_batch3d(const cp_call *c, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, CUstream s)
{
    cp_where w;
    cp_ev_ctx(&w, 1);
    for (size_t i = 0; ops && i < n && i < CP_BATCH_DETAIL; i++) {
        const CUextent3D *e = &ops[i].extent;
        cp_copy_rec(c, &w, s, cp_ep_3dop(&ops[i].dst), cp_ep_3dop(&ops[i].src),
                    (uint64_t)e->width * (e->height ? e->height : 1) * (e->depth ? e->depth : 1),
                    CP_CF_ASYNC | CP_CF_BATCH | CP_CF_3D, n);
    }
}

void cp_hook_batch3d12(cp_call *c, size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                       size_t *failIdx, unsigned long long flags, CUstream s)
{
    (void)failIdx, (void)flags;
    cp_batch3d(c, numOps, opList, s);
}

void cp_hook_batch3d13(cp_call *c, size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                       unsigned long long flags, CUstream s)
{
    (void)flags;
    cp_batch3d(c, numOps, opList, s);
}

/* --- memsets ------------------------------------------------------------------ */

static void cp_memset(const cp_call *c, CUstream s, CUdeviceptr dst, uint64_t bytes)
{
    cp_where w;
    int mc, dev;
    cp_ev_ctx(&w, 0);
    cp_classify(dst, 0, 1, &mc, &dev);
    /* A memset's site is read only where it can be a finding
     * (cp_records.h, MEMSET): a failure, another GPU's memory, or a stream
     * the analyzer may find is another GPU's (the shim does not know a
     * stream's device; a default one is the current context's).  A
     * training step memsets often, and a capture is the event's dearest
     * part. */
    if (c->res != CUDA_SUCCESS || !cp_stream_default((uint64_t)(uintptr_t)s) ||
        cp_mem_other_gpu((uint64_t)mc, dev, w.dev))
        cp_ev_site(&w);
    cp_ev_put_memset(c, &w, s, dst, bytes, (uint64_t)mc, dev);
}

#define CP_MEMSET_HOOKS(N, T)                                                               \
    void cp_hook_memset##N(cp_call *c, CUdeviceptr d, T v, size_t n)                        \
    {                                                                                       \
        (void)v;                                                                            \
        cp_memset(c, NULL, d, (uint64_t)n * sizeof(T));                                     \
    }                                                                                       \
    void cp_hook_memset##N##_async(cp_call *c, CUdeviceptr d, T v, size_t n, CUstream s)    \
    {                                                                                       \
        (void)v;                                                                            \
        cp_memset(c, s, d, (uint64_t)n * sizeof(T));                                        \
    }                                                                                       \
    void cp_hook_memset2d##N(cp_call *c, CUdeviceptr d, size_t pitch, T v, size_t w,        \
                             size_t h)                                                      \
    {                                                                                       \
        (void)v, (void)pitch;                                                               \
        cp_memset(c, NULL, d, (uint64_t)w * h * sizeof(T));                                 \
    }                                                                                       \
    void cp_hook_memset2d##N##_async(cp_call *c, CUdeviceptr d, size_t pitch, T v,          \
                                     size_t w, size_t h, CUstream s)                        \
    {                                                                                       \
        (void)v, (void)pitch;                                                               \
        cp_memset(c, s, d, (uint64_t)w * h * sizeof(T));                                    \
    }
CP_MEMSET_HOOKS(8, unsigned char)
CP_MEMSET_HOOKS(16, unsigned short)
CP_MEMSET_HOOKS(32, unsigned int)
