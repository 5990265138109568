/*
 * fake_selftest.c - checks the fake libcuda.so.1 through ordinary PLT calls
 * (linked with -lcuda, no shim).  Run by tests/sh/fake_driver.sh.
 *
 *   fake_selftest init     print "init=<rc> count=<n>"
 *   fake_selftest info     one line per logical device: name, uuid, pci, mem, cc
 *   fake_selftest basic    allocations, copies, memsets, kernels, pools, VMM,
 *                          pinned memory, pointer attributes, capture/graphs
 *   fake_selftest oom      allocation up to capacity and past it
 *   fake_selftest threads  16 threads allocating/copying/launching at once
 * Prints "OK <mode>" and exits 0 on success.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda/fake_api.h"

#define CHECK(expr, want)                                                                      \
    do {                                                                                       \
        CUresult rc_ = (expr);                                                                 \
        if (rc_ != (want)) {                                                                   \
            fprintf(stderr, "%s:%d: %s = %d, want %d\n", __FILE__, __LINE__, #expr, rc_, want); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
#define OK(expr) CHECK(expr, CUDA_SUCCESS)
#define EXPECT(cond)                                                             \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static CUfunction fk_fn(const char *name)
{
    static CUmodule mod;
    CUfunction f;
    if (!mod)
        OK(cuModuleLoadData(&mod, "anything"));
    OK(cuModuleGetFunction(&f, mod, name));
    return f;
}

static CUcontext setup(int dev)
{
    CUcontext ctx;
    OK(cuInit(0));
    OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(cuCtxSetCurrent(ctx));
    return ctx;
}

static int mode_init(void)
{
    int n = -1;
    CUresult rc = cuInit(0);
    CUresult rc2 = cuDeviceGetCount(&n);
    printf("init=%d count=%d count_rc=%d\n", rc, n, rc2);
    return 0;
}

static int mode_info(void)
{
    int n;
    OK(cuInit(0));
    OK(cuDeviceGetCount(&n));
    for (int i = 0; i < n; i++) {
        char name[64], pci[32];
        CUuuid u;
        size_t mem;
        int maj, min, sms, pageable, uva;
        OK(cuDeviceGetName(name, sizeof(name), i));
        OK(cuDeviceGetUuid_v2(&u, i));
        OK(cuDeviceGetPCIBusId(pci, sizeof(pci), i));
        OK(cuDeviceTotalMem_v2(&mem, i));
        OK(cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, i));
        OK(cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, i));
        OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, i));
        OK(cuDeviceGetAttribute(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, i));
        OK(cuDeviceGetAttribute(&uva, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, i));
        printf("dev=%d name=%s uuid=", i, name);
        for (int k = 0; k < 16; k++)
            printf("%02x", (unsigned char)u.bytes[k]);
        printf(" pci=%s mem=%zu cc=%d.%d sms=%d pageable=%d uva=%d\n", pci, mem, maj, min, sms, pageable, uva);
    }
    return 0;
}

static void check_copies(void)
{
    enum { N = 4096 };
    static unsigned char h1[N], h2[N];
    CUdeviceptr d1, d2;
    CUstream s;
    for (int i = 0; i < N; i++)
        h1[i] = (unsigned char)(i * 7);
    OK(cuStreamCreate(&s, 0));
    OK(cuMemAlloc_v2(&d1, N));
    OK(cuMemAlloc_v2(&d2, N));
    OK(cuMemcpyHtoD_v2(d1, h1, N));
    OK(cuMemcpyDtoDAsync_v2_ptsz(d2, d1, N, s));
    OK(cuMemcpyDtoH_v2(h2, d2, N));
    EXPECT(memcmp(h1, h2, N) == 0);
    OK(cuMemsetD32_v2(d1, 0xabcdef01u, N / 4));
    OK(cuMemcpyDtoHAsync_v2(h2, d1, N, s));
    EXPECT(((unsigned *)h2)[N / 4 - 1] == 0xabcdef01u);
    OK(cuMemsetD2D8Async(d1, 64, 0x5a, 16, 4, s));
    OK(cuMemcpy(((CUdeviceptr)(uintptr_t)h2), d1, N));
    EXPECT(h2[64 * 3 + 15] == 0x5a && h2[64 * 3 + 16] == 0x01);
    /* 2D: 4 rows of 8 bytes from a pitch-16 host buffer. */
    CUDA_MEMCPY2D c2 = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = h1, .srcPitch = 16,
                        .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = d2, .dstPitch = 8,
                        .WidthInBytes = 8, .Height = 4};
    OK(cuMemcpy2D_v2(&c2));
    OK(cuMemcpyDtoH_v2(h2, d2, 32));
    EXPECT(memcmp(h2 + 24, h1 + 48, 8) == 0);
    CUDA_MEMCPY3D c3 = {.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = d1, .srcPitch = 64, .srcHeight = 4,
                        .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = h2, .dstPitch = 64, .dstHeight = 4,
                        .WidthInBytes = 64, .Height = 4, .Depth = 2};
    OK(cuMemcpy3D_v2(&c3));
    /* Device side unknown to the driver: refused, not a crash. */
    CHECK(cuMemcpyHtoD_v2(0x10, h1, 8), CUDA_ERROR_INVALID_VALUE);
    /* Batches: 12.8 ABI reports failIdx; legacy stream is rejected. */
    CUdeviceptr dsts[2] = {d2, d2 + 100}, srcs[2] = {d1, (CUdeviceptr)(uintptr_t)h1};
    size_t sizes[2] = {100, 100}, idx = 0, fail = 7;
    CUmemcpyAttributes at = {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
    OK(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, &idx, 1, &fail, s));
    EXPECT(fail == SIZE_MAX);
    CHECK(cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, &at, &idx, 1, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, &at, &idx, 1, s));
    OK(cuMemcpyDtoH_v2(h2, d2 + 100, 100));
    EXPECT(memcmp(h2, h1, 100) == 0);
    OK(cuMemFree_v2(d1));
    OK(cuMemFree_v2(d2));
    CHECK(cuMemFree_v2(d2 + 1), CUDA_ERROR_INVALID_VALUE);
    OK(cuStreamDestroy_v2(s));
}

