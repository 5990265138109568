/*
 * oom_other_process.c - another process holds 768 MiB of the 1 GiB card
 * (FAKECUDA_USED): this one holds a 64 MiB buffer and its 512 MiB request
 * fails.
 */
#include "scenario.h"

static CUdeviceptr weights(void)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, 64 * MIB));
    return d;
}

int main(void)
{
    CUdeviceptr w[1], act;
    sc_start(0);
    for (int i = 0; i < 1; i++)
        w[i] = weights();
    CUresult r = cuMemAlloc_v2(&act, 512 * MIB);
    printf("activation alloc: %d\n", (int)r);
    for (int i = 0; i < 1; i++)
        CK(cuMemFree_v2(w[i]));
    return 0;
}
