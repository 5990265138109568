/*
 * stray_device.c - a DDP rank (LOCAL_RANK=1, FAKECUDA_DEVICES=2) that
 * touches GPU 0 before setting its device: a context and a small buffer on
 * GPU 0, its real work on GPU 1.
 */
#include "scenario.h"

static CUcontext query_current_device(void)
{
    /* What torch.cuda.current_device() before set_device does. */
    CUcontext c;
    CK(cuDevicePrimaryCtxRetain(&c, 0));
    return c;
}

int main(void)
{
    CUcontext c0, c1;
    CUdeviceptr small, big;
    CK(cuInit(0));
    c0 = query_current_device();
    CK(cuCtxSetCurrent(c0));
    CK(cuMemAlloc_v2(&small, 2 * MIB));
    CK(cuDevicePrimaryCtxRetain(&c1, 1));
    CK(cuCtxSetCurrent(c1));
    CK(cuMemAlloc_v2(&big, 256 * MIB));
    CK(cuMemFree_v2(big));
    CK(cuCtxSetCurrent(c0));
    CK(cuMemFree_v2(small));
    return 0;
}
