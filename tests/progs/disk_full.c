/*
 * disk_full.c - the file system fills up while a traced program works
 * (tests/sh/writer_nospace.sh).  `disk_full FILL STATUS [hold]`: allocate
 * and free on the fake driver for a while (flushes reach the trace), fill
 * the file system of FILL by writing it until ENOSPC, go on calling the
 * driver until the shim says on stderr that writing stopped (its flush met
 * the full disk; waiting for the message, not a time, keeps a loaded
 * machine from ending first with everything still in the reserve), then
 * exit(STATUS).  `hold`: print "full" and wait to be killed instead of
 * exiting; `segv`: dereference NULL instead (a crash after the disk
 * filled).  FILL "-": no filling, a normal run; FILL "quota": no filling,
 * but the work after it all the same (the trace itself reaches an
 * injected quota: tests/progs/lib/quota_inject.c).
 * Every driver call must still succeed: the shim only stops writing.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_api.h"
#include "cp_test.h"

static void work(CUdeviceptr *d, int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 200; i++) {
            CK(cuMemFree_v2(*d));
            CK(cuMemAlloc_v2(d, 1 << 20));
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* While stderr goes to a pipe: its read end, and the real stderr. */
static int g_pipe_r = -1, g_saved_err = -1;
static char g_said[4096];
static size_t g_n;

static void take(void)
{
    ssize_t r = read(g_pipe_r, g_said + g_n, sizeof g_said - g_n);
    if (r > 0)
        g_n += (size_t)r;
}

/* Pass what was said on to the real stderr, once (atexit too: a failed
 * CK() would otherwise say why into the pipe). */
static void pass_on(void)
{
    if (g_saved_err < 0)
        return;
    take();
    dup2(g_saved_err, 2);
    g_saved_err = -1;
    if (g_n && write(2, g_said, g_n) < 0)
        return;
}

/* Work until the shim says "writing stopped" on stderr (at most 20 s),
 * then pass what it said on to the real stderr. */
static void work_until_stopped(CUdeviceptr *d)
{
    for (int i = 0; i < 400 && !memmem(g_said, g_n, "writing stopped", 15); i++) {
        work(d, 50);
        take();
    }
    pass_on();
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 64;
    int filling = strcmp(argv[1], "-") != 0;
    /* stderr goes to the pipe before the first driver call: with an
     * injected quota the shim may stop writing at its first flush, and a
     * message written before the pipe was there would never be seen (the
     * program would work the full 20 s). */
    int pfd[2];
    if (filling) {
        if (pipe(pfd) < 0 || (g_saved_err = dup(2)) < 0 || dup2(pfd[1], 2) < 0)
            return 67;
        g_pipe_r = pfd[0];
        fcntl(g_pipe_r, F_SETFL, O_NONBLOCK);
        atexit(pass_on);
    }
    CUcontext ctx;
    CUdeviceptr d;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc_v2(&d, 1 << 20));
    work(&d, 300);
    if (!filling) {   /* no filling: a normal run */
        CK(cuMemFree_v2(d));
        return atoi(argv[2]);
    }
    if (strcmp(argv[1], "quota") != 0) {
        int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            return 65;
        static char block[4096];
        memset(block, 'x', sizeof block);
        /* Small writes at the end take the last bytes too. */
        for (size_t sz = sizeof block; sz; sz /= 2)
            while (write(fd, block, sz) == (ssize_t)sz)
                ;
        int e = errno;
        close(fd);
        if (e != ENOSPC && e != EDQUOT)
            return 66;
    }
    work_until_stopped(&d);
    if (argc > 3 && strcmp(argv[3], "segv") == 0) {
        volatile int *null = NULL;
        return *null;
    }
    if (argc > 3 && strcmp(argv[3], "hold") == 0) {
        printf("full\n");
        fflush(stdout);
        for (;;)
            work(&d, 1000);
    }
    CK(cuMemFree_v2(d));
    return atoi(argv[2]);
}
