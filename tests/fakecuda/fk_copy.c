/*
 * fk_copy.c - every memcpy entry point of the fake driver.
 *
 * Copies run at call time with memmove (or are recorded when the stream is
 * capturing).  The device side of a typed copy (HtoD's destination, ...)
 * must lie in memory the driver knows, else CUDA_ERROR_INVALID_VALUE;
 * unified-addressing copies (cuMemcpy, memory type UNIFIED, batches) treat
 * unknown memory as pageable host memory, like the real driver.
 * Sync variants use the legacy stream, _ptds ones the per-thread stream.
 */
#include <stdint.h>

#include "fk_internal.h"

enum fk_side { FK_HOSTSIDE, FK_DEVSIDE, FK_UVA };

/* Stream of an entry point: explicit, or the default one for sync calls. */
static CUresult fk_stream_of(CUstream s, int pt, struct fk_sref *sr)
{
    return fk_sref_get(pt && !s ? CU_STREAM_PER_THREAD : s, sr);
}

static CUresult fk_side_ok(enum fk_side side, uintptr_t p, size_t n, int write)
{
    if (side == FK_HOSTSIDE || n == 0)
        return CUDA_SUCCESS;
    return fk_mem_check(p, n, write, side == FK_UVA) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fk_copy(uintptr_t dst, enum fk_side ds, uintptr_t src, enum fk_side ss, size_t n, CUstream s,
                        int pt)
{
    FK_GUARD();
    /* A copy on the default stream waits for the kernels before it: a
     * pending fault surfaces here (FAKECUDA_FAIL_LAUNCH). */
    if (!s && fk_fault_sync() != CUDA_SUCCESS)
        return fk_fault_sync();
    struct fk_sref sr;
    CUresult rc = fk_stream_of(s, pt, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (n && (!dst || !src))
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = fk_side_ok(ds, dst, n, 1)) != CUDA_SUCCESS || (rc = fk_side_ok(ss, src, n, 0)) != CUDA_SUCCESS)
        return rc;
    return fk_op_copy(&sr, (void *)dst, (const void *)src, n);
}

#define H(p) ((uintptr_t)(p))

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return fk_copy(dst, FK_UVA, src, FK_UVA, n, NULL, 0);
}
FK_ALIAS(cuMemcpy);
CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return fk_copy(dst, FK_UVA, src, FK_UVA, n, NULL, 1);
}
FK_ALIAS(cuMemcpy_ptds);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return fk_copy(dst, FK_UVA, src, FK_UVA, n, s, 0);
}
FK_ALIAS(cuMemcpyAsync);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return fk_copy(dst, FK_UVA, src, FK_UVA, n, s, 1);
}
FK_ALIAS(cuMemcpyAsync_ptsz);

CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n)
{
    return fk_copy(d, FK_DEVSIDE, H(h), FK_HOSTSIDE, n, NULL, 0);
}
FK_ALIAS(cuMemcpyHtoD_v2);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *h, size_t n)
{
    return fk_copy(d, FK_DEVSIDE, H(h), FK_HOSTSIDE, n, NULL, 1);
}
FK_ALIAS(cuMemcpyHtoD_v2_ptds);
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n)
{
    return fk_copy(H(h), FK_HOSTSIDE, d, FK_DEVSIDE, n, NULL, 0);
}
FK_ALIAS(cuMemcpyDtoH_v2);
CUresult cuMemcpyDtoH_v2_ptds(void *h, CUdeviceptr d, size_t n)
{
    return fk_copy(H(h), FK_HOSTSIDE, d, FK_DEVSIDE, n, NULL, 1);
}
FK_ALIAS(cuMemcpyDtoH_v2_ptds);
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n)
{
    return fk_copy(d, FK_DEVSIDE, s, FK_DEVSIDE, n, NULL, 0);
}
FK_ALIAS(cuMemcpyDtoD_v2);
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n)
{
    return fk_copy(d, FK_DEVSIDE, s, FK_DEVSIDE, n, NULL, 1);
}
FK_ALIAS(cuMemcpyDtoD_v2_ptds);

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
    return fk_copy(d, FK_DEVSIDE, H(h), FK_HOSTSIDE, n, s, 0);
}
FK_ALIAS(cuMemcpyHtoDAsync_v2);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
    return fk_copy(d, FK_DEVSIDE, H(h), FK_HOSTSIDE, n, s, 1);
}
FK_ALIAS(cuMemcpyHtoDAsync_v2_ptsz);
CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream s)
{
    return fk_copy(H(h), FK_HOSTSIDE, d, FK_DEVSIDE, n, s, 0);
}
FK_ALIAS(cuMemcpyDtoHAsync_v2);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *h, CUdeviceptr d, size_t n, CUstream s)
{
    return fk_copy(H(h), FK_HOSTSIDE, d, FK_DEVSIDE, n, s, 1);
}
FK_ALIAS(cuMemcpyDtoHAsync_v2_ptsz);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    return fk_copy(d, FK_DEVSIDE, s, FK_DEVSIDE, n, st, 0);
}
FK_ALIAS(cuMemcpyDtoDAsync_v2);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    return fk_copy(d, FK_DEVSIDE, s, FK_DEVSIDE, n, st, 1);
}
FK_ALIAS(cuMemcpyDtoDAsync_v2_ptsz);

