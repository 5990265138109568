/*
 * host_mem.c - holds host memory the way a data pipeline does, then waits
 * to be killed (tests/sh/host_killed.sh): 64 MiB from cuMemAllocHost and
 * 32 MiB from cuMemHostAlloc, touched as the driver's page locking would;
 * 16 MiB of malloc'd memory registered with cuMemHostRegister; an 8 MiB
 * cuMemAllocHost freed again; MB MiB (argv[1], default 256) malloc'd and
 * touched.  Pinned held at the end: 112 MiB.  Prints "ready" once all of
 * it is resident, then sleeps until SIGKILL.
 */
#include <string.h>
#include <unistd.h>

#include "fake_api.h"
#include "cp_test.h"

#define MIB ((size_t)1 << 20)

int main(int argc, char **argv)
{
    CUcontext ctx;
    size_t big = (argc > 1 ? (size_t)atol(argv[1]) : 256) * MIB;
    void *a, *b, *c, *reg = malloc(16 * MIB), *heap = malloc(big);
    if (!reg || !heap)
        return 2;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAllocHost_v2(&a, 64 * MIB));
    CK(cuMemHostAlloc(&b, 32 * MIB, 0));
    CK(cuMemAllocHost_v2(&c, 8 * MIB));
    memset(a, 1, 64 * MIB);
    memset(b, 2, 32 * MIB);
    memset(reg, 3, 16 * MIB);
    CK(cuMemHostRegister_v2(reg, 16 * MIB, 0));
    CK(cuMemFreeHost(c));
    memset(heap, 4, big);
    /* Two writer samples after the last change (50 ms apart at least). */
    usleep(300 * 1000);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
