/*
 * leak_growth.c - a leak inside a program that also warms up
 * (tests/gpu/accuracy/torch_ext_leak.py's shape): a training loop of 100
 * steps takes a 64 KiB scratch buffer each step and never frees it, and
 * its third step takes a 64 MiB workspace that it keeps, and frees at the
 * end.  The leak raises the memory held a little in every eighth of the
 * work, so the warm-up has no plateau; measured from before the warm-up
 * the floors rose by more than memory-growth's 16 MiB.  Without the
 * leaked memory nothing grows: the leak is the finding, and the growth is
 * the same memory (a line of the leak, not a second warning).
 */
#include "scenario.h"

static CUdeviceptr workspace;

static void step(int i)
{
    CUdeviceptr d;
    if (i == 2)
        CK(cuMemAlloc_v2(&workspace, 64 * MIB));
    CK(cuMemAlloc_v2(&d, 64 << 10));
}

int main(void)
{
    sc_start(0);
    CK(cuMemFree_v2(sc_train(100, step)));
    CK(cuMemFree_v2(workspace));
    return 0;
}
