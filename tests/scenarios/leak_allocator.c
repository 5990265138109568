/*
 * leak_allocator.c - a caching allocator's segments alive at exit: four
 * 20 MiB segments taken through libc10_cuda.so (a stand-in built by the
 * test, path in SC_C10) are never returned, as PyTorch never returns its
 * cache.  That is "held by allocator", not a leak.
 */
#include <dlfcn.h>

#include "scenario.h"

int main(void)
{
    sc_start(0);
    const char *path = getenv("SC_C10");
    void *h = path ? dlopen(path, RTLD_NOW) : NULL;
    CUdeviceptr (*raw_alloc)(size_t) = h ? (CUdeviceptr(*)(size_t))dlsym(h, "c10_raw_alloc")
                                         : NULL;
    if (!raw_alloc) {
        fprintf(stderr, "no allocator library: %s\n", dlerror());
        return 1;
    }
    for (int i = 0; i < 4; i++)
        if (!raw_alloc(20 * MIB))
            return 1;
    return 0;
}