/* Peer copies: both contexts must be valid; the bytes move the same way. */
static CUresult fk_peer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st, int pt)
{
    FK_GUARD();
    if (fk_ctx_check(dc) != CUDA_SUCCESS || fk_ctx_check(sc) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    return fk_copy(d, FK_DEVSIDE, s, FK_DEVSIDE, n, st, pt);
}

CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
{
    return fk_peer(d, dc, s, sc, n, NULL, 0);
}
FK_ALIAS(cuMemcpyPeer);
CUresult cuMemcpyPeer_ptds(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
{
    return fk_peer(d, dc, s, sc, n, NULL, 1);
}
FK_ALIAS(cuMemcpyPeer_ptds);
CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
    return fk_peer(d, dc, s, sc, n, st, 0);
}
FK_ALIAS(cuMemcpyPeerAsync);
CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
    return fk_peer(d, dc, s, sc, n, st, 1);
}
FK_ALIAS(cuMemcpyPeerAsync_ptsz);

/* One side of a 2D/3D copy, normalised. */
struct fk_side3 {
    uintptr_t base;         /* address of (x, y, z) = (0, 0, 0) */
    enum fk_side side;
    size_t x, y, z, pitch, height;
};

static CUresult fk_side3_make(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr, size_t x, size_t y,
                              size_t z, size_t pitch, size_t height, struct fk_side3 *o)
{
    if (t == CU_MEMORYTYPE_HOST) {
        o->base = H(host);
        o->side = FK_HOSTSIDE;
    } else if (t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED) {
        o->base = dev;
        o->side = t == CU_MEMORYTYPE_DEVICE ? FK_DEVSIDE : FK_UVA;
    } else {
        (void)arr;      /* CUDA arrays are not emulated */
        return CUDA_ERROR_INVALID_VALUE;
    }
    o->x = x, o->y = y, o->z = z, o->pitch = pitch, o->height = height;
    return o->base ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static uintptr_t fk_row(const struct fk_side3 *s, size_t y, size_t z)
{
    return s->base + (s->z + z) * s->pitch * s->height + (s->y + y) * s->pitch + s->x;
}

/* A width x height x depth box, row by row. */
static CUresult fk_copy3(const struct fk_side3 *d, const struct fk_side3 *s, size_t width, size_t height,
                         size_t depth, CUstream st, int pt)
{
    struct fk_sref sr;
    CUresult rc = fk_stream_of(st, pt, &sr);
    if (rc != CUDA_SUCCESS || width == 0 || height == 0 || depth == 0)
        return rc;
    if ((height > 1 || depth > 1) && (d->pitch < width + d->x || s->pitch < width + s->x))
        return CUDA_ERROR_INVALID_VALUE;
    if (depth > 1 && (d->height < height + d->y || s->height < height + s->y))
        return CUDA_ERROR_INVALID_VALUE;
    /* Check the whole span once: first byte of the box to last. */
    size_t dspan = fk_row(d, height - 1, depth - 1) + width - fk_row(d, 0, 0);
    size_t sspan = fk_row(s, height - 1, depth - 1) + width - fk_row(s, 0, 0);
    if ((rc = fk_side_ok(d->side, fk_row(d, 0, 0), dspan, 1)) != CUDA_SUCCESS ||
        (rc = fk_side_ok(s->side, fk_row(s, 0, 0), sspan, 0)) != CUDA_SUCCESS)
        return rc;
    for (size_t z = 0; z < depth; z++)
        for (size_t y = 0; y < height && rc == CUDA_SUCCESS; y++)
            rc = fk_op_copy(&sr, (void *)fk_row(d, y, z), (const void *)fk_row(s, y, z), width);
    return rc;
}

static CUresult fk_copy2d(const CUDA_MEMCPY2D *p, CUstream st, int pt)
{
    FK_GUARD();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_side3 d, s;
    CUresult rc;
    if ((rc = fk_side3_make(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, 0,
                            p->dstPitch, 1, &d)) != CUDA_SUCCESS ||
        (rc = fk_side3_make(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, 0,
                            p->srcPitch, 1, &s)) != CUDA_SUCCESS)
        return rc;
    return fk_copy3(&d, &s, p->WidthInBytes, p->Height, 1, st, pt);
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p) { return fk_copy2d(p, NULL, 0); }
FK_ALIAS(cuMemcpy2D_v2);
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *p) { return fk_copy2d(p, NULL, 1); }
FK_ALIAS(cuMemcpy2D_v2_ptds);
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) { return fk_copy2d(p, NULL, 0); }
FK_ALIAS(cuMemcpy2DUnaligned_v2);
CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *p) { return fk_copy2d(p, NULL, 1); }
FK_ALIAS(cuMemcpy2DUnaligned_v2_ptds);
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s) { return fk_copy2d(p, s, 0); }
FK_ALIAS(cuMemcpy2DAsync_v2);
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream s) { return fk_copy2d(p, s, 1); }
FK_ALIAS(cuMemcpy2DAsync_v2_ptsz);

