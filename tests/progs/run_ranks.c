/*
 * run_ranks.c - the processes of a run, for tests/sh/run_model.sh:
 *   rank DEV         one rank: allocate on GPU DEV (its identity comes from
 *                    the RANK/LOCAL_RANK/SLURM_* variables it was given)
 *   leak DEV [MIB]   the same, but MIB (default 2) MiB stay allocated at exit,
 *                    one 1 MiB allocation each
 *   probe            only cuInit (an Inductor compile worker, a device probe)
 *   fork-exec-probe  GPU work, then fork + exec of `probe` (a compile worker)
 *   exec-child       GPU work, then fork + exec of `rank 0` (simpleIPC)
 *   hold             hold 64 MiB on GPU 0 and keep allocating until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_api.h"
#include "cp_test.h"

#define MIB ((size_t)1 << 20)

static CUdeviceptr on_dev(int dev, size_t bytes)
{
    CUcontext c;
    CUdeviceptr d;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&c, dev));
    CK(cuCtxSetCurrent(c));
    CK(cuMemAlloc_v2(&d, bytes));
    return d;
}

/* fork, and exec this program with args in the child; wait for it. */
static int fork_exec(char *const args[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execv("/proc/self/exe", args);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return 1;
    return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "rank") == 0 && argc > 2) {
        CUdeviceptr d = on_dev(atoi(argv[2]), 32 * MIB);
        CK(cuMemFree_v2(d));
        return 0;
    }
    if (strcmp(mode, "leak") == 0 && argc > 2) {
        int mib = argc > 3 ? atoi(argv[3]) : 2;
        if (argc <= 3) {
            on_dev(atoi(argv[2]), 2 * MIB);
            return 0;
        }
        on_dev(atoi(argv[2]), MIB);
        for (int i = 1; i < mib; i++) {
            CUdeviceptr d;
            CK(cuMemAlloc_v2(&d, MIB));
        }
        return 0;
    }
    if (strcmp(mode, "probe") == 0) {
        CK(cuInit(0));
        return 0;
    }
    if (strcmp(mode, "fork-exec-probe") == 0 || strcmp(mode, "exec-child") == 0) {
        CUdeviceptr d = on_dev(0, 16 * MIB);
        char *probe[] = { argv[0], "probe", NULL }, *rank[] = { argv[0], "rank", "0", NULL };
        int bad = fork_exec(mode[0] == 'f' ? probe : rank);
        CK(cuMemFree_v2(d));
        return bad;
    }
    if (strcmp(mode, "hold") == 0) {
        on_dev(0, 64 * MIB);
        printf("ready\n");
        fflush(stdout);
        for (;;) {
            CUdeviceptr d;
            CK(cuMemAlloc_v2(&d, MIB));
            CK(cuMemFree_v2(d));
            usleep(1000);
        }
    }
    fprintf(stderr, "usage: run_ranks rank DEV | leak DEV [MIB] | probe | fork-exec-probe | exec-child | hold\n");
    return 2;
}
