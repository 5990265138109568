/*
 * cthread.c - a tiny library for tests/py/pystack_cases.py, compiled by
 * tests/sh/pystack_e2e.sh (cc -shared -fPIC ... -lcuda -lpthread): threads
 * started by C code.
 *   cpt_alloc_in_c_thread(ctx, bytes): a pthread that never ran Python makes
 *     ctx current and calls cuMemAlloc_v2 itself (through the PLT, so the
 *     preloaded shim sees it).
 *   cpt_call_in_c_thread(fn): a pthread that calls fn, a ctypes callback
 *     (ctypes gives the thread a Python thread state for the call).
 */
#include <pthread.h>
#include <stddef.h>

int cuCtxSetCurrent(void *ctx);
int cuMemAlloc_v2(unsigned long long *dptr, size_t bytes);

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
