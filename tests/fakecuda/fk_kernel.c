/*
 * fk_kernel.c - modules, libraries and kernel launches of the fake driver.
 *
 * Any image loads (cuModuleLoadData / cuLibraryLoadData accept anything
 * but PTX newer than the driver, see fk_ptx_too_new()) and yields the same
 * built-in kernels, run on the host when launched:
 *   fake_fill_u32 (CUdeviceptr dst, unsigned value, size_t n)
 *   fake_add_f32  (CUdeviceptr a, CUdeviceptr b, CUdeviceptr out, size_t n)
 *   fake_scale_f32(CUdeviceptr p, float s, size_t n)
 *   fake_noop     ()
 * A name may carry a suffix after '@' ("fake_noop@_ZN2at6native..."): the
 * same kernel under a long, mangled-looking name, as real libraries have.
 * They behave like grid-stride loops: all n elements are processed whatever
 * the grid.  Memory is only required to be known to the driver (any device,
 * pinned host, managed); unknown memory fails the launch with
 * CUDA_ERROR_ILLEGAL_ADDRESS instead of crashing the process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fk_internal.h"

#define FK_MAGIC_MODULE 0x4d4f4431u
#define FK_MAGIC_LIBRARY 0x4c494231u
#define FK_MAGIC_FUNC 0x46554e31u
#define FK_MAGIC_KERNEL 0x4b524e31u
#define FK_NKERNELS 4
#define FK_ARGBUF 64

struct fk_kdef {
    const char *name;
    int nparams;
    size_t off[4], size[4];
    size_t argsize;
    int (*check)(const unsigned char *a);
    void (*run)(const unsigned char *a);
};

/* CUfunction and CUkernel objects share this layout (a CUkernel may be
 * passed where a CUfunction is expected, as CUDA 12 allows). */
struct fk_handle {
    uint32_t magic;
    const struct fk_kdef *k;
};
struct CUfunc_st { struct fk_handle h; };
struct CUkern_st { struct fk_handle h; struct CUfunc_st func; };
struct CUmod_st { uint32_t magic; struct CUfunc_st f[FK_NKERNELS]; };
struct CUlib_st { uint32_t magic; struct CUkern_st k[FK_NKERNELS]; };

static uint64_t fk_u64(const unsigned char *a, size_t off) { uint64_t v; memcpy(&v, a + off, 8); return v; }
static uint32_t fk_u32(const unsigned char *a, size_t off) { uint32_t v; memcpy(&v, a + off, 4); return v; }

static int fk_span(uint64_t p, uint64_t n, int write)
{
    return n == 0 || (n < ((uint64_t)1 << 60) && fk_mem_check((uintptr_t)p, (size_t)n * 4, write, 0));
}

static int fk_fill_check(const unsigned char *a) { return fk_span(fk_u64(a, 0), fk_u64(a, 16), 1); }
static void fk_fill_run(const unsigned char *a)
{
    uint32_t *dst = (uint32_t *)(uintptr_t)fk_u64(a, 0), v = fk_u32(a, 8);
    for (uint64_t i = 0, n = fk_u64(a, 16); i < n; i++)
        dst[i] = v;
}

static int fk_add_check(const unsigned char *a)
{
    uint64_t n = fk_u64(a, 24);
    return fk_span(fk_u64(a, 0), n, 0) && fk_span(fk_u64(a, 8), n, 0) && fk_span(fk_u64(a, 16), n, 1);
}
static void fk_add_run(const unsigned char *a)
{
    const float *x = (const float *)(uintptr_t)fk_u64(a, 0), *y = (const float *)(uintptr_t)fk_u64(a, 8);
    float *out = (float *)(uintptr_t)fk_u64(a, 16);
    for (uint64_t i = 0, n = fk_u64(a, 24); i < n; i++)
        out[i] = x[i] + y[i];
}

static int fk_scale_check(const unsigned char *a) { return fk_span(fk_u64(a, 0), fk_u64(a, 16), 1); }
static void fk_scale_run(const unsigned char *a)
{
    float *p = (float *)(uintptr_t)fk_u64(a, 0), s;
    memcpy(&s, a + 8, 4);
    for (uint64_t i = 0, n = fk_u64(a, 16); i < n; i++)
        p[i] *= s;
}

static int fk_noop_check(const unsigned char *a) { (void)a; return 1; }
static void fk_noop_run(const unsigned char *a) { (void)a; }

