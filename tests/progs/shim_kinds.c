/*
 * shim_kinds.c - one of every memory kind and copy shape the shim records:
 * managed, stream-ordered (default pool and an explicit pool), VMM
 * (reserve/create/map/set access/unmap/release/free), registered host
 * memory, 2D/3D/peer copies, the CUDA 12.8 and 13.0 batch ABIs, memsets,
 * explicit contexts (create/push/pop/destroy), streams and a capture.
 * Prints a checksum of what it computed.
 */
#include <string.h>

#include "fake_api.h"
#include "cp_test.h"

int main(void)
{
    CUcontext ctx, own, popped;
    CUdeviceptr dm, da, dp, d1, d2, va;
    CUstream s;
    CUmemoryPool pool;
    unsigned char host[4096], out[4096];
    static unsigned char reg[1 << 16] __attribute__((aligned(4096)));
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, 0));

    CK(cuMemAllocManaged(&dm, 1 << 16, CU_MEM_ATTACH_GLOBAL));
    CK(cuMemAllocAsync(&da, 1 << 16, s));
    CUmemPoolProps pp = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                          .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
    CK(cuMemPoolCreate(&pool, &pp));
    CK(cuMemAllocFromPoolAsync(&dp, 1 << 16, pool, s));

    /* VMM, the way PyTorch's expandable segments use it. */
    CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                 .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
    CUmemGenericAllocationHandle hnd;
    CUmemAccessDesc acc = { { CU_MEM_LOCATION_TYPE_DEVICE, 0 }, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    CK(cuMemAddressReserve(&va, 8 << 20, 0, 0, 0));
    CK(cuMemCreate(&hnd, 2 << 20, &prop, 0));
    CK(cuMemMap(va, 2 << 20, 0, hnd, 0));
    CK(cuMemSetAccess(va, 2 << 20, &acc, 1));

    CK(cuMemHostRegister_v2(reg, sizeof(reg), 0));
    for (unsigned i = 0; i < sizeof(host); i++)
        host[i] = (unsigned char)(i * 7);
    memcpy(reg, host, sizeof(host));

    CK(cuMemAlloc_v2(&d1, 1 << 16));
    CK(cuMemAlloc_v2(&d2, 1 << 16));
    CK(cuMemcpyHtoDAsync_v2(va, reg, sizeof(host), s));          /* registered -> VMM */
    CK(cuMemcpyDtoDAsync_v2(d1, va, sizeof(host), s));
    CK(cuMemcpyAsync(dm, d1, sizeof(host), s));                  /* device -> managed */
    CK(cuMemcpyPeer(d2, ctx, dm, ctx, sizeof(host)));
    CUDA_MEMCPY2D c2 = { .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = d2, .srcPitch = 64,
                         .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = da, .dstPitch = 64,
                         .WidthInBytes = 64, .Height = 64 };
    CK(cuMemcpy2D_v2(&c2));
    CUDA_MEMCPY3D c3 = { .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = da, .srcPitch = 64,
                         .srcHeight = 16, .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = dp,
                         .dstPitch = 64, .dstHeight = 16, .WidthInBytes = 64, .Height = 16,
                         .Depth = 4 };
    CK(cuMemcpy3D_v2(&c3));
    CUdeviceptr dsts[2] = { d1, d2 }, srcs[2] = { dp, dp };
    size_t sizes[2] = { 1024, 2048 }, fail = 0, idx0 = 0;
    CUmemcpyAttributes at = { .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM };
    CK(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &idx0, 1, &fail, s));
    CK(cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, &at, &idx0, 1, s));
    CK(cuMemsetD8_v2(d2 + 4096, 0xab, 512));
    CK(cuMemsetD32Async(d2 + 8192, 0x01020304, 64, s));
    CK(cuMemsetD2D16_v2(d2 + 12288, 64, 0x55aa, 32, 4));
    CK(cuMemcpyDtoH_v2(out, d2, sizeof(out)));
    CK(cuStreamSynchronize(s));
    printf("kinds: sum %lx\n", cp_test_sum(out, sizeof(out)));

    /* Explicit contexts and a capture. */
    CK(cuCtxCreate_v2(&own, 0, 0));
    CK(cuCtxPopCurrent_v2(&popped));
    CK(cuCtxPushCurrent_v2(own));
    CK(cuCtxPopCurrent_v2(&popped));
    CK(cuCtxDestroy_v2(own));
    CK(cuCtxSetCurrent(ctx));
    CUgraph g;
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemsetD8Async(d1, 0, 16, s));
    CK(cuStreamEndCapture(s, &g));

    CK(cuMemUnmap(va, 2 << 20));
    CK(cuMemRelease(hnd));
    CK(cuMemAddressFree(va, 8 << 20));
    CK(cuMemHostUnregister(reg));
    CK(cuMemFreeAsync(dp, s));
    CK(cuMemFreeAsync(da, s));
    /* Large frees: a pool's keeps no site, a cuMemAlloc block's does
     * (cp_free_site_kind). */
    CUdeviceptr big_a, big_d;
    CK(cuMemAllocAsync(&big_a, 4 << 20, s));
    CK(cuMemFreeAsync(big_a, s));
    CK(cuMemAlloc_v2(&big_d, 4 << 20));
    CK(cuMemFree_v2(big_d));
    CK(cuMemPoolTrimTo(pool, 0));
    CK(cuMemPoolDestroy(pool));
    CK(cuMemFree_v2(dm));
    CK(cuMemFree_v2(d1));
    CK(cuMemFree_v2(d2));
    CK(cuStreamDestroy_v2(s));
    return 0;
}