static void check_kernels(void)
{
    enum { N = 1000 };
    CUdeviceptr a, b, o;
    float ha[N], hb[N], ho[N];
    for (int i = 0; i < N; i++)
        ha[i] = (float)i, hb[i] = 0.5f;
    OK(cuMemAlloc_v2(&a, sizeof(ha)));
    OK(cuMemAlloc_v2(&b, sizeof(hb)));
    OK(cuMemAlloc_v2(&o, sizeof(ho)));
    OK(cuMemcpyHtoD_v2(a, ha, sizeof(ha)));
    OK(cuMemcpyHtoD_v2(b, hb, sizeof(hb)));
    size_t n = N;
    void *args[] = {&a, &b, &o, &n};
    OK(cuLaunchKernel(fk_fn("fake_add_f32"), 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    float s = 2.0f;
    struct { CUdeviceptr p; float s; size_t n; } packed = {o, s, N};
    size_t psize = sizeof(packed);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize,
                     CU_LAUNCH_PARAM_END};
    OK(cuLaunchKernel_ptsz(fk_fn("fake_scale_f32"), 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra));
    OK(cuMemcpyDtoH_v2(ho, o, sizeof(ho)));
    EXPECT(ho[10] == 21.0f && ho[N - 1] == 2.0f * (N - 1) + 1.0f);
    /* Library/kernel path, param info, cuLaunchKernelEx. */
    CUlibrary lib;
    CUkernel k;
    CUfunction f;
    size_t off, sz, count = 0;
    OK(cuLibraryLoadData(&lib, "x", NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, "fake_fill_u32"));
    OK(cuKernelGetFunction(&f, k));
    while (cuKernelGetParamInfo(k, count, &off, &sz) == CUDA_SUCCESS)
        count++;
    EXPECT(count == 3);
    OK(cuFuncGetParamInfo(f, 1, &off, &sz));
    EXPECT(off == 8 && sz == 4);
    CHECK(cuFuncGetParamInfo(f, 3, &off, &sz), CUDA_ERROR_INVALID_VALUE);
    const char *name;
    OK(cuFuncGetName(&name, f));
    EXPECT(strcmp(name, "fake_fill_u32") == 0);
    unsigned v = 0x12345678;
    size_t n4 = 4;
    void *fargs[] = {&a, &v, &n4};
    CUlaunchConfig cfg = {.gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 4, .blockDimY = 1,
                          .blockDimZ = 1};
    OK(cuLaunchKernelEx(&cfg, f, fargs, NULL));
    unsigned got[5];
    OK(cuMemcpyDtoH_v2(got, a, sizeof(got)));
    EXPECT(got[3] == v && got[4] != v);
    CUmodule m;
    CUfunction nf;
    OK(cuModuleLoadData(&m, "y"));
    CHECK(cuModuleGetFunction(&nf, m, "nope"), CUDA_ERROR_NOT_FOUND);
    OK(cuModuleGetFunction(&nf, m, "fake_noop"));
    OK(cuLaunchCooperativeKernel(nf, 1, 1, 1, 1, 1, 1, 0, NULL, NULL));
    CUdeviceptr bad = 0x1000;
    void *bargs[] = {&bad, &v, &n4};
    CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, bargs, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK(cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, fargs, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFree_v2(a));
    OK(cuMemFree_v2(b));
    OK(cuMemFree_v2(o));
}

static void check_host_and_attrs(CUcontext ctx)
{
    void *ph, *mal = malloc(8192);
    unsigned flags, mt = 99;
    int ord = 99;
    CUdeviceptr d, dp, base;
    size_t size;
    OK(cuMemHostAlloc(&ph, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    OK(cuMemHostGetFlags(&flags, ph));
    EXPECT(flags == CU_MEMHOSTALLOC_DEVICEMAP);
    OK(cuMemHostRegister_v2(mal, 8192, 0));
    CHECK(cuMemHostRegister_v2(mal, 8192, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK(cuMemHostGetFlags(&flags, mal), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemHostGetDevicePointer_v2(&dp, (char *)mal + 10, 0));
    EXPECT(dp == (CUdeviceptr)(uintptr_t)mal + 10);
    OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)ph));
    EXPECT(mt == CU_MEMORYTYPE_HOST);
    OK(cuMemAlloc_v2(&d, 1000));
    CUpointer_attribute at[6] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    CUcontext c = NULL;
    unsigned managed = 9;
    void *data[6] = {&mt, &ord, &c, &managed, &base, &size};
    OK(cuPointerGetAttributes(6, at, data, d + 10));
    EXPECT(mt == CU_MEMORYTYPE_DEVICE && ord == 0 && c == ctx && managed == 0 && base == d && size == 1000);
    char stackbuf[16];
    OK(cuPointerGetAttributes(6, at, data, (CUdeviceptr)(uintptr_t)stackbuf));
    EXPECT(mt == 0 && c == NULL);
    CHECK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)stackbuf),
          CUDA_ERROR_INVALID_VALUE);
    OK(cuMemGetAddressRange_v2(&base, &size, d + 999));
    EXPECT(base == d && size == 1000);
    CUdeviceptr m;
    OK(cuMemAllocManaged(&m, 1 << 20, CU_MEM_ATTACH_GLOBAL));
    OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
    EXPECT(managed == 1);
    OK(cuMemAdvise(m, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, 0));
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    OK(cuMemAdvise_v2(m, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, loc));
    OK(cuMemPrefetchAsync_v2(m, 4096, loc, 0, NULL));
    CHECK(cuMemPrefetchAsync(d, 16, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFree_v2(m));
    OK(cuMemFree_v2(d));
    OK(cuMemHostUnregister(mal));
    CHECK(cuMemHostUnregister(mal), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    OK(cuMemFreeHost(ph));
    free(mal);
}

static void check_pools_and_vmm(void)
{
    CUmemoryPool pool;
    CUdeviceptr p;
    cuuint64_t v;
    size_t fr0, fr1, tot;
    CUstream s;
    OK(cuStreamCreate(&s, 1));
    OK(cuDeviceGetDefaultMemPool(&pool, 0));
    OK(cuMemGetInfo_v2(&fr0, &tot));
    OK(cuMemAllocAsync(&p, 1 << 20, s));
    OK(cuMemFreeAsync(p, s));
    OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
    EXPECT(v == 1 << 20);   /* freed but still reserved until a sync */
    OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
    EXPECT(v == 0);
    OK(cuStreamSynchronize(s));
    OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
    EXPECT(v == 0);
    OK(cuMemGetInfo_v2(&fr1, &tot));
    EXPECT(fr1 == fr0);
    /* VMM: two mappings of one handle alias. */
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}};
    size_t g;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    EXPECT(g == 2u << 20);
    OK(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
    OK(cuMemCreate(&h, g, &prop, 0));
    OK(cuMemGetInfo_v2(&fr1, &tot));
    EXPECT(fr1 == fr0 - g);
    OK(cuMemMap(va, g, 0, h, 0));
    OK(cuMemMap(va + g, g, 0, h, 0));
    OK(cuMemRelease(h));
    CHECK(cuMemsetD8_v2(va, 1, 16), CUDA_ERROR_INVALID_VALUE);  /* no access yet */
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    OK(cuMemSetAccess(va, 2 * g, &acc, 1));
    OK(cuMemsetD8_v2(va, 0x77, 16));
    unsigned char hb[16];
    OK(cuMemcpyDtoH_v2(hb, va + g, 16));
    EXPECT(hb[15] == 0x77);
    int ord;
    OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va + g));
    EXPECT(ord == 0);
    OK(cuMemUnmap(va, 2 * g));
    OK(cuMemAddressFree(va, 2 * g));
    OK(cuMemGetInfo_v2(&fr1, &tot));
    EXPECT(fr1 == fr0);
    OK(cuStreamDestroy_v2(s));
}

