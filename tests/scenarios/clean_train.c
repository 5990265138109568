/*
 * clean_train.c - a well-behaved training loop: pinned staging buffers,
 * async uploads on a stream, kernels, buffers reused every step, one
 * download and synchronisation at the end, everything freed.  The report
 * must have no warning and no error.
 */
#include <string.h>

#include "scenario.h"

int main(void)
{
    CUstream s;
    CUdeviceptr x, y;
    void *stage;
    sc_start(0);
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc_v2(&x, 8 * MIB));
    CK(cuMemAlloc_v2(&y, 8 * MIB));
    CK(cuMemHostAlloc(&stage, 8 * MIB, 0));
    memset(stage, 0, 8 * MIB);
    CUfunction add = sc_kernel("fake_add_f32");
    CUfunction scale = sc_kernel("fake_scale_f32");
    size_t n = 1024;
    float a = 0.5f;
    for (int step = 0; step < 50; step++) {
        CK(cuMemcpyHtoDAsync_v2(x, stage, 8 * MIB, s));
        void *pa[] = { &x, &y, &y, &n };
        CK(cuLaunchKernel(add, 4, 1, 1, 256, 1, 1, 0, s, pa, NULL));
        void *ps[] = { &y, &a, &n };
        CK(cuLaunchKernel(scale, 4, 1, 1, 256, 1, 1, 0, s, ps, NULL));
    }
    CK(cuMemcpyDtoHAsync_v2(stage, y, 4096, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemFreeHost(stage));
    CK(cuMemFree_v2(x));
    CK(cuMemFree_v2(y));
    CK(cuStreamDestroy_v2(s));
    return 0;
}
