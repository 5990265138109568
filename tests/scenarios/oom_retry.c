/*
 * oom_retry.c - a caching allocator's retry (FAKECUDA_MEM=1G): four cached
 * 256 MiB segments fill the card, a 512 MiB request fails, the cache frees
 * two idle segments and the retry succeeds.
 */
#include "scenario.h"

int main(void)
{
    CUdeviceptr seg[4], big;
    sc_start(0);
    for (int i = 0; i < 4; i++)
        CK(cuMemAlloc_v2(&seg[i], 256 * MIB));
    if (cuMemAlloc_v2(&big, 512 * MIB) != CUDA_ERROR_OUT_OF_MEMORY)
        return 1;
    CK(cuMemFree_v2(seg[2]));
    CK(cuMemFree_v2(seg[3]));
    CK(cuMemAlloc_v2(&big, 512 * MIB));
    CK(cuMemFree_v2(big));
    CK(cuMemFree_v2(seg[0]));
    CK(cuMemFree_v2(seg[1]));
    return 0;
}
