/*
 * bytes_workload.c - a training loop shaped like GPT-2 under PyTorch as
 * an H200 trace saw it (docs/validation/bytes-per-event/), for measuring
 * trace bytes per event on the fake driver (bench/bytes_per_event.sh): per step many small memsets (async, on
 * device memory), kernel launches over 64 functions with long mangled
 * names, cuDriverGetVersion asked again and again, a few allocations,
 * frees and copies, and one stream synchronisation.
 *
 *   bytes_workload [STEPS] [STEP_US]   (default 300 steps of 10 ms)
 *
 * Per step: 170 memsets, 94 launches, 43 cuDriverGetVersion, 2
 * allocations and frees, 1 HtoD copy, 1 synchronisation (the GPT-2 trace
 * had, per 100 ms, about 350 memsets, 155 DRIVER records and 35
 * LAUNCH_COUNT records).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fake_api.h"

#define CK(x) do { if ((x) != CUDA_SUCCESS) { fprintf(stderr, "%s failed\n", #x); exit(1); } } while (0)
#define N_FUNC 64
#define N_BUF 32


int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 300;
    long step_us = argc > 2 ? atol(argv[2]) : 10000;
    CUcontext ctx;
    CUstream st;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&st, 0));
    /* One module per function: the fake driver hands out one handle per
     * kernel of a module, whatever the name. */
    CUfunction f[N_FUNC];
    for (int i = 0; i < N_FUNC; i++) {
        CUmodule mod;
        char name[256];
        CK(cuModuleLoadData(&mod, "fake"));
        /* About 150 bytes, like PyTorch's elementwise kernels. */
        snprintf(name, sizeof name,
                 "fake_noop@_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEE"
                 "NS_6detail5ArrayIPcLi1EEEEEviT0_T1_%d_ZN3c1010ScalarTypeE", i);
        CK(cuModuleGetFunction(&f[i], mod, name));
    }
    CUdeviceptr buf[N_BUF];
    for (int i = 0; i < N_BUF; i++)
        CK(cuMemAlloc_v2(&buf[i], 4096 << (i % 8)));
    void *host;
    CK(cuMemHostAlloc(&host, 1 << 16, 0));
    unsigned li = 0;
    for (int s = 0; s < steps; s++) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < 170; i++) {
            CK(cuMemsetD32Async(buf[(s + i) % N_BUF], 0, 256 << (i % 5), st));
            if (i % 2 == 0) {
                CK(cuLaunchKernel(f[li++ % N_FUNC], 1, 1, 1, 128, 1, 1, 0, st, NULL, NULL));
            }
            if (i % 5 == 0) {
                int v;
                CK(cuDriverGetVersion(&v));
            }
            if (i % 20 == 0) {
                int v;
                CK(cuDriverGetVersion(&v));
                CK(cuLaunchKernel(f[(li * 7) % N_FUNC], 1, 1, 1, 128, 1, 1, 0, st, NULL, NULL));
            }
        }
        CUdeviceptr a, b;
        CK(cuMemAlloc_v2(&a, 1 << 20));
        CK(cuMemAlloc_v2(&b, 3 << 20));
        CK(cuMemcpyHtoDAsync_v2(a, host, 4096, st));
        CK(cuMemFree_v2(a));
        CK(cuMemFree_v2(b));
        CK(cuStreamSynchronize(st));
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long used = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
        if (used < step_us) {
            struct timespec w = { 0, (step_us - used) * 1000 };
            nanosleep(&w, NULL);
        }
    }
    /* The fixed denominator for bytes per event: driver calls made. */
    printf("calls %ld\n", (long)steps * (170 + 94 + 43 + 6) + 2 * N_FUNC + N_BUF + 5);
    return 0;
}
