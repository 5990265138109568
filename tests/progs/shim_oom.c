/*
 * shim_oom.c - allocate 64 MiB blocks until the device is full (run with
 * FAKECUDA_MEM=1G), then free everything.  Must see exactly one
 * CUDA_ERROR_OUT_OF_MEMORY and print how many blocks fitted.
 */
#include "fake_api.h"
#include "cp_test.h"

int main(void)
{
    CUcontext ctx;
    CUdeviceptr d[1024];
    int n = 0;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    for (;;) {
        CUresult r = cuMemAlloc_v2(&d[n], 64u << 20);
        if (r == CUDA_ERROR_OUT_OF_MEMORY)
            break;
        CK(r);
        n++;
    }
    printf("fitted %d blocks of 64 MiB, then out of memory\n", n);
    for (int i = 0; i < n; i++)
        CK(cuMemFree_v2(d[i]));
    return 0;
}
