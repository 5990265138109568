/*
 * kill_window.c - how much of a trace a SIGKILL loses when the machine is
 * oversubscribed.
 *
 *   kill_window run THREADS FILE (under the shim) THREADS threads, each a
 *                                CPU-bound loop that allocates and frees
 *                                device memory now and then; after each
 *                                free returns, the thread stores the time in
 *                                its slot of FILE (mmap'd, survives the
 *                                kill); prints "ready" after the first
 *                                second, then runs until killed
 *   kill_window kill PID MS      (plain) sleep MS ms, SIGKILL PID
 *   kill_window last FILE        (plain) the latest time in FILE: the last
 *                                record the program made before it died
 *
 * bench/kill_window.sh runs them and compares that with the last record
 * the trace kept: the records a SIGKILL lost (a process that was not
 * scheduled before the kill made no records, and lost none).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "fake_api.h"

static CUcontext g_ctx;
static volatile uint64_t *g_slots;   /* one per thread, 64 bytes apart */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *worker(void *arg)
{
    volatile uint64_t sink = (uintptr_t)arg;
    volatile uint64_t *slot = g_slots + 8 * (uintptr_t)arg;
    cuCtxSetCurrent(g_ctx);
    for (;;) {
        /* CPU-bound work between driver calls, as a training step's Python. */
        for (int i = 0; i < 20000; i++)
            sink = sink * 6364136223846793005ull + 1442695040888963407ull;
        CUdeviceptr d;
        if (cuMemAlloc_v2(&d, 4096) == CUDA_SUCCESS)
            cuMemFree_v2(d);
        *slot = now_ns();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "kill") == 0) {
        pid_t pid = (pid_t)atoi(argv[2]);
        long ms = atol(argv[3]);
        struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
        nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "last") == 0) {
        FILE *f = fopen(argv[2], "rb");
        uint64_t v, best = 0;
        while (f && fread(&v, sizeof v, 1, f) == 1)
            if (v > best)
                best = v;
        printf("%llu\n", (unsigned long long)best);
        return f ? 0 : 1;
    }
    if (argc != 4 || strcmp(argv[1], "run") != 0) {
        fprintf(stderr, "usage: kill_window run THREADS FILE | kill PID MS | last FILE\n");
        return 2;
    }
    int n = atoi(argv[2]);
    int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0600);
    size_t sz = (size_t)(n > 0 ? n : 1) * 64;
    if (fd < 0 || ftruncate(fd, (off_t)sz) != 0)
        return 1;
    g_slots = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (g_slots == MAP_FAILED)
        return 1;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&g_ctx, 0) != CUDA_SUCCESS)
        return 1;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, (void *)(uintptr_t)i) != 0)
            return 1;
    }
    sleep(1);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
