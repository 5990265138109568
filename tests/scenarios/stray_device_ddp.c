/*
 * stray_device_ddp.c - a two-rank job on two GPUs (FAKECUDA_DEVICES=2) where
 * every rank first touches GPU 0 (a context there) before setting its own
 * device: rank 1's context on GPU 0 is stray, rank 0's is its own device.
 * One trace per rank.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

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
    pid_t kids[2];
    for (int r = 0; r < 2; r++) {
        kids[r] = fork();
        if (kids[r] == 0) {
            rank_main(r);
            exit(0);
        }
    }
    int bad = 0;
    for (int r = 0; r < 2; r++) {
        int st;
        waitpid(kids[r], &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    return bad;
}
