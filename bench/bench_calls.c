/*
 * bench_calls.c - nanoseconds per driver call on the fake driver, for the
 * three wrapped hot paths: a kernel launch, a small pinned HtoD async copy,
 * and an allocation + free.  Run it plain and under the shim (run_calls.sh
 * alternates the two and reports medians and the added cost).
 *
 *   bench_calls [iterations]      prints "launch NS", "htod_pinned NS",
 *                                 "alloc_free NS" (per call / per pair)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fake_api.h"

#define CK(x) do { if ((x) != CUDA_SUCCESS) { fprintf(stderr, "%s failed\n", #x); exit(1); } } while (0)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    CUcontext ctx;
    CUmodule m;
    CUfunction noop;
    CUdeviceptr d;
    void *pinned;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&m, "fake"));
    CK(cuModuleGetFunction(&noop, m, "fake_noop"));
    CK(cuMemAlloc_v2(&d, 4096));
    CK(cuMemHostAlloc(&pinned, 4096, 0));

    double t = now();
    for (long i = 0; i < n; i++)
        CK(cuLaunchKernel(noop, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    printf("launch %.1f\n", (now() - t) / n);

    long nc = n / 10;
    t = now();
    for (long i = 0; i < nc; i++)
        CK(cuMemcpyHtoDAsync_v2(d, pinned, 64, NULL));
    printf("htod_pinned %.1f\n", (now() - t) / nc);

    t = now();
    for (long i = 0; i < nc; i++) {
        CUdeviceptr x;
        CK(cuMemAlloc_v2(&x, 1024));
        CK(cuMemFree_v2(x));
    }
    printf("alloc_free %.1f\n", (now() - t) / nc);
    return 0;
}
