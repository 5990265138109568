// nolink
/*
 * fake_gpa.c - resolves the fake driver the way cudart does: dlopen
 * libcuda.so.1, dlsym cuGetProcAddress_v2, probe ("", 0), fetch
 * "cuGetProcAddress" at 11030 and 12000, then resolve everything else through
 * the 12000 pointer and call it.  Every resolved pointer is named with dladdr
 * and compared with the ELF symbol the real driver would hand out.
 *
 *   fake_gpa          full check (driver 13000)
 *   fake_gpa old      with FAKECUDA_DRIVER_VERSION=12000: too-new requests fail
 *   fake_gpa ptds     with CUDA_API_PER_THREAD_DEFAULT_STREAM=1: flags 0 = per-thread
 *   fake_gpa stub     with FAKECUDA_STUB=1: everything returns 34
 * Prints "OK <mode>" and exits 0 on success.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda/fake_api.h"

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);

static gpa2_t gpa;
static int failures;

static const char *sym_name(void *p)
{
    Dl_info info;
    if (!p || !dladdr(p, &info) || info.dli_saddr != p || !info.dli_sname)
        return "(none)";
    return info.dli_sname;
}

/* Resolve (sym, ver, flags) and compare rc, status and the ELF name. */
static void *expect(const char *sym, int ver, cuuint64_t flags, CUresult want_rc,
                    CUdriverProcAddressQueryResult want_st, const char *want_name)
{
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
    CUresult rc = gpa(sym, &p, ver, flags, &st);
    const char *name = rc == CUDA_SUCCESS ? sym_name(p) : (p ? "(non-null)" : "(none)");
    int ok = rc == want_rc && (want_rc == CUDA_ERROR_INVALID_VALUE || want_rc == CUDA_ERROR_STUB_LIBRARY ||
                               st == want_st) &&
             strcmp(name, want_name) == 0;
    printf("%s %s@%d flags=%llu -> rc=%d status=%d %s\n", ok ? "ok  " : "FAIL", sym, ver,
           (unsigned long long)flags, rc, (int)st, name);
    failures += !ok;
    return p;
}

#define FOUND(sym, ver, fl, name) expect(sym, ver, fl, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, name)
#define NOSYM(sym, ver, fl) expect(sym, ver, fl, CUDA_ERROR_NOT_FOUND, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "(none)")
#define TOOOLD(sym, ver, fl) \
    expect(sym, ver, fl, CUDA_ERROR_NOT_FOUND, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, "(none)")

