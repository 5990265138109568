/*
 * front_run.c - programs for the tests of `cuprobe run` (tests/sh/front_*.sh):
 *   term-stamp   allocate, print "ready", wait; at SIGTERM print "term NS"
 *                (CLOCK_REALTIME) and die of it with the default action
 *   int-count    allocate, print "ready", wait for SIGINT; 0.5 s after the
 *                first print "ints N" (how many arrived) and exit 0
 *   orphan       allocate, fork a child that forks a grandchild and exits at
 *                once; the grandchild (an orphan) allocates, waits for a
 *                flush and ends with a raw exit_group(0): no exit handler,
 *                no END record.  The root waits until it is gone.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_api.h"
#include "cp_test.h"

static volatile sig_atomic_t g_ints;

static void on_dev0(size_t bytes)
{
    CUcontext c;
    CUdeviceptr d;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&c, 0));
    CK(cuCtxSetCurrent(c));
    CK(cuMemAlloc_v2(&d, bytes));
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void on_term(int sig)
{
    struct timespec now;
    char buf[64];
    clock_gettime(CLOCK_REALTIME, &now);
    int n = snprintf(buf, sizeof buf, "term %lld%09ld\n", (long long)now.tv_sec, now.tv_nsec);
    if (write(1, buf, (size_t)n) < 0)
        _exit(3);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_int(int sig)
{
    (void)sig;
    g_ints++;
}

static void ready(void)
{
    printf("ready\n");
    fflush(stdout);
}

/* The grandchild's pid comes back over p; wait until it is reaped (by
 * whoever is its parent now). */
static int orphan(void)
{
    int p[2];
    if (pipe(p) != 0)
        return 1;
    pid_t mid = fork();
    if (mid == 0) {
        pid_t g = fork();
        if (g == 0) {
            on_dev0(1 << 20);
            sleep_ms(300);   /* a flush or more: the trace holds the allocation */
            syscall(SYS_exit_group, 0);
        }
        if (write(p[1], &g, sizeof g) != (ssize_t)sizeof g)
            _exit(1);
        _exit(0);
    }
    pid_t g = -1;
    int st;
    if (mid < 0 || read(p[0], &g, sizeof g) != (ssize_t)sizeof g || waitpid(mid, &st, 0) < 0)
        return 1;
    for (int i = 0; i < 1000 && kill(g, 0) == 0; i++)
        sleep_ms(10);
    printf("grandchild %d gone\n", (int)g);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "term-stamp") == 0) {
        on_dev0(1 << 20);
        signal(SIGTERM, on_term);
        ready();
        for (;;)
            pause();
    }
    if (strcmp(mode, "int-count") == 0) {
        on_dev0(1 << 20);
        signal(SIGINT, on_int);
        ready();
        while (!g_ints)
            pause();
        sleep_ms(500);
        printf("ints %d\n", (int)g_ints);
        return 0;
    }
    if (strcmp(mode, "orphan") == 0) {
        on_dev0(1 << 20);
        return orphan();
    }
    fprintf(stderr, "usage: front_run term-stamp | int-count | orphan\n");
    return 2;
}
