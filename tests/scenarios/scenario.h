/*
 * scenario.h - shared by the report scenarios (tests/scenarios/NAME.c): each
 * program triggers exactly the findings its .expected file lists when run
 * under the shim on the fake driver (tests/sh/report_scenarios.sh).
 */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_api.h"
#include "../progs/cp_test.h"   /* CK(): the same exit status as the shim's test programs */

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

/* One launch of the fake driver's fill kernel over 1024 words at *buf, in
 * stream s (the module is loaded at the first). */
static inline void sc_fill(CUstream s, CUdeviceptr *buf)
{
    static CUfunction fill;
    static unsigned v = 1;
    static size_t n = 1024;
    if (!fill)
        fill = sc_kernel("fake_fill_u32");
    void *p[] = { buf, &v, &n };
    CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, s, p, NULL));
}

/* A framework record of the given kind, as the companion writes it, through
 * the shim's cuprobe_framework_record (a message on stderr without it). */
static inline void sc_record(const char *kind, const char *json)
{
    typedef int (*record_fn)(const char *, const char *, size_t);
    record_fn rec = (record_fn)dlsym(RTLD_DEFAULT, "cuprobe_framework_record");
    if (!rec || rec(kind, json, strlen(json)) != 0)
        fprintf(stderr, "cuprobe_framework_record unavailable\n");
}

/* Free d[0..n-1] in order (what a scenario kept, at its end). */
static inline void sc_free_all(const CUdeviceptr *d, int n)
{
    for (int i = 0; i < n; i++)
        CK(cuMemFree_v2(d[i]));
}

/* A training loop: `steps` steps of three fill kernels on a 1 MiB buffer,
 * take(step) first in each (the allocation schedule under test), then a
 * synchronisation.  @return : the buffer, which the caller frees last. */
static inline CUdeviceptr sc_train(int steps, void (*take)(int step))
{
    CUdeviceptr work;
    CK(cuMemAlloc_v2(&work, MIB));
    CUfunction fill = sc_kernel("fake_fill_u32");
    unsigned v = 1;
    size_t n = 1024;
    void *p[] = { &work, &v, &n };
    for (int step = 0; step < steps; step++) {
        take(step);
        for (int i = 0; i < 3; i++)
            CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
    }
    CK(cuCtxSynchronize());
    return work;
}

/* Fork n processes (n <= 8) that each run rank(r) then exit 0, and wait for
 * them: a launcher or a DDP job.  @return : 0 when every one exited 0, else 1. */
static inline int sc_fork_ranks(int n, void (*rank)(int))
{
    pid_t kids[8];
    for (int r = 0; r < n; r++) {
        kids[r] = fork();
        if (kids[r] == 0) {
            rank(r);
            exit(0);
        }
    }
    int bad = 0;
    for (int r = 0; r < n; r++) {
        int st;
        waitpid(kids[r], &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    return bad;
}

#endif
