/*
 * growth_segments.c - a caching allocator seen from the driver while the
 * program keeps references (losses.append(loss)): every few steps the
 * cache is exhausted and a new 2 MiB segment is taken; nothing is given
 * back until exit; every step launches kernels.  memory-growth must warn
 * with the segment's site although the driver saw no free in the loop.
 */
#include "scenario.h"

#define STEPS 300
#define EVERY 4

static CUdeviceptr new_segment(void)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, 2 * MIB));
    return d;
}

int main(void)
{
    static CUdeviceptr seg[STEPS / EVERY];
    CUdeviceptr work;
    sc_start(0);
    CK(cuMemAlloc_v2(&work, MIB));
    CUfunction fill = sc_kernel("fake_fill_u32");
    unsigned v = 1;
    size_t n = 1024;
    void *p[] = { &work, &v, &n };
    int k = 0;
    for (int step = 0; step < STEPS; step++) {
        if (step % EVERY == 0)
            seg[k++] = new_segment();
        for (int i = 0; i < 3; i++)
            CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
    }
    CK(cuCtxSynchronize());
    for (int i = 0; i < k; i++)
        CK(cuMemFree_v2(seg[i]));
    CK(cuMemFree_v2(work));
    return 0;
}