/*
 * One side of a 3D copy descriptor, x = src or dst, then the copy: a macro
 * because CUDA_MEMCPY3D and CUDA_MEMCPY3D_PEER are distinct types whose
 * fields are named alike.  Evaluates to the CUresult.
 */
#define FK_SIDE3_OF(p, x, out)                                                                        \
    fk_side3_make((p)->x##MemoryType, (p)->x##Host, (p)->x##Device, (p)->x##Array, (p)->x##XInBytes, \
                  (p)->x##Y, (p)->x##Z, (p)->x##Pitch, (p)->x##Height, out)
#define FK_COPY3_DESC(p, st, pt)                                                                      \
    ({                                                                                                \
        struct fk_side3 d_, s_;                                                                       \
        CUresult rc_ = FK_SIDE3_OF(p, dst, &d_);                                                      \
        if (rc_ == CUDA_SUCCESS)                                                                      \
            rc_ = FK_SIDE3_OF(p, src, &s_);                                                           \
        if (rc_ == CUDA_SUCCESS)                                                                      \
            rc_ = fk_copy3(&d_, &s_, (p)->WidthInBytes, (p)->Height, (p)->Depth, st, pt);             \
        rc_;                                                                                          \
    })

static CUresult fk_copy3d(const CUDA_MEMCPY3D *p, CUstream st, int pt)
{
    FK_GUARD();
    if (!p || p->srcLOD || p->dstLOD)
        return CUDA_ERROR_INVALID_VALUE;
    return FK_COPY3_DESC(p, st, pt);
}

CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *p) { return fk_copy3d(p, NULL, 0); }
FK_ALIAS(cuMemcpy3D_v2);
CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *p) { return fk_copy3d(p, NULL, 1); }
FK_ALIAS(cuMemcpy3D_v2_ptds);
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *p, CUstream s) { return fk_copy3d(p, s, 0); }
FK_ALIAS(cuMemcpy3DAsync_v2);
CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *p, CUstream s) { return fk_copy3d(p, s, 1); }
FK_ALIAS(cuMemcpy3DAsync_v2_ptsz);

static CUresult fk_copy3dpeer(const CUDA_MEMCPY3D_PEER *p, CUstream st, int pt)
{
    FK_GUARD();
    if (!p || p->srcLOD || p->dstLOD)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_ctx_check(p->srcContext) != CUDA_SUCCESS || fk_ctx_check(p->dstContext) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    return FK_COPY3_DESC(p, st, pt);
}

CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *p) { return fk_copy3dpeer(p, NULL, 0); }
FK_ALIAS(cuMemcpy3DPeer);
CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *p) { return fk_copy3dpeer(p, NULL, 1); }
FK_ALIAS(cuMemcpy3DPeer_ptds);
CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *p, CUstream s) { return fk_copy3dpeer(p, s, 0); }
FK_ALIAS(cuMemcpy3DPeerAsync);
CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *p, CUstream s) { return fk_copy3dpeer(p, s, 1); }
FK_ALIAS(cuMemcpy3DPeerAsync_ptsz);

