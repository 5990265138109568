/*
 * leak.c - a plain driver program that loses memory: 3 buffers from one
 * site never freed at exit, and 1 buffer alive when its own context is
 * destroyed.  Both are warnings: 14 and 24 MiB, more than 1% of the 1 GiB
 * card (a one-off leak below that costs nothing: leak_small.c).
 */
#include "scenario.h"

static CUdeviceptr make_buffer(size_t n)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, n));
    return d;
}

int main(void)
{
    CUcontext ctx;
    CUdeviceptr kept[4], lost;
    sc_start(0);
    for (int i = 0; i < 4; i++)
        kept[i] = make_buffer(MIB << i);
    CK(cuMemFree_v2(kept[0]));
    CK(cuCtxCreate_v2(&ctx, 0, 0));
    CK(cuMemAlloc_v2(&lost, 24 * MIB));
    CK(cuCtxDestroy_v2(ctx));
    return 0;
}
