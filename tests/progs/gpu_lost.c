/*
 * gpu_lost.c - a run that dies because its GPU fell off the bus: a kernel
 * is launched on GPU 1, the "driver" logs Xid 79 for that GPU (a line
 * appended to the file CUPROBE_KMSG names, stamped with the kernel log's
 * clock now), and a second later the synchronisation returns the sticky
 * error the fake driver was told to inject (FAKECUDA_FAIL_LAUNCH=1,
 * FAKECUDA_FAIL_CODE=999).  Exits 1 with the error, as a program would.
 * `gpu_lost N` logs Xid N instead, with a channel message and a process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cp_kmsg.h"
#include "cp_test.h"
#include "fake_api.h"

static void log_xid(int code)
{
    const char *path = getenv("CUPROBE_KMSG");
    int64_t us = cp_kmsg_clock_now();
    struct timespec ts;
    FILE *f;

    if (!path || !(f = fopen(path, "a")))
        return;
    if (us < 0) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    }
    fprintf(f, "4,2201,%lld,-;NVRM: GPU at PCI:0000:28:00: GPU-a1e60b30-557a-9fc4-e90e-33587da2c7ec\n", (long long)us);
    if (code == 79)
        fprintf(f, "3,2202,%lld,-;NVRM: Xid (PCI:0000:28:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
                   "off the bus.\n", (long long)us + 12);
    else
        fprintf(f, "3,2202,%lld,-;NVRM: Xid (PCI:0000:28:00): %d, pid=%d, name=gpu_lost, Ch 00000010\n",
                (long long)us + 12, code, (int)getpid());
    fclose(f);
}

int main(int argc, char **argv)
{
    CUcontext c;
    CUmodule m;
    CUfunction noop;
    CUresult r;

    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&c, 1));
    CK(cuCtxSetCurrent(c));
    CK(cuModuleLoadData(&m, "lost"));
    CK(cuModuleGetFunction(&noop, m, "fake_noop"));
    CK(cuLaunchKernel(noop, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    log_xid(argc > 1 ? atoi(argv[1]) : 79);
    sleep(1);
    r = cuCtxSynchronize();
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "gpu_lost: cuCtxSynchronize = %d\n", (int)r);
        return 1;
    }
    printf("gpu_lost: no error\n");
    return 0;
}
