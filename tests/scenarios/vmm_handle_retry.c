/*
 * vmm_handle_retry.c - PyTorch's expandable segments in a container that
 * forbids shareable handles: cuMemCreate asked for a POSIX file descriptor
 * handle fails with CUDA_ERROR_NOT_PERMITTED, the allocator asks again
 * without one and goes on.  Recovered: cuda-errors is info, and says what
 * 800 from cuMemCreate means.  With VMM_NO_RETRY set the program gives up
 * on the segment after real work in ordinary memory: the same failure is
 * an error (and no-gpu-used has nothing to say).
 */
#include <stdlib.h>

#include "scenario.h"

static CUresult segment(CUmemGenericAllocationHandle *h, unsigned handle_types)
{
    CUmemAllocationProp prop = { 0 };
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = (CUmemAllocationHandleType)handle_types;
    return cuMemCreate(h, 4 * MIB, &prop, 0);
}

int main(void)
{
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    sc_start(0);
    CK(cuMemAddressReserve(&va, 4 * MIB, 0, 0, 0));
    if (segment(&h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != CUDA_SUCCESS) {
        if (getenv("VMM_NO_RETRY")) {
            CUdeviceptr p;
            CK(cuMemAddressFree(va, 4 * MIB));
            CK(cuMemAlloc_v2(&p, 4 * MIB));
            CK(cuMemsetD8_v2(p, 0, 4 * MIB));
            CK(cuMemFree_v2(p));
            return 0;
        }
        CK(segment(&h, 0));
    }
    CK(cuMemMap(va, 4 * MIB, 0, h, 0));
    CUmemAccessDesc acc = { .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
                            .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    CK(cuMemSetAccess(va, 4 * MIB, &acc, 1));
    CK(cuMemsetD8_v2(va, 0, 4 * MIB));
    CK(cuMemUnmap(va, 4 * MIB));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, 4 * MIB));
    return 0;
}
