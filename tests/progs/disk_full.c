/*
 * disk_full.c - the file system fills up while a traced program works
 * (tests/sh/writer_nospace.sh).  `disk_full FILL STATUS [hold]`: allocate
 * and free on the fake driver for a while (flushes reach the trace), fill
 * the file system of FILL by writing it until ENOSPC, go on calling the
 * driver (the shim's next flush meets the full disk), then exit(STATUS).
 * `hold`: print "full" and wait to be killed instead of exiting; `segv`:
 * dereference NULL instead (a crash after the disk filled).  FILL "-": no
 * filling, a normal run.
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

int main(int argc, char **argv)
{
    if (argc < 3)
        return 64;
    CUcontext ctx;
    CUdeviceptr d;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc_v2(&d, 1 << 20));
    work(&d, 300);
    if (strcmp(argv[1], "-") == 0) {   /* no filling: a normal run */
        CK(cuMemFree_v2(d));
        return atoi(argv[2]);
    }
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
    work(&d, 400);
    if (argc > 3 && strcmp(argv[3], "hold") == 0) {
        printf("full\n");
        fflush(stdout);
        for (;;)
            work(&d, 1000);
    }
    if (argc > 3 && strcmp(argv[3], "segv") == 0) {
        volatile int *null = NULL;
        return *null;
    }
    CK(cuMemFree_v2(d));
    return atoi(argv[2]);
}
