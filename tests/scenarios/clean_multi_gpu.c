/*
 * clean_multi_gpu.c - two GPUs used correctly (FAKECUDA_DEVICES=2): each
 * device's memory is touched only by kernels and copies issued from its own
 * context, data moves between them with an explicit peer copy, stream-
 * ordered and VMM allocations are all returned.  No warning, no error.
 */
#include "scenario.h"

static CUdeviceptr vmm_buffer(int dev, size_t size, CUmemGenericAllocationHandle *h)
{
    CUmemAllocationProp prop = { 0 };
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, size, 0, 0, 0));
    CK(cuMemCreate(h, size, &prop, 0));
    CK(cuMemMap(va, size, 0, *h, 0));
    CUmemAccessDesc acc = { .location = prop.location,
                            .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    CK(cuMemSetAccess(va, size, &acc, 1));
    return va;
}

int main(void)
{
    CUcontext c[2];
    CUdeviceptr buf[2], tmp;
    CUstream s[2];
    CK(cuInit(0));
    CUfunction fill = NULL;
    for (int d = 0; d < 2; d++) {
        CK(cuDevicePrimaryCtxRetain(&c[d], d));
        CK(cuCtxSetCurrent(c[d]));
        CK(cuStreamCreate(&s[d], 0));
        CK(cuMemAlloc_v2(&buf[d], 16 * MIB));
        fill = sc_kernel("fake_fill_u32");
        unsigned v = (unsigned)d;
        size_t n = 1024;
        void *p[] = { &buf[d], &v, &n };
        for (int i = 0; i < 5; i++) {
            CK(cuMemAllocAsync(&tmp, 2 * MIB, s[d]));
            CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, s[d], p, NULL));
            CK(cuMemFreeAsync(tmp, s[d]));
        }
        CK(cuStreamSynchronize(s[d]));
    }
    CK(cuCtxSetCurrent(c[0]));
    CK(cuMemcpyPeer(buf[0], c[0], buf[1], c[1], MIB));
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = vmm_buffer(0, 4 * MIB, &h);
    CK(cuMemsetD8_v2(va, 0, 4 * MIB));
    CK(cuMemUnmap(va, 4 * MIB));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, 4 * MIB));
    for (int d = 0; d < 2; d++) {
        CK(cuCtxSetCurrent(c[d]));
        CK(cuMemFree_v2(buf[d]));
        CK(cuStreamDestroy_v2(s[d]));
    }
    return 0;
}
