/*
 * pool_ctx_retry.c - PyTorch with backend:cudaMallocAsync (seen on an H200):
 * the runtime's first cuMemAllocAsync runs before a context is current on
 * the thread and fails with CUDA_ERROR_INVALID_CONTEXT; the runtime makes
 * the primary context current and the next cuMemAllocAsync succeeds.
 * Recovered: cuda-errors is info and names the API.
 */
#include "scenario.h"

int main(void)
{
    CUcontext ctx;
    CUdeviceptr p;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    if (cuMemAllocAsync(&p, 1 * MIB, 0) == CUDA_SUCCESS)
        return 1;               /* the fake driver must refuse it */
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAllocAsync(&p, 1 * MIB, 0));
    CK(cuMemsetD8Async(p, 0, 1 * MIB, 0));
    CK(cuMemFreeAsync(p, 0));
    CK(cuStreamSynchronize(0));
    return 0;
}
