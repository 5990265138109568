/*
 * window_phases.c - three phases of work with a pause between them, for
 * the windows of --since and --until (tests/sh/report_window.sh).  Before
 * and after each phase it prints "begin N T" and "end N T", T its
 * CLOCK_MONOTONIC time in seconds (the trace's clock):
 *   phase 1: A (64 MiB, freed in phase 2) and B (16 MiB, never freed)
 *            allocated, 1 copy to the device, 1 failing cuMemFree;
 *   phase 2: 2 copies, 2 failing frees, C (8 MiB, never freed), A freed;
 *   phase 3: 4 copies, 4 failing frees, D (4 MiB) allocated and freed.
 * The counts 1, 2 and 4 tell apart any set of phases from their sum.
 * argv[1]: the pause in ms (400).
 */
#include <time.h>
#include <unistd.h>

#include "fake_api.h"
#include "cp_test.h"

#define MIB (1u << 20)

static void mark(const char *what, int phase)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    printf("%s %d %lld.%09ld\n", what, phase, (long long)t.tv_sec, t.tv_nsec);
    fflush(stdout);
}

/* The allocations: their size, the phase that makes them and the one that
 * frees them (0: never). */
static const struct {
    unsigned mib;
    int made, freed;
} allocs[] = { { 64, 1, 2 }, { 16, 1, 0 }, { 8, 2, 0 }, { 4, 3, 3 } };
#define N_ALLOCS (sizeof allocs / sizeof allocs[0])

int main(int argc, char **argv)
{
    useconds_t pause_us = (useconds_t)(argc > 1 ? atoi(argv[1]) : 400) * 1000;
    static char batch[MIB];
    CUcontext ctx;
    CUdeviceptr ptr[N_ALLOCS];
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    for (int phase = 1, n = 1; phase <= 3; phase++, n *= 2) {
        if (phase > 1)
            usleep(pause_us);
        mark("begin", phase);
        for (size_t i = 0; i < N_ALLOCS; i++)
            if (allocs[i].made == phase)
                CK(cuMemAlloc_v2(&ptr[i], allocs[i].mib * MIB));
        /* n copies of the batch, and n frees of an address no allocation has. */
        for (int k = 0; k < n; k++) {
            CK(cuMemcpyHtoD_v2(ptr[1], batch, MIB));
            if (cuMemFree_v2(0xdead000) != CUDA_ERROR_INVALID_VALUE)
                return 11;
        }
        for (size_t i = 0; i < N_ALLOCS; i++)
            if (allocs[i].freed == phase)
                CK(cuMemFree_v2(ptr[i]));
        mark("end", phase);
    }
    return 0;
}
