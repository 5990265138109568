/*
 * leak_small.c - leaks that cost nothing in this run (severity
 * from cost): a 4 KiB buffer and 12 per-stream buffers of 64 KiB from one
 * helper, all taken at set-up (no kernel launched between them) and never
 * freed, then a training loop; and a context destroyed with 64 KiB still in
 * it.  0.07% of the 1 GiB card, no site leaking every iteration, no
 * allocation failed: the driver frees it all, so both leak findings are
 * info and say so.  Before the rule any leaked byte was a warning.
 */
#include "scenario.h"

#define NSTREAMS 12

static CUdeviceptr stream_buffer(void)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, 64 << 10));
    return d;
}

static void step(int i)
{
    (void)i;
}

int main(void)
{
    CUcontext ctx;
    CUdeviceptr small, per_stream[NSTREAMS], lost;
    sc_start(0);
    CK(cuMemAlloc_v2(&small, 4 << 10));
    for (int i = 0; i < NSTREAMS; i++)
        per_stream[i] = stream_buffer();
    (void)per_stream;           /* kept for the process's life, never freed */
    CK(cuMemFree_v2(sc_train(50, step)));
    CK(cuCtxCreate_v2(&ctx, 0, 0));
    CK(cuMemAlloc_v2(&lost, 64 << 10));
    CK(cuCtxDestroy_v2(ctx));
    return 0;
}