static void check_table(void)
{
    FOUND("cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    FOUND("cuMemAlloc", 13000, 2, "cuMemAlloc_v2");
    NOSYM("cuMemAlloc", 2000, 0);       /* v1 ABI: not implemented */
    TOOOLD("cuMemAlloc", 1000, 0);
    NOSYM("cuNoSuchFunction", 13000, 0);
    FOUND("cuCtxGetDevice", 12090, 0, "cuCtxGetDevice");
    FOUND("cuCtxGetDevice", 13000, 0, "cuCtxGetDevice_v2");
    FOUND("cuCtxSynchronize", 2000, 0, "cuCtxSynchronize");
    FOUND("cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2");
    FOUND("cuCtxCreate", 3020, 0, "cuCtxCreate_v2");
    FOUND("cuCtxCreate", 11040, 0, "cuCtxCreate_v3");
    FOUND("cuCtxCreate", 12050, 0, "cuCtxCreate_v4");
    FOUND("cuMemcpyBatchAsync", 12080, 0, "cuMemcpyBatchAsync");
    FOUND("cuMemcpyBatchAsync", 12080, 2, "cuMemcpyBatchAsync_ptsz");
    FOUND("cuMemcpyBatchAsync", 13000, 0, "cuMemcpyBatchAsync_v2");
    FOUND("cuMemcpyBatchAsync", 13000, 2, "cuMemcpyBatchAsync_v2_ptsz");
    TOOOLD("cuMemcpyBatchAsync", 12060, 0);
    FOUND("cuMemcpy3DBatchAsync", 12080, 0, "cuMemcpy3DBatchAsync");
    FOUND("cuMemcpy3DBatchAsync", 13000, 2, "cuMemcpy3DBatchAsync_v2_ptsz");
    FOUND("cuMemAdvise", 8000, 0, "cuMemAdvise");
    FOUND("cuMemAdvise", 12020, 0, "cuMemAdvise_v2");
    FOUND("cuMemPrefetchAsync", 8000, 2, "cuMemPrefetchAsync_ptsz");
    FOUND("cuMemPrefetchAsync", 12020, 2, "cuMemPrefetchAsync_v2_ptsz");
    FOUND("cuMemHostRegister", 6050, 0, "cuMemHostRegister_v2");
    NOSYM("cuMemHostRegister", 4000, 0);
    FOUND("cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2");
    FOUND("cuDevicePrimaryCtxReset", 11000, 0, "cuDevicePrimaryCtxReset_v2");
    FOUND("cuStreamDestroy", 4000, 0, "cuStreamDestroy_v2");
    FOUND("cuCtxDestroy", 4000, 0, "cuCtxDestroy_v2");
    FOUND("cuCtxPushCurrent", 4000, 0, "cuCtxPushCurrent_v2");
    FOUND("cuCtxPopCurrent", 4000, 0, "cuCtxPopCurrent_v2");
    FOUND("cuMemcpyHtoD", 3020, 0, "cuMemcpyHtoD_v2");
    FOUND("cuMemcpyHtoD", 7000, 2, "cuMemcpyHtoD_v2_ptds");
    FOUND("cuMemcpyHtoDAsync", 7000, 2, "cuMemcpyHtoDAsync_v2_ptsz");
    FOUND("cuMemcpyHtoDAsync", 13000, 1, "cuMemcpyHtoDAsync_v2");
    FOUND("cuMemcpyHtoDAsync", 13000, 0, "cuMemcpyHtoDAsync_v2");
    FOUND("cuMemcpy", 4000, 0, "cuMemcpy");
    FOUND("cuMemcpy", 7000, 2, "cuMemcpy_ptds");
    FOUND("cuMemcpyAsync", 4000, 2, "cuMemcpyAsync");       /* no twin that old */
    FOUND("cuMemcpy2DUnaligned", 7000, 2, "cuMemcpy2DUnaligned_v2_ptds");
    FOUND("cuMemcpy3DPeerAsync", 7000, 2, "cuMemcpy3DPeerAsync_ptsz");
    FOUND("cuMemsetD8", 3020, 0, "cuMemsetD8_v2");
    FOUND("cuMemsetD2D32Async", 7000, 2, "cuMemsetD2D32Async_ptsz");
    FOUND("cuStreamBeginCapture", 10010, 0, "cuStreamBeginCapture_v2");
    FOUND("cuStreamBeginCapture", 10010, 2, "cuStreamBeginCapture_v2_ptsz");
    NOSYM("cuStreamBeginCapture", 10000, 0);
    FOUND("cuDeviceGetUuid", 9020, 0, "cuDeviceGetUuid");
    FOUND("cuDeviceGetUuid", 11040, 0, "cuDeviceGetUuid_v2");
    FOUND("cuLaunchKernel", 4000, 0, "cuLaunchKernel");
    FOUND("cuLaunchKernel", 7000, 2, "cuLaunchKernel_ptsz");
    FOUND("cuLaunchKernelEx", 11060, 2, "cuLaunchKernelEx_ptsz");
    FOUND("cuGraphLaunch", 10000, 2, "cuGraphLaunch_ptsz");
    FOUND("cuMemAllocAsync", 11020, 2, "cuMemAllocAsync_ptsz");
    FOUND("cuMemFreeAsync", 11020, 0, "cuMemFreeAsync");
    FOUND("cuKernelGetParamInfo", 12040, 0, "cuKernelGetParamInfo");
    FOUND("cuStreamGetCtx", 12050, 2, "cuStreamGetCtx_v2_ptsz");
    FOUND("cuGetExportTable", 3000, 0, "cuGetExportTable");
    FOUND("cuInit", 2000, 0, "cuInit");
    expect("cuInit", 13010, 0, CUDA_ERROR_INVALID_VALUE, 0, "(none)");     /* newer than the driver */
}

/* Call through resolved pointers, as cudart would. */
static void exercise(void)
{
    CUresult (*init)(unsigned) = (CUresult (*)(unsigned))FOUND("cuInit", 2000, 0, "cuInit");
    CUresult (*retain)(CUcontext *, CUdevice) =
        (CUresult (*)(CUcontext *, CUdevice))FOUND("cuDevicePrimaryCtxRetain", 7000, 0, "cuDevicePrimaryCtxRetain");
    CUresult (*setcur)(CUcontext) = (CUresult (*)(CUcontext))FOUND("cuCtxSetCurrent", 4000, 0, "cuCtxSetCurrent");
    __typeof__(&cuMemAlloc_v2) alloc = (__typeof__(&cuMemAlloc_v2))FOUND("cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    __typeof__(&cuMemcpyHtoDAsync_v2_ptsz) h2d =
        (__typeof__(&cuMemcpyHtoDAsync_v2_ptsz))FOUND("cuMemcpyHtoDAsync", 7000, 2, "cuMemcpyHtoDAsync_v2_ptsz");
    __typeof__(&cuMemcpyDtoH_v2_ptds) d2h =
        (__typeof__(&cuMemcpyDtoH_v2_ptds))FOUND("cuMemcpyDtoH", 7000, 2, "cuMemcpyDtoH_v2_ptds");
    __typeof__(&cuModuleLoadData) load = (__typeof__(&cuModuleLoadData))FOUND("cuModuleLoadData", 2000, 0,
                                                                              "cuModuleLoadData");
    __typeof__(&cuModuleGetFunction) getf =
        (__typeof__(&cuModuleGetFunction))FOUND("cuModuleGetFunction", 2000, 0, "cuModuleGetFunction");
    __typeof__(&cuLaunchKernel_ptsz) launch =
        (__typeof__(&cuLaunchKernel_ptsz))FOUND("cuLaunchKernel", 7000, 2, "cuLaunchKernel_ptsz");
    __typeof__(&cuCtxGetDevice_v2) getdev =
        (__typeof__(&cuCtxGetDevice_v2))FOUND("cuCtxGetDevice", 13000, 0, "cuCtxGetDevice_v2");
    CUcontext ctx;
    CUdeviceptr d;
    CUmodule m;
    CUfunction f;
    CUdevice dev = -1;
    unsigned v = 7, out[8] = {0}, zero[8] = {0};
    size_t n = 8;
    void *args[] = {&d, &v, &n};
    int ok = init(0) == CUDA_SUCCESS && retain(&ctx, 0) == CUDA_SUCCESS && setcur(ctx) == CUDA_SUCCESS &&
             alloc(&d, sizeof(out)) == CUDA_SUCCESS && h2d(d, zero, sizeof(zero), NULL) == CUDA_SUCCESS &&
             load(&m, "img") == CUDA_SUCCESS && getf(&f, m, "fake_fill_u32") == CUDA_SUCCESS &&
             launch(f, 1, 1, 1, 8, 1, 1, 0, NULL, args, NULL) == CUDA_SUCCESS &&
             d2h(out, d, sizeof(out)) == CUDA_SUCCESS && out[7] == 7 &&
             getdev(&dev, NULL) == CUDA_SUCCESS && dev == 0;
    printf("%s calls through resolved pointers\n", ok ? "ok  " : "FAIL");
    failures += !ok;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "full";
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    gpa2_t boot = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
    if (!boot)
        return 1;
    gpa = boot;
    if (strcmp(mode, "stub") == 0) {
        expect("cuInit", 2000, 0, CUDA_ERROR_STUB_LIBRARY, 0, "(none)");
        int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
        printf("cuInit=%d\n", init(0));
        failures += init(0) != CUDA_ERROR_STUB_LIBRARY;
        goto done;
    }
    NOSYM("", 0, 0);
    void *v1 = FOUND("cuGetProcAddress", 11030, 0, "cuGetProcAddress");
    void *v2 = FOUND("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
    if (!v1 || !v2)
        return 1;
    /* The 4-argument resolver answers too. */
    void *p = NULL;
    if (((gpa1_t)v1)("cuMemFree", &p, 3020, 0) != CUDA_SUCCESS || strcmp(sym_name(p), "cuMemFree_v2") != 0)
        failures++;
    gpa = (gpa2_t)v2;
    if (strcmp(mode, "old") == 0) {
        expect("cuGetProcAddress", 12080, 0, CUDA_ERROR_INVALID_VALUE, 0, "(none)");
        TOOOLD("cuMemcpyBatchAsync", 12000, 0);
        FOUND("cuCtxGetDevice", 12000, 0, "cuCtxGetDevice");
        int ver = 0;
        CUresult (*getver)(int *) = (CUresult (*)(int *))FOUND("cuDriverGetVersion", 2020, 0, "cuDriverGetVersion");
        if (!getver || getver(&ver) != CUDA_SUCCESS || ver != 12000)
            failures++;
        printf("driver=%d\n", ver);
    } else if (strcmp(mode, "ptds") == 0) {
        FOUND("cuMemcpyAsync", 7000, 0, "cuMemcpyAsync_ptsz");
        FOUND("cuMemcpy", 7000, 0, "cuMemcpy_ptds");
        FOUND("cuMemcpyAsync", 7000, 1, "cuMemcpyAsync");
        FOUND("cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    } else {
        check_table();
        exercise();
    }
done:
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("OK %s\n", mode);
    return 0;
}
