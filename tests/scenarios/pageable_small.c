/*
 * pageable_small.c - 12 non-blocking downloads of an 80-byte scalar into
 * pageable memory, nothing synchronised right after: pageable, but far too
 * little to matter (under 1 MiB and 1 ms at the site): info, not warning.
 */
#include "scenario.h"

int main(void)
{
    sc_start(0);
    CUdeviceptr d;
    CUstream s;
    char host[80];
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc_v2(&d, MIB));
    for (int i = 0; i < 12; i++) {
        CK(cuMemcpyDtoHAsync_v2(host, d, sizeof host, s));
        CK(cuMemsetD8Async(d, 0, 4096, s));
    }
    CK(cuStreamSynchronize(s));
    CK(cuMemFree_v2(d));
    CK(cuStreamDestroy_v2(s));
    return 0;
}
