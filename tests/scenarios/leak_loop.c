/*
 * leak_loop.c - a leak that costs more every iteration (severity
 * from cost): a training loop of 100 steps with kernels in each, each step
 * taking a 64 KiB buffer it never frees.  6.25 MiB is 0.61% of the 1 GiB
 * card, below the share bar, but one site left 100 allocations with
 * kernels launched between them: a warning that states the count, the
 * bytes per allocation and in all.  (Too little for memory-growth's
 * 16 MiB.)
 */
#include "scenario.h"

static void step(int i)
{
    CUdeviceptr d;
    (void)i;
    CK(cuMemAlloc_v2(&d, 64 << 10));
}

int main(void)
{
    sc_start(0);
    CK(cuMemFree_v2(sc_train(100, step)));
    return 0;
}
