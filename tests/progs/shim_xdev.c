/*
 * shim_xdev.c - the classic multi-GPU bug: a tensor of GPU 1 handed to a
 * kernel running on GPU 0, and a copy between them from GPU 0's context.
 * Needs FAKECUDA_DEVICES=2.  "clean" does the same with matching devices.
 */
#include <string.h>

#include "fake_api.h"
#include "cp_test.h"

int main(int argc, char **argv)
{
    int clean = argc > 1 && strcmp(argv[1], "clean") == 0;
    CUcontext c0, c1;
    CUdeviceptr a0, a1;
    CUmodule m;
    CUfunction fill;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&c0, 0));
    CK(cuDevicePrimaryCtxRetain(&c1, 1));
    CK(cuCtxSetCurrent(c1));
    CK(cuMemAlloc_v2(&a1, 1 << 20));
    CK(cuCtxSetCurrent(c0));
    CK(cuMemAlloc_v2(&a0, 1 << 20));
    CK(cuModuleLoadData(&m, "fake"));
    CK(cuModuleGetFunction(&fill, m, "fake_fill_u32"));
    CUdeviceptr target = clean ? a0 : a1;
    unsigned v = 5;
    size_t n = 16;
    void *p[] = { &target, &v, &n };
    CK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, NULL, p, NULL));
    printf("launched on device 0 with a pointer of device %d\n", clean ? 0 : 1);
    CK(cuMemFree_v2(a0));
    CK(cuCtxSetCurrent(c1));
    CK(cuMemFree_v2(a1));
    return 0;
}
