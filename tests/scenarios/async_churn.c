/*
 * async_churn.c - NVIDIA's streamOrderedAllocation pattern: every step
 * takes its 64 MiB buffers with cuMemAllocAsync, runs a kernel and gives
 * them back with cuMemFreeAsync.  The pool serves them without a driver
 * round trip or a synchronisation: not churn, no fragmentation warning.
 */
#include "scenario.h"

#define STEPS 100

int main(void)
{
    CUstream s;
    sc_start(0);
    CK(cuStreamCreate(&s, 0));
    for (int step = 0; step < STEPS; step++) {
        CUdeviceptr a, b;
        CK(cuMemAllocAsync(&a, 64 * MIB, s));
        CK(cuMemAllocAsync(&b, 64 * MIB, s));
        sc_fill(s, &a);
        CK(cuMemFreeAsync(a, s));
        CK(cuMemFreeAsync(b, s));
    }
    CK(cuStreamSynchronize(s));
    CK(cuStreamDestroy_v2(s));
    return 0;
}