/* Batch calls reject the legacy default stream (as the real driver does). */
static CUresult fk_batch_stream(CUstream s, int pt)
{
    if (!pt && (s == NULL || s == CU_STREAM_LEGACY))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult fk_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                         CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                         CUstream st, int pt)
{
    FK_GUARD();
    if (failIdx)
        *failIdx = SIZE_MAX;    /* "no particular copy" */
    if (!dsts || !srcs || !sizes || count == 0 || !attrs || !attrsIdxs || numAttrs == 0 || numAttrs > count ||
        attrsIdxs[0] != 0 || fk_batch_stream(st, pt) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numAttrs; i++)
        if ((int)attrs[i].srcAccessOrder < 1 || (int)attrs[i].srcAccessOrder > 3 ||
            (i > 0 && attrsIdxs[i] <= attrsIdxs[i - 1]))
            return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        CUresult rc = fk_copy(dsts[i], FK_UVA, srcs[i], FK_UVA, sizes[i], st, pt);
        if (rc != CUDA_SUCCESS) {
            if (failIdx)
                *failIdx = i;
            return rc;
        }
    }
    return CUDA_SUCCESS;
}

CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                            CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                            CUstream hStream)
{
    return fk_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream, 0);
}
FK_ALIAS(cuMemcpyBatchAsync);
CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                 CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                                 CUstream hStream)
{
    return fk_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream, 1);
}
FK_ALIAS(cuMemcpyBatchAsync_ptsz);
CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                               CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream)
{
    return fk_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, hStream, 0);
}
FK_ALIAS(cuMemcpyBatchAsync_v2);
CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                    CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream)
{
    return fk_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, hStream, 1);
}
FK_ALIAS(cuMemcpyBatchAsync_v2_ptsz);

/* A pointer operand of a 3D batch op; rowLength/layerHeight 0 = packed. */
static CUresult fk_operand(const CUmemcpy3DOperand *o, const CUextent3D *e, struct fk_side3 *s)
{
    if (o->type != CU_MEMCPY_OPERAND_TYPE_POINTER || !o->op.ptr.ptr)
        return CUDA_ERROR_INVALID_VALUE;    /* array operands are not emulated */
    s->base = o->op.ptr.ptr;
    s->side = FK_UVA;
    s->x = s->y = s->z = 0;
    s->pitch = o->op.ptr.rowLength ? o->op.ptr.rowLength : e->width;
    s->height = o->op.ptr.layerHeight ? o->op.ptr.layerHeight : e->height;
    return CUDA_SUCCESS;
}

static CUresult fk_batch3d(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *failIdx, unsigned long long flags,
                           CUstream st, int pt)
{
    FK_GUARD();
    if (failIdx)
        *failIdx = SIZE_MAX;
    if (!ops || numOps == 0 || flags != 0 || fk_batch_stream(st, pt) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numOps; i++) {
        struct fk_side3 d, s;
        CUresult rc = CUDA_ERROR_INVALID_VALUE;
        if ((int)ops[i].srcAccessOrder >= 1 && (int)ops[i].srcAccessOrder <= 3 &&
            fk_operand(&ops[i].dst, &ops[i].extent, &d) == CUDA_SUCCESS &&
            fk_operand(&ops[i].src, &ops[i].extent, &s) == CUDA_SUCCESS)
            rc = fk_copy3(&d, &s, ops[i].extent.width, ops[i].extent.height, ops[i].extent.depth, st, pt);
        if (rc != CUDA_SUCCESS) {
            if (failIdx)
                *failIdx = i;
            return rc;
        }
    }
    return CUDA_SUCCESS;
}

CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                              unsigned long long flags, CUstream hStream)
{
    return fk_batch3d(numOps, opList, failIdx, flags, hStream, 0);
}
FK_ALIAS(cuMemcpy3DBatchAsync);
CUresult cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                   unsigned long long flags, CUstream hStream)
{
    return fk_batch3d(numOps, opList, failIdx, flags, hStream, 1);
}
FK_ALIAS(cuMemcpy3DBatchAsync_ptsz);
CUresult cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags,
                                 CUstream hStream)
{
    return fk_batch3d(numOps, opList, NULL, flags, hStream, 0);
}
FK_ALIAS(cuMemcpy3DBatchAsync_v2);
CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags,
                                      CUstream hStream)
{
    return fk_batch3d(numOps, opList, NULL, flags, hStream, 1);
}
FK_ALIAS(cuMemcpy3DBatchAsync_v2_ptsz);