static void check_capture(void)
{
    CUstream s;
    CUgraph g;
    CUgraphExec e;
    CUdeviceptr d;
    CUstreamCaptureStatus st;
    unsigned out = 0, v = 42;
    size_t n = 1;
    OK(cuStreamCreate(&s, 0));
    OK(cuMemAlloc_v2(&d, 4));
    OK(cuMemsetD32_v2(d, 0, 1));
    OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(cuStreamIsCapturing(s, &st));
    EXPECT(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    void *args[] = {&d, &v, &n};
    OK(cuLaunchKernel(fk_fn("fake_fill_u32"), 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
    OK(cuMemcpyDtoH_v2(&out, d, 4));
    EXPECT(out == 0);       /* captured, not run */
    OK(cuStreamEndCapture(s, &g));
    OK(cuGraphInstantiateWithFlags(&e, g, 0));
    OK(cuGraphLaunch(e, s));
    OK(cuGraphDestroy(g));
    OK(cuMemcpyDtoH_v2(&out, d, 4));
    EXPECT(out == 42);
    OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT(g == NULL);
    OK(cuGraphExecDestroy(e));
    OK(cuMemFree_v2(d));
    OK(cuStreamDestroy_v2(s));
}

static int mode_basic(void)
{
    int drv;
    CHECK(cuMemAlloc_v2(&(CUdeviceptr){0}, 16), CUDA_ERROR_NOT_INITIALIZED);
    OK(cuDriverGetVersion(&drv));
    CUcontext ctx = setup(0);
    const char *str;
    OK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &str));
    EXPECT(strcmp(str, "CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CHECK(cuGetErrorString((CUresult)12345, &str), CUDA_ERROR_INVALID_VALUE);
    check_copies();
    check_kernels();
    check_host_and_attrs(ctx);
    check_pools_and_vmm();
    check_capture();
    /* Created contexts stack on top of the primary one. */
    CUcontext c2, cur;
    CUdevice dev;
    OK(cuCtxCreate_v4(&c2, NULL, 0, 0));
    OK(cuCtxGetCurrent(&cur));
    EXPECT(cur == c2);
    OK(cuCtxGetDevice_v2(&dev, ctx));
    OK(cuCtxDestroy_v2(c2));
    OK(cuCtxGetCurrent(&cur));
    EXPECT(cur == ctx);
    OK(cuCtxSynchronize_v2(NULL));
    CHECK(cuCtxPushCurrent_v2(c2), CUDA_ERROR_INVALID_CONTEXT);
    return 0;
}

static int mode_oom(void)
{
    size_t fr, tot;
    CUdeviceptr a, b;
    setup(0);
    OK(cuMemGetInfo_v2(&fr, &tot));
    printf("free=%zu total=%zu\n", fr, tot);
    CHECK(cuMemAlloc_v2(&a, fr + 256), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemAlloc_v2(&a, fr - (1 << 20)));
    CHECK(cuMemAlloc_v2(&b, 2 << 20), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemAlloc_v2(&b, 1 << 20));
    OK(cuMemGetInfo_v2(&fr, &tot));
    EXPECT(fr == 0);
    CHECK(cuMemAllocAsync(&b, 256, NULL), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemFree_v2(a));
    OK(cuMemAlloc_v2(&a, 1 << 20));
    return 0;
}

static CUcontext g_ctx;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    unsigned buf[256], back[256];
    OK(cuCtxSetCurrent(g_ctx));
    for (int it = 0; it < 200; it++) {
        CUdeviceptr d;
        OK(cuMemAlloc_v2(&d, sizeof(buf) + (size_t)it * 16));
        for (int i = 0; i < 256; i++)
            buf[i] = (unsigned)(id * 100000 + it * 256 + i);
        OK(cuMemcpyHtoDAsync_v2(d, buf, sizeof(buf), NULL));
        OK(cuMemcpyDtoH_v2(back, d, sizeof(back)));
        EXPECT(memcmp(buf, back, sizeof(buf)) == 0);
        OK(cuMemFree_v2(d));
    }
    return NULL;
}

static int mode_threads(void)
{
    pthread_t t[16];
    g_ctx = setup(0);
    for (int i = 0; i < 16; i++)
        EXPECT(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < 16; i++)
        pthread_join(t[i], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "basic";
    int rc = strcmp(mode, "init") == 0      ? mode_init()
             : strcmp(mode, "info") == 0    ? mode_info()
             : strcmp(mode, "oom") == 0     ? mode_oom()
             : strcmp(mode, "threads") == 0 ? mode_threads()
                                            : mode_basic();
    printf("OK %s\n", mode);
    return rc;
}
