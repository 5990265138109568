/*
 * demo_train.c - the program `make demo` traces: a toy "training loop" on
 * two fake GPUs with the mistakes cuprobe exists to find:
 *   - the input batch is copied with an async copy from pageable memory
 *     (non_blocking=True without pin_memory), so the copy blocks;
 *   - one step hands a buffer of GPU 1 to a kernel running on GPU 0;
 *   - an activation buffer allocated every step is never freed (a leak that
 *     keeps growing);
 *   - the loss is read back synchronously every step (.item()).
 */
#include <string.h>

#include "fake_api.h"
#include "cp_test.h"

#define STEPS 40
#define BATCH (4u << 20)

int main(void)
{
    CUcontext c0, c1;
    CUmodule m;
    CUfunction scale;
    CUdeviceptr weights, input, other;
    CUstream s;
    float *batch = malloc(BATCH), loss = 0;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&c0, 0));
    CK(cuDevicePrimaryCtxRetain(&c1, 1));
    CK(cuCtxSetCurrent(c1));
    CK(cuMemAlloc_v2(&other, 1 << 20));            /* lives on GPU 1 */
    CK(cuCtxSetCurrent(c0));
    CK(cuStreamCreate(&s, 0));
    CK(cuModuleLoadData(&m, "demo"));
    CK(cuModuleGetFunction(&scale, m, "fake_scale_f32"));
    CK(cuMemAlloc_v2(&weights, 64u << 20));
    CK(cuMemAlloc_v2(&input, BATCH));
    for (int step = 0; step < STEPS; step++) {
        for (unsigned i = 0; i < BATCH / 4; i += 1024)
            batch[i] = (float)step;
        CK(cuMemcpyHtoDAsync_v2(input, batch, BATCH, s));     /* pageable! */
        CUdeviceptr act;
        CK(cuMemAlloc_v2(&act, 2u << 20));                     /* never freed */
        CUdeviceptr target = step == 7 ? other : input;        /* wrong GPU once */
        float f = 0.5f;
        size_t n = 1024;
        void *p[] = { &target, &f, &n };
        CK(cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
        CK(cuMemcpyDtoH_v2(&loss, input, sizeof(loss)));       /* .item() */
    }
    printf("demo: %d steps, last loss %.3f\n", STEPS, loss);
    CK(cuMemFree_v2(input));
    CK(cuMemFree_v2(weights));
    return 0;
}
