/*
 * memory_growth.c - a "training loop" that keeps 1 MiB per step (like
 * losses.append(loss)) while its temporaries come and go; everything is
 * freed at the end, so this is growth, not a leak.  Each step launches a
 * kernel: the program keeps working while its memory grows.
 */
#include "scenario.h"

#define STEPS 200

static CUdeviceptr keep_history(void)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, MIB));
    return d;
}

int main(void)
{
    static CUdeviceptr hist[STEPS];
    sc_start(0);
    CUfunction fill = sc_kernel("fake_fill_u32");
    unsigned v = 1;
    size_t n = 1024;
    for (int i = 0; i < STEPS; i++) {
        CUdeviceptr tmp;
        CK(cuMemAlloc_v2(&tmp, 4 * MIB));
        void *p[] = { &tmp, &v, &n };
        CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
        hist[i] = keep_history();
        CK(cuMemFree_v2(tmp));
    }
    for (int i = 0; i < STEPS; i++)
        CK(cuMemFree_v2(hist[i]));
    return 0;
}
