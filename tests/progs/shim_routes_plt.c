/*
 * shim_routes_plt.c - the same work as shim_routes, through plain symbols
 * bound at link time (-lcuda), like Triton's launcher and most C programs.
 */
#include <string.h>

#include "fake_api.h"
#include "cp_test.h"

int main(void)
{
    enum { N = 1 << 16 };
    CUcontext ctx;
    CUdeviceptr d;
    unsigned *pinned, *pageable = malloc(N * 4), *out = malloc(N * 4);
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc_v2(&d, N * 4));
    CK(cuMemHostAlloc((void **)&pinned, N * 4, 0));
    for (unsigned i = 0; i < N; i++)
        pinned[i] = pageable[i] = i * 2654435761u;
    CK(cuMemcpyHtoDAsync_v2(d, pinned, N * 4, NULL));
    CK(cuMemcpyHtoDAsync_v2(d, pageable, N * 4, NULL));
    CK(cuStreamSynchronize(NULL));
    CUmodule m;
    CUfunction fill;
    CK(cuModuleLoadData(&m, "fake"));
    CK(cuModuleGetFunction(&fill, m, "fake_fill_u32"));
    unsigned value = 7;
    size_t n = N / 2;
    void *params[] = { &d, &value, &n };
    for (int i = 0; i < 10; i++)
        CK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CK(cuMemcpyDtoH_v2(out, d, N * 4));
    printf("routes plt: sum %lx\n", cp_test_sum(out, N * 4));
    CK(cuMemFreeHost(pinned));
    CK(cuMemFree_v2(d));
    free(pageable);
    free(out);
    return 0;
}
