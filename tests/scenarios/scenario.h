/*
 * scenario.h - shared by the report scenarios (tests/scenarios/NAME.c): each
 * program triggers exactly the findings its .expected file lists when run
 * under the shim on the fake driver (tests/sh/report_scenarios.sh).
 */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <stdio.h>
#include <stdlib.h>

#include "fake_api.h"

#define CK(call)                                                                       \
    do {                                                                               \
        CUresult r_ = (call);                                                          \
        if (r_ != CUDA_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)r_);   \
            exit(10);                                                                  \
        }                                                                              \
    } while (0)

#define MIB ((size_t)1 << 20)

/* cuInit, then make device dev's primary context current. */
static inline CUcontext sc_start(int dev)
{
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    return ctx;
}

/* A built-in kernel of the fake driver. */
static inline CUfunction sc_kernel(const char *name)
{
    CUmodule m;
    CUfunction f;
    CK(cuModuleLoadData(&m, "scenario"));
    CK(cuModuleGetFunction(&f, m, name));
    return f;
}

#endif
