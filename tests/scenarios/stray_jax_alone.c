/*
 * stray_jax_alone.c - JAX alone on a 2-GPU machine (FAKECUDA_DEVICES=2, no
 * launcher): XLA opens a context and takes a little memory on every
 * visible GPU by design, and works on GPU 0.  The process says it is JAX
 * the way the companion does (a jax.exit record).  No other process wanted
 * GPU 1, so stray-device is info saying what GPU 1 cost, with XLA's knob
 * (CUDA_VISIBLE_DEVICES), not a PyTorch set_device warning.
 */

#include "scenario.h"

int main(void)
{
    CUcontext c[2];
    CUdeviceptr small, big;
    CK(cuInit(0));
    for (int d = 0; d < 2; d++)   /* xla_bridge initialises every backend device */
        CK(cuDevicePrimaryCtxRetain(&c[d], d));
    CK(cuCtxSetCurrent(c[1]));
    CK(cuMemAlloc_v2(&small, 2 * MIB));
    CK(cuCtxSetCurrent(c[0]));
    CK(cuMemAlloc_v2(&big, 256 * MIB));
    CUfunction fill = sc_kernel("fake_fill_u32");
    unsigned v = 1;
    size_t n = 1024;
    void *p[] = { &big, &v, &n };
    for (int i = 0; i < 64; i++)
        CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
    CK(cuCtxSynchronize());
    static const char js[] = "{\"v\":1,\"devices\":[]}";
    sc_record("jax.exit", js);
    CK(cuMemFree_v2(big));
    CK(cuCtxSetCurrent(c[1]));
    CK(cuMemFree_v2(small));
    return 0;
}
