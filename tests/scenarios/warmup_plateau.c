/*
 * warmup_plateau.c - the same 75 segments of 2 MiB as growth_segments.c,
 * but all taken in the first ten steps (a caching allocator warming up),
 * then 300 steps of kernels that reuse them; everything is freed at
 * exit.  A plateau: memory-growth must stay silent.
 */
#include "scenario.h"

#define SEGS 75
#define STEPS 310

int main(void)
{
    static CUdeviceptr seg[SEGS];
    CUdeviceptr work;
    sc_start(0);
    CK(cuMemAlloc_v2(&work, MIB));
    CUfunction fill = sc_kernel("fake_fill_u32");
    unsigned v = 1;
    size_t n = 1024;
    void *p[] = { &work, &v, &n };
    int k = 0;
    for (int step = 0; step < STEPS; step++) {
        while (step < 10 && k < (step + 1) * SEGS / 10)
            CK(cuMemAlloc_v2(&seg[k++], 2 * MIB));
        for (int i = 0; i < 3; i++)
            CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
    }
    CK(cuCtxSynchronize());
    for (int i = 0; i < k; i++)
        CK(cuMemFree_v2(seg[i]));
    CK(cuMemFree_v2(work));
    return 0;
}