/* Offsets follow the device ABI: each parameter aligned to its size. */
static const struct fk_kdef fk_kdefs[FK_NKERNELS] = {
    {"fake_fill_u32", 3, {0, 8, 16}, {8, 4, 8}, 24, fk_fill_check, fk_fill_run},
    {"fake_add_f32", 4, {0, 8, 16, 24}, {8, 8, 8, 8}, 32, fk_add_check, fk_add_run},
    {"fake_scale_f32", 3, {0, 8, 16}, {8, 4, 8}, 24, fk_scale_check, fk_scale_run},
    {"fake_noop", 0, {0}, {0}, 0, fk_noop_check, fk_noop_run},
};

void fk_kernel_run(const struct fk_kdef *k, const unsigned char *params)
{
    k->run(params);
}

static const struct fk_kdef *fk_kdef_of(const void *h)
{
    const struct fk_handle *fh = h;
    return fh && (fh->magic == FK_MAGIC_FUNC || fh->magic == FK_MAGIC_KERNEL) ? fh->k : NULL;
}

/* PTX (text: a comment or a directive first) declares its ISA with
 * ".version M.m"; the driver's JIT takes ISAs up to its own, M = CUDA major
 * - 4 and m = CUDA minor (CUDA 13.0: PTX ISA 9.0), and refuses a newer one,
 * as a toolchain newer than the driver writes it. */
static int fk_ptx_too_new(const void *image)
{
    const char *s = image, *v;
    int maj, min;
    if ((s[0] != '/' && s[0] != '.') || !(v = strstr(s, ".version ")) ||
        sscanf(v + 9, "%d.%d", &maj, &min) != 2)
        return 0;
    int dmaj = fk_driver_version / 1000 - 4, dmin = fk_driver_version % 1000 / 10;
    return maj > dmaj || (maj == dmaj && min > dmin);
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    FK_GUARD();
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_ptx_too_new(image))
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    struct CUctx_st *c;
    if (fk_ctx_current(&c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUmod_st *m = fk_handle_alloc(sizeof(*m));
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = FK_MAGIC_MODULE;
    for (int i = 0; i < FK_NKERNELS; i++)
        m->f[i].h = (struct fk_handle){FK_MAGIC_FUNC, &fk_kdefs[i]};
    *module = m;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuModuleLoadData);

static int fk_kdef_index(const char *name)
{
    const char *at = strchr(name, '@');
    size_t n = at ? (size_t)(at - name) : strlen(name);
    for (int i = 0; i < FK_NKERNELS; i++)
        if (strlen(fk_kdefs[i].name) == n && strncmp(fk_kdefs[i].name, name, n) == 0)
            return i;
    return -1;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    FK_GUARD();
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!hmod || hmod->magic != FK_MAGIC_MODULE)
        return CUDA_ERROR_INVALID_HANDLE;
    int i = fk_kdef_index(name);
    if (i < 0)
        return CUDA_ERROR_NOT_FOUND;
    *hfunc = &hmod->f[i];
    return CUDA_SUCCESS;
}
FK_ALIAS(cuModuleGetFunction);

CUresult cuModuleUnload(CUmodule hmod)
{
    FK_GUARD();
    if (!hmod || hmod->magic != FK_MAGIC_MODULE)
        return CUDA_ERROR_INVALID_HANDLE;
    /* Kept (dead) so launches through stale functions fail cleanly. */
    hmod->magic = FK_MAGIC_DEAD;
    for (int i = 0; i < FK_NKERNELS; i++)
        hmod->f[i].h.magic = FK_MAGIC_DEAD;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuModuleUnload);

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions)
{
    FK_GUARD();
    (void)jitOptions, (void)jitOptionsValues, (void)libraryOptions, (void)libraryOptionValues;
    (void)numJitOptions, (void)numLibraryOptions;
    if (!library || !code)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_ptx_too_new(code))
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    struct CUlib_st *l = fk_handle_alloc(sizeof(*l));
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    l->magic = FK_MAGIC_LIBRARY;
    for (int i = 0; i < FK_NKERNELS; i++) {
        l->k[i].h = (struct fk_handle){FK_MAGIC_KERNEL, &fk_kdefs[i]};
        l->k[i].func.h = (struct fk_handle){FK_MAGIC_FUNC, &fk_kdefs[i]};
    }
    *library = l;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuLibraryLoadData);

