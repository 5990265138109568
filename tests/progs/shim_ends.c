/*
 * shim_ends.c - programs that end, or treat their descriptors, in ways the
 * shim must see truthfully (tests/sh/shim_ends.sh).
 *
 *   quick N        allocate, register an at_quick_exit handler that
 *                  allocates 2 KiB, allocate 3 KiB, then quick_exit(N)
 *                  (no atexit handlers, no destructors)
 *   segv-handled   allocate, fault on NULL inside a SIGSEGV handler's
 *                  sigsetjmp, recover with siglongjmp, allocate 5 KiB,
 *                  exit 0
 *   closefds FILE [DIR]  allocate, remove every *.trace file of DIR when
 *                  given (the trace then cannot be opened again), close
 *                  every descriptor from 3 up (as daemons do), open FILE (it
 *                  takes the lowest number), write to it and allocate 12345
 *                  bytes at a time for 400 ms, exit 0
 *   dup2 FILE      allocate, open FILE and dup2() it onto every other open
 *                  descriptor from 3 up (a launcher's redirections), then as
 *                  closefds
 * FILE must hold only what the program wrote to it ("mine" lines).
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fake_api.h"
#include "cp_test.h"

static void alloc(size_t n)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, n));
}

static void setup(void)
{
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    alloc(4096);
}

static void on_quick_exit(void)
{
    alloc(2048);
}

static sigjmp_buf g_jb;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(g_jb, 1);
}

static int open_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur > 65536)
        return 65536;
    return (int)rl.rlim_cur;
}

/* Remove dir's *.trace files. */
static void remove_traces(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    while (d && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 6 && strcmp(e->d_name + n - 6, ".trace") == 0 &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
            unlink(path);
    }
    if (d)
        closedir(d);
}

/* Write "mine" lines to fd and allocate for ms milliseconds (several of
 * the shim's flushes), then exit 0. */
static int work(int fd, int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if (write(fd, "mine\n", 5) != 5)
            return 3;
        alloc(12345);
        struct timespec nap = {0, 5000000};
        nanosleep(&nap, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "quick") == 0 && argc > 2) {
        setup();
        at_quick_exit(on_quick_exit);
        alloc(3072);
        quick_exit(atoi(argv[2]));
    }
    if (strcmp(mode, "segv-handled") == 0) {
        setup();
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_segv;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
        if (sigsetjmp(g_jb, 1) == 0) {
            volatile int *null = NULL;
            return *null;
        }
        alloc(5120);
        return 0;
    }
    if ((strcmp(mode, "closefds") == 0 || strcmp(mode, "dup2") == 0) && argc > 2) {
        setup();
        int limit = open_limit(), fd;
        if (strcmp(mode, "closefds") == 0) {
            if (argc > 3)
                remove_traces(argv[3]);
            for (fd = 3; fd < limit; fd++)
                close(fd);
            fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        } else {
            fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
            for (int k = 3; fd >= 0 && k < limit; k++)
                if (k != fd && fcntl(k, F_GETFD) >= 0 && dup2(fd, k) != k)
                    return 4;
        }
        if (fd < 0)
            return 5;
        return work(fd, 400);
    }
    fprintf(stderr, "usage: shim_ends quick N|segv-handled|closefds FILE [DIR]|dup2 FILE\n");
    return 2;
}
