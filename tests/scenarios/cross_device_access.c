/*
 * cross_device_access.c - GPU 1's memory used from GPU 0 (FAKECUDA_DEVICES=2):
 * a kernel on GPU 0 given a pointer into GPU 1 (3 launches), a host-to-device
 * copy into GPU 1's memory issued from GPU 0's context (2), a memset put
 * on a stream created in GPU 1's context while GPU 0's is current (1), and a
 * memset of GPU 1's memory from GPU 0's context on the legacy stream (1).
 */
#include "scenario.h"

int main(void)
{
    CUcontext c0, c1;
    CUdeviceptr a0, a1;
    CUstream s1;
    unsigned host[256] = { 0 };
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&c0, 0));
    CK(cuDevicePrimaryCtxRetain(&c1, 1));
    CK(cuCtxSetCurrent(c1));
    CK(cuMemAlloc_v2(&a1, MIB));
    CK(cuStreamCreate(&s1, 0));
    CK(cuCtxSetCurrent(c0));
    CK(cuMemAlloc_v2(&a0, MIB));
    CUfunction fill = sc_kernel("fake_fill_u32");
    unsigned v = 5;
    size_t n = 16;
    void *p[] = { &a1, &v, &n };
    for (int i = 0; i < 3; i++)
        CK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, NULL, p, NULL));
    for (int i = 0; i < 2; i++)
        CK(cuMemcpyHtoD_v2(a1, host, sizeof host));
    CUresult r = cuMemsetD8Async(a0, 0, 64, s1);
    printf("memset on a foreign stream: %d\n", (int)r);
    CK(cuMemsetD8_v2(a1, 0, 64));   /* GPU 1's memory from GPU 0's context */
    CK(cuCtxSynchronize());
    CK(cuMemFree_v2(a0));
    CK(cuCtxSetCurrent(c1));
    CK(cuStreamDestroy_v2(s1));
    CK(cuMemFree_v2(a1));
    return 0;
}
