/*
 * cthread.c - a tiny library for tests/py/pystack_cases.py, compiled by
 * tests/sh/pystack_e2e.sh (cc -shared -fPIC ... -lcuda -lpthread): threads
 * started by C code.
 *   cpt_alloc_in_c_thread(ctx, bytes): a pthread that never ran Python makes
 *     ctx current and calls cuMemAlloc_v2 itself (through the PLT, so the
 *     preloaded shim sees it).
 *   cpt_call_in_c_thread(fn): a pthread that calls fn, a ctypes callback
 *     (ctypes gives the thread a Python thread state for the call).
 *   cpt_autograd_step(ctx, fn, launches, bytes): what PyTorch's autograd
 *     engine does for one backward pass on a CUDA device: its one thread
 *     for the device (started on first use, named pt_autograd_0, never
 *     running Python) launches fn `launches` times and allocates `bytes`
 *     (kept), while the caller waits.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>

int cuCtxSetCurrent(void *ctx);
int cuMemAlloc_v2(unsigned long long *dptr, size_t bytes);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, void **extra);

struct cpt_job {
    void *ctx;
    size_t bytes;
    int rc;
};

static void *cpt_alloc_main(void *arg)
{
    struct cpt_job *j = arg;
    unsigned long long p = 0;
    j->rc = cuCtxSetCurrent(j->ctx);
    if (j->rc == 0)
        j->rc = cuMemAlloc_v2(&p, j->bytes);
    return NULL;
}

int cpt_alloc_in_c_thread(void *ctx, size_t bytes)
{
    struct cpt_job j = { ctx, bytes, -1 };
    pthread_t t;
    if (pthread_create(&t, NULL, cpt_alloc_main, &j))
        return -1;
    pthread_join(t, NULL);
    return j.rc;
}

static void *cpt_call_main(void *arg)
{
    ((void (*)(void))arg)();
    return NULL;
}

int cpt_call_in_c_thread(void (*fn)(void))
{
    pthread_t t;
    if (pthread_create(&t, NULL, cpt_call_main, (void *)fn))
        return -1;
    pthread_join(t, NULL);
    return 0;
}

static struct cpt_engine {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started, pending;
    void *ctx, *fn;
    int launches, rc;
    size_t bytes;
} cpt_eng = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, NULL, 0, 0, 0 };

static void *cpt_engine_main(void *arg)
{
    struct cpt_engine *e = arg;
    pthread_setname_np(pthread_self(), "pt_autograd_0");
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->pending)
            pthread_cond_wait(&e->cv, &e->mu);
        unsigned long long p = 0;
        int rc = cuCtxSetCurrent(e->ctx);
        for (int i = 0; rc == 0 && i < e->launches; i++)
            rc = cuLaunchKernel(e->fn, 1, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL);
        if (rc == 0 && e->bytes)
            rc = cuMemAlloc_v2(&p, e->bytes);
        e->rc = rc;
        e->pending = 0;
        pthread_cond_broadcast(&e->cv);
    }
    return NULL;
}

int cpt_autograd_step(void *ctx, void *fn, int launches, size_t bytes)
{
    struct cpt_engine *e = &cpt_eng;
    pthread_mutex_lock(&e->mu);
    if (!e->started) {
        pthread_t t;
        if (pthread_create(&t, NULL, cpt_engine_main, e)) {
            pthread_mutex_unlock(&e->mu);
            return -1;
        }
        pthread_detach(t);
        e->started = 1;
    }
    e->ctx = ctx;
    e->fn = fn;
    e->launches = launches;
    e->bytes = bytes;
    e->pending = 1;
    pthread_cond_broadcast(&e->cv);
    while (e->pending)
        pthread_cond_wait(&e->cv, &e->mu);
    int rc = e->rc;
    pthread_mutex_unlock(&e->mu);
    return rc;
}
