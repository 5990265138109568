/*
 * oom.c - a capacity OOM (FAKECUDA_MEM=1G): three 256 MiB buffers, then a
 * 512 MiB request fails; the program then frees everything and exits.
 */
#include "scenario.h"

static CUdeviceptr weights(void)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, 256 * MIB));
    return d;
}

int main(void)
{
    CUdeviceptr w[3], act;
    sc_start(0);
    for (int i = 0; i < 3; i++)
        w[i] = weights();
    CUresult r = cuMemAlloc_v2(&act, 512 * MIB);
    printf("activation alloc: %d\n", (int)r);
    for (int i = 0; i < 3; i++)
        CK(cuMemFree_v2(w[i]));
    return 0;
}