CUresult cuLibraryUnload(CUlibrary library)
{
    FK_GUARD();
    if (!library || library->magic != FK_MAGIC_LIBRARY)
        return CUDA_ERROR_INVALID_HANDLE;
    library->magic = FK_MAGIC_DEAD;
    for (int i = 0; i < FK_NKERNELS; i++)
        library->k[i].h.magic = library->k[i].func.h.magic = FK_MAGIC_DEAD;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuLibraryUnload);

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    FK_GUARD();
    if (!pKernel || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!library || library->magic != FK_MAGIC_LIBRARY)
        return CUDA_ERROR_INVALID_HANDLE;
    int i = fk_kdef_index(name);
    if (i < 0)
        return CUDA_ERROR_NOT_FOUND;
    *pKernel = &library->k[i];
    return CUDA_SUCCESS;
}
FK_ALIAS(cuLibraryGetKernel);

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    FK_GUARD();
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    if (!kernel || kernel->h.magic != FK_MAGIC_KERNEL)
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUctx_st *c;
    if (fk_ctx_current(&c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    *pFunc = &kernel->func;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuKernelGetFunction);

/* Offset and size of parameter idx; INVALID_VALUE past the last one. */
static CUresult fk_param_info(const void *h, size_t idx, size_t *off, size_t *size)
{
    FK_GUARD();
    const struct fk_kdef *k = fk_kdef_of(h);
    if (!k)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!off || idx >= (size_t)k->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    *off = k->off[idx];
    if (size)
        *size = k->size[idx];
    return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    return fk_param_info(func, paramIndex, paramOffset, paramSize);
}
FK_ALIAS(cuFuncGetParamInfo);

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    return fk_param_info(kernel, paramIndex, paramOffset, paramSize);
}
FK_ALIAS(cuKernelGetParamInfo);

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    FK_GUARD();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    const struct fk_kdef *k = fk_kdef_of(hfunc);
    if (!k)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = k->name;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuFuncGetName);

/* Pack the arguments: kernelParams (one pointer per value) or the extra buffer. */
static CUresult fk_pack(const struct fk_kdef *k, void **kernelParams, void **extra, unsigned char *buf)
{
    memset(buf, 0, FK_ARGBUF);
    if (kernelParams && extra)
        return CUDA_ERROR_INVALID_VALUE;
    if (k->nparams == 0)
        return CUDA_SUCCESS;
    if (kernelParams) {
        for (int i = 0; i < k->nparams; i++) {
            if (!kernelParams[i])
                return CUDA_ERROR_INVALID_VALUE;
            memcpy(buf + k->off[i], kernelParams[i], k->size[i]);
        }
        return CUDA_SUCCESS;
    }
    const void *ptr = NULL;
    size_t size = 0;
    for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            ptr = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            size = extra[i + 1] ? *(size_t *)extra[i + 1] : 0;
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (!ptr || size < k->argsize)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(buf, ptr, k->argsize);
    return CUDA_SUCCESS;
}

static CUresult fk_launch(const void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shmem, CUstream st, void **kernelParams, void **extra, int pt)
{
    FK_GUARD();
    const struct fk_kdef *k = fk_kdef_of(f);
    if (!k)
        return CUDA_ERROR_INVALID_HANDLE;
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !st ? CU_STREAM_PER_THREAD : st, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!gx || !gy || !gz || !bx || !by || !bz || bx > 1024 || by > 1024 || bz > 64 ||
        (uint64_t)bx * by * bz > 1024 || gy > 65535 || gz > 65535 || shmem > 232448)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char buf[FK_ARGBUF];
    if ((rc = fk_pack(k, kernelParams, extra, buf)) != CUDA_SUCCESS)
        return rc;
    if (!k->check(buf))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    rc = fk_op_kernel(&sr, k, buf);
    if (rc == CUDA_SUCCESS)
        fk_fault_launched();
    return rc;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    return fk_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                     kernelParams, extra, 0);
}
FK_ALIAS(cuLaunchKernel);

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    return fk_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                     kernelParams, extra, 1);
}
FK_ALIAS(cuLaunchKernel_ptsz);

static CUresult fk_launch_ex(const CUlaunchConfig *c, CUfunction f, void **kernelParams, void **extra, int pt)
{
    FK_GUARD();
    if (!c || (c->numAttrs && !c->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    return fk_launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                     c->sharedMemBytes, c->hStream, kernelParams, extra, pt);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    return fk_launch_ex(config, f, kernelParams, extra, 0);
}
FK_ALIAS(cuLaunchKernelEx);

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    return fk_launch_ex(config, f, kernelParams, extra, 1);
}
FK_ALIAS(cuLaunchKernelEx_ptsz);

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                   unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams)
{
    return fk_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                     kernelParams, NULL, 0);
}
FK_ALIAS(cuLaunchCooperativeKernel);

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams)
{
    return fk_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                     kernelParams, NULL, 1);
}
FK_ALIAS(cuLaunchCooperativeKernel_ptsz);
