/*
 * bench_util.h - what the fake-driver benchmarks (bench_calls.c,
 * bench_cold.c) share: a driver call that must succeed, the clock, a
 * comparison for qsort of doubles, the start (context and no-op kernel).
 * Include after fake_api.h.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(x) do { if ((x) != CUDA_SUCCESS) { fprintf(stderr, "%s failed\n", #x); exit(1); } } while (0)

/* CLOCK_MONOTONIC in nanoseconds. */
static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* qsort's comparison for doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* async_step's lifetimes (bench_calls.c): pair `at` of a step of 2 * ACT
 * makes activation k and drops gradient k going forward, then makes
 * gradient k and drops activation k going backward, last layer first.
 * Sets *make and *drop; @return : the layer k. */
#define ACT 48
static inline unsigned bench_step_pick(unsigned at, CUdeviceptr act[ACT], CUdeviceptr grad[ACT],
                                       CUdeviceptr **make, CUdeviceptr **drop)
{
    unsigned k = at % (2 * ACT);
    *make = &act[k], *drop = &grad[k];      /* forward */
    if (k >= ACT) {                         /* backward, last layer first */
        k = 2 * ACT - 1 - k;
        *make = &grad[k], *drop = &act[k];
    }
    return k;
}

/* Initialise the driver, make device 0's primary context current (*ctx) and
 * load the fake driver's no-op kernel into *noop.  @return : 1 when the
 * kernel is there (the fake driver), 0 on a driver without it. */
static inline int bench_start(CUcontext *ctx, CUfunction *noop)
{
    CUmodule m;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(ctx, 0));
    CK(cuCtxSetCurrent(*ctx));
    return cuModuleLoadData(&m, "fake") == CUDA_SUCCESS &&
           cuModuleGetFunction(noop, m, "fake_noop") == CUDA_SUCCESS;
}

#endif /* BENCH_UTIL_H */
