/*
 * stray_device_ddp.c - a two-rank job on two GPUs (FAKECUDA_DEVICES=2) where
 * every rank first touches GPU 0 (a context there) before setting its own
 * device: rank 1's context on GPU 0 is stray, rank 0's is its own device.
 * One trace per rank.
 */
#include <stdio.h>

#include "scenario.h"

static void rank_main(int rank)
{
    char lr[8];
    snprintf(lr, sizeof lr, "%d", rank);
    setenv("LOCAL_RANK", lr, 1);
    CUcontext c0, mine;
    CUdeviceptr d;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&c0, 0));       /* the bug: before set_device */
    CK(cuDevicePrimaryCtxRetain(&mine, rank));
    CK(cuCtxSetCurrent(mine));
    CK(cuMemAlloc_v2(&d, 64 * MIB));
    CK(cuMemFree_v2(d));
}

int main(void)
{
    return sc_fork_ranks(2, rank_main);
}
