/*
 * leak_oom.c - a small leak that an out-of-memory failure makes costly
 * (severity from cost; FAKECUDA_MEM=1G): 8 MiB taken once and
 * never freed (0.78% of the card, below the share bar, one allocation),
 * then three 338 MiB buffers fill the card and an 8 MiB request fails.
 * The leaked 8 MiB were held at that failure and would have served it: the
 * leak is a warning that says so.  The buffers are freed before exit.
 */
#include "scenario.h"

int main(void)
{
    CUdeviceptr lost, w[3], act;
    sc_start(0);
    CK(cuMemAlloc_v2(&lost, 8 * MIB));
    for (int i = 0; i < 3; i++)
        CK(cuMemAlloc_v2(&w[i], 338 * MIB));
    CUresult r = cuMemAlloc_v2(&act, 8 * MIB);
    printf("activation alloc: %d\n", (int)r);
    for (int i = 0; i < 3; i++)
        CK(cuMemFree_v2(w[i]));
    return 0;
}
