/*
 * pageable_async_copy.c - "non_blocking" copies from and to malloc'd
 * memory: 20 host-to-device and 2 device-to-host async copies with a
 * pageable host side (flagged), and the same from pinned memory (not).
 */
#include <string.h>

#include "scenario.h"

static void upload(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
    CK(cuMemcpyHtoDAsync_v2(d, h, n, s));
}

int main(void)
{
    sc_start(0);
    CUstream s;
    CUdeviceptr d;
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc_v2(&d, 4 * MIB));
    char *pageable = malloc(4 * MIB);
    void *pinned;
    CK(cuMemHostAlloc(&pinned, 4 * MIB, 0));
    memset(pageable, 1, 4 * MIB);
    for (int i = 0; i < 20; i++) {
        upload(d, pageable, 4 * MIB, s);
        upload(d, pinned, 4 * MIB, s);
    }
    for (int i = 0; i < 2; i++) {
        CK(cuMemcpyDtoHAsync_v2(pageable, d, MIB, s));
        CK(cuMemcpyDtoHAsync_v2(pinned, d, MIB, s));
    }
    CK(cuStreamSynchronize(s));
    CK(cuMemFree_v2(d));
    CK(cuMemFreeHost(pinned));
    CK(cuStreamDestroy_v2(s));
    free(pageable);
    return 0;
}
