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

static CUdeviceptr seg[STEPS / EVERY];
static int k;

static CUdeviceptr new_segment(void)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, 2 * MIB));
    return d;
}

static void take(int step)
{
    if (step % EVERY == 0)
        seg[k++] = new_segment();
}

int main(void)
{
    sc_start(0);
    CUdeviceptr work = sc_train(STEPS, take);
    sc_free_all(seg, k);
    CK(cuMemFree_v2(work));
    return 0;
}
