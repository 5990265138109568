// nolink
/*
 * shim_routes.c - reach the driver by each route a real program uses and do
 * the same work through it: allocate, pin, copy from pinned and pageable
 * memory, launch a kernel, free.  Prints a checksum of the results, so a run
 * under the shim can be compared with a plain one.
 *
 *   shim_routes plt     plain symbols (the program links libcuda)
 *   shim_routes dlsym   dlopen("libcuda.so.1") + dlsym of exact ELF names
 *   shim_routes gpa     like cudart: dlsym("cuGetProcAddress_v2"), ask it for
 *                       "cuGetProcAddress" at 11030 and 12000, resolve the
 *                       rest through the 12000 pointer
 *   shim_routes gpa1    the CUDA 11.3 resolver (4 arguments)
 *   shim_routes ptsz    like gpa, with per-thread default stream flags
 *
 * Built without -lcuda: the plt mode is tests/progs/shim_routes_plt.c.
 */
#include <dlfcn.h>
#include <string.h>

#include "fake_api.h"
#include "cp_test.h"

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t,
                           CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);

struct api {
    CUresult (*init)(unsigned);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set)(CUcontext);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free_)(CUdeviceptr);
    CUresult (*host_alloc)(void **, size_t, unsigned);
    CUresult (*free_host)(void *);
    CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*sync)(CUstream);
    CUresult (*load)(CUmodule *, const void *);
    CUresult (*getfn)(CUfunction *, CUmodule, const char *);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
};

static void *h;
static gpa2_t gpa2;
static gpa1_t gpa1;
static cuuint64_t gpa_flags;

static void *get(const char *base, const char *elf, int ver)
{
    void *p = NULL;
    if (gpa2) {
        CUdriverProcAddressQueryResult st;
        CK(gpa2(base, &p, ver, gpa_flags, &st));
    } else if (gpa1) {
        CK(gpa1(base, &p, ver, gpa_flags));
    } else {
        p = dlsym(h, elf);
    }
    if (!p) {
        fprintf(stderr, "cannot resolve %s\n", elf);
        exit(11);
    }
    return p;
}

static void bootstrap(const char *mode)
{
    h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(12);
    }
    if (strcmp(mode, "dlsym") == 0)
        return;
    if (strcmp(mode, "gpa1") == 0) {
        gpa1_t boot = (gpa1_t)dlsym(h, "cuGetProcAddress");
        CK(boot("cuGetProcAddress", (void **)&gpa1, 11030, 0));
        return;
    }
    /* cudart's own sequence (interposition.md, E1). */
    gpa2_t boot = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
    CUdriverProcAddressQueryResult st;
    void *p11 = NULL;
    CK(boot("cuGetProcAddress", &p11, 11030, 0, &st));
    CK(boot("cuGetProcAddress", (void **)&gpa2, 12000, 0, &st));
    if (strcmp(mode, "ptsz") == 0)
        gpa_flags = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    /* The 11030 answer must be a 4-argument resolver that works. */
    void *probe = NULL;
    CK(((gpa1_t)p11)("cuInit", &probe, 2000, 0));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "dlsym";
    struct api a;
    bootstrap(mode);
    a.init = get("cuInit", "cuInit", 2000);
    a.retain = get("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", 7000);
    a.set = get("cuCtxSetCurrent", "cuCtxSetCurrent", 4000);
    a.alloc = get("cuMemAlloc", "cuMemAlloc_v2", 3020);
    a.free_ = get("cuMemFree", "cuMemFree_v2", 3020);
    a.host_alloc = get("cuMemHostAlloc", "cuMemHostAlloc", 2020);
    a.free_host = get("cuMemFreeHost", "cuMemFreeHost", 2000);
    /* Per-thread variants exist from CUDA 7.0: cudart asks for them at 7000. */
    a.htod_async = get("cuMemcpyHtoDAsync", gpa_flags ? "cuMemcpyHtoDAsync_v2_ptsz"
                                                      : "cuMemcpyHtoDAsync_v2",
                       gpa_flags ? 7000 : 3020);
    a.dtoh = get("cuMemcpyDtoH", "cuMemcpyDtoH_v2", 3020);
    a.sync = get("cuStreamSynchronize", "cuStreamSynchronize", 2000);
    a.load = get("cuModuleLoadData", "cuModuleLoadData", 2000);
    a.getfn = get("cuModuleGetFunction", "cuModuleGetFunction", 2000);
    a.launch = get("cuLaunchKernel", "cuLaunchKernel", 4000);

    enum { N = 1 << 16 };
    CUcontext ctx;
    CUdeviceptr d;
    unsigned *pinned, *pageable = malloc(N * 4), *out = malloc(N * 4);
    CK(a.init(0));
    CK(a.retain(&ctx, 0));
    CK(a.set(ctx));
    CK(a.alloc(&d, N * 4));
    CK(a.host_alloc((void **)&pinned, N * 4, 0));
    for (unsigned i = 0; i < N; i++)
        pinned[i] = pageable[i] = i * 2654435761u;
    CK(a.htod_async(d, pinned, N * 4, NULL));       /* pinned: fine */
    CK(a.htod_async(d, pageable, N * 4, NULL));     /* pageable: the finding */
    CK(a.sync(NULL));
    CUmodule m;
    CUfunction fill;
    CK(a.load(&m, "fake"));
    CK(a.getfn(&fill, m, "fake_fill_u32"));
    unsigned value = 7;
    size_t n = N / 2;
    void *params[] = { &d, &value, &n };
    for (int i = 0; i < 10; i++)
        CK(a.launch(fill, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CK(a.dtoh(out, d, N * 4));
    printf("routes %s: sum %lx\n", mode, cp_test_sum(out, N * 4));
    CK(a.free_host(pinned));
    CK(a.free_(d));
    free(pageable);
    free(out);
    return 0;
}
