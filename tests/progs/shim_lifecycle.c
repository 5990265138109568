/*
 * shim_lifecycle.c - the ways a process ends or splits.
 *
 *   fork-cuda     the child allocates (after its own cuInit) and exits
 *   fork-nocuda   the child only computes and exits
 *   fork-killed   the child calls cuInit (which fails under
 *                 FAKECUDA_FORK_POISON=1, as after a real fork) and tells
 *                 the parent, which kills it with SIGKILL at once, as
 *                 multiprocessing.Pool.terminate() ends its workers
 *   exec          allocate, then exec /bin/true
 *   _exit         allocate, then _exit(3) (no atexit handlers run)
 *   loop          allocate and free forever, printing "ready" once the
 *                 first second of records has been flushed (SIGKILL test)
 *   segv          allocate, then dereference NULL
 *   exit N        allocate, then exit(N) (atexit handlers and destructors run)
 *   return N      allocate, then return N from main
 *   term          allocate, then raise SIGTERM (default action: killed)
 *   pause         allocate 1 KiB, pause recording (cuprobe_bench_pause),
 *                 allocate 2 KiB, resume, allocate 3 KiB; prints what the
 *                 two calls returned (-19 without the shim: not found)
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_api.h"
#include "cp_test.h"

static CUdeviceptr setup(void)
{
    CUcontext ctx;
    CUdeviceptr d;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc_v2(&d, 4096));
    return d;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strncmp(mode, "fork", 4) == 0) {
        setup();
        int done[2];
        if (pipe(done) != 0)
            return 1;
        pid_t pid = fork();
        if (pid == 0) {
            if (strcmp(mode, "fork-killed") == 0) {
                char rc = (char)cuInit(0);
                if (write(done[1], &rc, 1) != 1)
                    _exit(1);
                pause();
            }
            if (strcmp(mode, "fork-cuda") == 0) {
                CUdeviceptr d;
                CUcontext ctx;
                CK(cuDevicePrimaryCtxRetain(&ctx, 0));
                CK(cuCtxSetCurrent(ctx));
                CK(cuMemAlloc_v2(&d, 8192));
                CK(cuMemFree_v2(d));
            }
            _exit(0);
        }
        int st;
        if (strcmp(mode, "fork-killed") == 0) {
            char rc = -1;
            if (read(done[0], &rc, 1) == 1)
                printf("child cuInit %d\n", rc);
            kill(pid, SIGKILL);
        }
        waitpid(pid, &st, 0);
        printf("child %d exited %d\n", (int)pid, WEXITSTATUS(st));
        return 0;
    }
    if (strcmp(mode, "exec") == 0) {
        setup();
        execl("/bin/true", "true", (char *)NULL);
        return 1;
    }
    if (strcmp(mode, "_exit") == 0) {
        setup();
        _exit(3);
    }
    if (strcmp(mode, "loop") == 0) {
        setup();
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int said = 0;
        for (;;) {
            CUdeviceptr d;
            CK(cuMemAlloc_v2(&d, 1024));
            CK(cuMemFree_v2(d));
            clock_gettime(CLOCK_MONOTONIC, &t);
            if (!said && t.tv_sec - t0.tv_sec >= 1) {
                printf("ready\n");
                fflush(stdout);
                said = 1;
            }
            usleep(100);
        }
    }
    if (strcmp(mode, "segv") == 0) {
        setup();
        volatile int *p = NULL;
        return *p;
    }
    if (strcmp(mode, "exit") == 0 && argc > 2) {
        setup();
        exit(atoi(argv[2]));
    }
    if (strcmp(mode, "return") == 0 && argc > 2) {
        setup();
        return atoi(argv[2]);
    }
    if (strcmp(mode, "term") == 0) {
        setup();
        raise(SIGTERM);
        return 0;
    }
    if (strcmp(mode, "pause") == 0) {
        int (*pause_fn)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "cuprobe_bench_pause");
        CUdeviceptr d[3];
        setup();
        CK(cuMemAlloc_v2(&d[0], 1024));
        int a = pause_fn ? pause_fn(1) : -19;
        CK(cuMemAlloc_v2(&d[1], 2048));
        int b = pause_fn ? pause_fn(0) : -19;
        CK(cuMemAlloc_v2(&d[2], 3072));
        printf("pause %d resume %d\n", a, b);
        return 0;
    }
    fprintf(stderr, "usage: shim_lifecycle fork-cuda|fork-nocuda|fork-killed|exec|_exit|loop|segv|"
                    "exit N|return N|term|pause\n");
    return 2;
}
