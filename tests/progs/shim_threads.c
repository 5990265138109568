/*
 * shim_threads.c - 16 threads at once, each with its own stream: allocate,
 * copy in, launch, copy out, free, ROUNDS times.  Every thread checks its
 * own bytes; the test checks that the trace holds exactly
 * 16 * ROUNDS allocations, frees and copies of each direction.
 */
#include <pthread.h>
#include <string.h>

#include "fake_api.h"
#include "cp_test.h"

#define THREADS 16
#define ROUNDS 200

static CUcontext ctx;
static CUfunction fill;

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg, buf[256], out[256];
    CUstream s;
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, 0));
    for (int r = 0; r < ROUNDS; r++) {
        CUdeviceptr d;
        for (unsigned i = 0; i < 256; i++)
            buf[i] = id * 1000 + (unsigned)r + i;
        CK(cuMemAlloc_v2(&d, sizeof(buf)));
        CK(cuMemcpyHtoDAsync_v2(d, buf, sizeof(buf), s));
        unsigned v = id;
        size_t n = 8;
        void *p[] = { &d, &v, &n };
        CK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
        CK(cuMemcpyDtoHAsync_v2(out, d, sizeof(out), s));
        CK(cuStreamSynchronize(s));
        for (unsigned i = 0; i < 256; i++)
            if (out[i] != (i < 8 ? id : buf[i])) {
                fprintf(stderr, "thread %u pass %d: wrong byte at %u\n", id, r, i);
                exit(2);
            }
        CK(cuMemFree_v2(d));
    }
    CK(cuStreamDestroy_v2(s));
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    CUmodule m;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&m, "fake"));
    CK(cuModuleGetFunction(&fill, m, "fake_fill_u32"));
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("threads ok: %d x %d\n", THREADS, ROUNDS);
    return 0;
}
