/*
 * warmup_plateau.c - the same 75 segments of 2 MiB as growth_segments.c,
 * but all taken in the first ten steps (a caching allocator warming up),
 * then 300 steps of kernels that reuse them; everything is freed at
 * exit.  A plateau: memory-growth must stay silent.
 */
#include "scenario.h"

#define SEGS 75
#define STEPS 310

static CUdeviceptr seg[SEGS];
static int k;

static void take(int step)
{
    while (step < 10 && k < (step + 1) * SEGS / 10)
        CK(cuMemAlloc_v2(&seg[k++], 2 * MIB));
}

int main(void)
{
    sc_start(0);
    CUdeviceptr work = sc_train(STEPS, take);
    sc_free_all(seg, k);
    CK(cuMemFree_v2(work));
    return 0;
}
