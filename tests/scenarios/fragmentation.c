/*
 * fragmentation.c - torch.cuda.empty_cache() in a loop, seen from the
 * driver: every step frees its eight 64 MiB segments and allocates the
 * same sizes again.
 */
#include "scenario.h"

static void step(CUdeviceptr *seg)
{
    for (int i = 0; i < 8; i++)
        CK(cuMemAlloc_v2(&seg[i], 64 * MIB));
}

static void empty_cache(CUdeviceptr *seg)
{
    for (int i = 0; i < 8; i++)
        CK(cuMemFree_v2(seg[i]));
}

int main(void)
{
    CUdeviceptr seg[8];
    sc_start(0);
    for (int s = 0; s < 20; s++) {
        step(seg);
        empty_cache(seg);
    }
    return 0;
}
