/*
 * fake_c10.c - built by tests/sh/report_scenarios.sh as libc10_cuda.so: a
 * stand-in for PyTorch's caching allocator library, so that allocation
 * stacks pass through a module of that name.
 */
#include <stddef.h>

typedef unsigned long long CUdeviceptr_t;
extern int cuMemAlloc_v2(CUdeviceptr_t *dptr, size_t bytesize);

__attribute__((visibility("default"), noinline)) CUdeviceptr_t c10_raw_alloc(size_t n)
{
    CUdeviceptr_t d = 0;
    if (cuMemAlloc_v2(&d, n) != 0)
        return 0;
    return d;
}
