/*
 * thread_churn.c - many short-lived threads, each making one driver call
 * on the fake driver: what a thread's first event costs (its buffer, its
 * THREAD record, its call site), as a data loader or a thread pool that
 * keeps replacing its workers pays it.
 *
 *   thread_churn [THREADS [WAVE]]   THREADS (default 20000) in waves of
 *   WAVE (default 8) started together and joined; each makes the primary
 *   context current (cuCtxSetCurrent) and allocates 256 bytes (an ALLOC
 *   event with its call site), which the main thread frees after the wave.
 *   Prints "threads N wall_ms MS per_thread_us US cpu_us_per_thread US
 *   calls_us US faults_per_thread F": wall time, and the process's CPU
 *   time (user + system), which a busy host disturbs less, per thread; the
 *   median over the threads of the time a thread spent in its two calls,
 *   which preemption on a shared host moves least; and the page faults (a
 *   new page of a thread's stack, memory taken fresh) per thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "fake_api.h"
#include "bench_util.h"

static CUcontext g_ctx;

struct slot {
    CUdeviceptr d;
    double ns;      /* the two calls, timed in the thread */
};

static void *worker(void *arg)
{
    struct slot *s = arg;
    double t0 = now();
    CK(cuCtxSetCurrent(g_ctx));
    CK(cuMemAlloc_v2(&s->d, 256));
    s->ns = now() - t0;
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    long wave = argc > 2 ? atol(argv[2]) : 8;
    if (n < 1 || wave < 1 || wave > 1024) {
        fprintf(stderr, "usage: thread_churn [THREADS [WAVE (1..1024)]]\n");
        return 2;
    }
    CUfunction noop;
    bench_start(&g_ctx, &noop);
    pthread_t t[1024];
    struct slot d[1024];
    double *calls = malloc((size_t)n * sizeof *calls);
    if (!calls)
        return 1;
    struct rusage ru0;
    getrusage(RUSAGE_SELF, &ru0);
    double cpu0 = (ru0.ru_utime.tv_sec + ru0.ru_stime.tv_sec) * 1e6 + ru0.ru_utime.tv_usec +
                  ru0.ru_stime.tv_usec;
    double flt0 = (double)ru0.ru_minflt + (double)ru0.ru_majflt;
    double t0 = now();
    for (long done = 0; done < n;) {
        long k = n - done < wave ? n - done : wave;
        for (long i = 0; i < k; i++)
            if (pthread_create(&t[i], NULL, worker, &d[i]) != 0) {
                fprintf(stderr, "pthread_create failed\n");
                return 1;
            }
        for (long i = 0; i < k; i++)
            pthread_join(t[i], NULL);
        for (long i = 0; i < k; i++) {
            CK(cuMemFree_v2(d[i].d));
            calls[done + i] = d[i].ns;
        }
        done += k;
    }
    double ns = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu_us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
                    ru.ru_stime.tv_usec - cpu0;
    double flt = (double)ru.ru_minflt + (double)ru.ru_majflt - flt0;
    qsort(calls, (size_t)n, sizeof *calls, cmp_double);
    printf("threads %ld wall_ms %.1f per_thread_us %.2f cpu_us_per_thread %.2f calls_us %.2f "
           "faults_per_thread %.3f\n", n, ns / 1e6, ns / 1e3 / (double)n, cpu_us / (double)n,
           calls[n / 2] / 1e3, flt / (double)n);
    free(calls);
    return 0;
}
