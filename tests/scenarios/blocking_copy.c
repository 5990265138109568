/*
 * blocking_copy.c - a training loop that calls .item() every step: a
 * kernel, then a synchronous 4-byte device-to-host copy and a context
 * synchronisation, 20 times.
 */
#include "scenario.h"

static float loss_item(CUdeviceptr loss)
{
    float v;
    CK(cuMemcpyDtoH_v2(&v, loss, sizeof v));
    return v;
}

int main(void)
{
    CUdeviceptr buf;
    sc_start(0);
    CK(cuMemAlloc_v2(&buf, MIB));
    CUfunction fill = sc_kernel("fake_fill_u32");
    unsigned v = 1;
    size_t n = 1024;
    void *p[] = { &buf, &v, &n };
    float sum = 0;
    for (int i = 0; i < 20; i++) {
        CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
        sum += loss_item(buf);
        CK(cuCtxSynchronize());
    }
    printf("%f\n", sum);
    CK(cuMemFree_v2(buf));
    return 0;
}
