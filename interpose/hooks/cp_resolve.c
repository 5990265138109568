/*
 * cp_resolve.c - the four routes to the driver (interposition.md section 2).
 *
 * 1. Exported symbols: the generated wrappers in cp_wrap.c.
 * 2. dlsym(handle, name): only names the table wraps (or the resolvers) are
 *    looked at; the real dlsym answers first and its result is substituted
 *    only when dladdr() says it lies in libcuda under exactly that name.
 *    Everything else jumps straight into glibc's dlsym (see the trampolines
 *    below), so RTLD_NEXT stays relative to the real caller.
 * 3. cuGetProcAddress (4 args) and cuGetProcAddress_v2 (5 args): the real
 *    resolver answers; its pointer is identified with dladdr() and replaced by
 *    the wrapper of that exact ELF name, so the driver's own (name, version,
 *    flags) mapping decides the ABI and the per-thread variant.
 * 4. cudaGetDriverEntryPoint* in libcudart goes through cudart's table, whose
 *    cuGetProcAddress pointer is ours: nothing more is needed.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_real.h"
#include "cp_rec.h"
#include "cp_wrap.h"

CP_NO_SANITIZE static int cp_is_libcuda_path(const char *path)
{
    if (!path)
        return 0;
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return strncmp(b, "libcuda.so", 10) == 0;
}

static void cp_rec_resolve(const char *sym, int ver, uint64_t flags, int res, int status,
                           int route, int handed)
{
    size_t n = sym ? strnlen(sym, 256) : 0;
    (void)cp_rec_put_resolve(sym, n, ver, flags, (uint64_t)res, (uint64_t)status,
                             (uint64_t)route, (uint64_t)handed);
}

CP_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags);
CP_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *st);

/* If `real` is the libcuda function named exactly like a table row (or a
 * resolver), remember it and return our wrapper; else return it as is. */
static void *cp_substitute(void *real, int route)
{
    Dl_info di;
    if (!real || !dladdr(real, &di) || di.dli_saddr != real || !di.dli_sname ||
        !cp_is_libcuda_path(di.dli_fname))
        return real;
    if (strcmp(di.dli_sname, "cuGetProcAddress") == 0)
        return (void *)cuGetProcAddress;
    if (strcmp(di.dli_sname, "cuGetProcAddress_v2") == 0)
        return (void *)cuGetProcAddress_v2;
    int id = cp_api_lookup(di.dli_sname);
    if (id < 0)
        return real;
    cp_real_set((uint32_t)id, real);
    cp_api_route_add((uint32_t)id, route);
    return cp_wrapper_fn((uint32_t)id);
}

CP_NO_SANITIZE static int cp_is_resolver_name(const char *name)
{
    return strcmp(name, "cuGetProcAddress") == 0 || strcmp(name, "cuGetProcAddress_v2") == 0;
}

/* --- dlsym ---------------------------------------------------------------- */

/* Called by the trampoline with the caller's arguments: non-zero sends the
 * call to cp_dlsym_hook, zero jumps to glibc's dlsym with the caller's own
 * return address (RTLD_NEXT and namespaces keep working). */
__attribute__((visibility("hidden"), used)) int cp_dlsym_wants(void *handle, const char *name);
CP_NO_SANITIZE int cp_dlsym_wants(void *handle, const char *name)
{
    cp_real_init();
    if (handle == RTLD_NEXT || !name || name[0] != 'c')
        return 0;
    return cp_api_lookup(name) >= 0 || cp_is_resolver_name(name);
}

__attribute__((visibility("hidden"), used)) void *cp_dlsym_hook(void *handle, const char *name);
void *cp_dlsym_hook(void *handle, const char *name)
{
    void *real = cp_real_dlsym(handle, name);
    if (!real)
        return NULL;
    void *out = cp_substitute(real, CP_ROUTE_DLSYM);
    if (out != real && cp_hook_depth() == 0)
        cp_rec_resolve(name, 0, 0, 0, 0, CP_ROUTE_DLSYM, 1);
    return out;
}

/* --- dlopen ---------------------------------------------------------------- */

__attribute__((visibility("hidden"), used)) int cp_dlopen_wants(const char *file, int flags);
CP_NO_SANITIZE int cp_dlopen_wants(const char *file, int flags)
{
    (void)flags;
    cp_real_init();
    return cp_is_libcuda_path(file);
}

/* An attempt to load libcuda: record what the loader found, or its error.
 * "No driver installed" (not found), "stub library" (toolkit stubs/) and a
 * real driver are told apart here; "too old" shows later in
 * cuDriverGetVersion and in failed cuGetProcAddress requests. */
__attribute__((visibility("hidden"), used)) void *cp_dlopen_hook(const char *file, int flags);
void *cp_dlopen_hook(const char *file, int flags)
{
    void *h = cp_real_dlopen(file, flags);
    char path[512] = "", err[512] = "";
    int kind = CP_LIB_NOT_FOUND;
    if (h) {
        struct link_map *lm = NULL;
        char real[PATH_MAX];
        if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
            snprintf(path, sizeof(path), "%s", lm->l_name);
        /* The toolkit's stub lives in .../stubs/ and is usually reached
         * through a link named libcuda.so.1: judge by where it really is.
         * cuInit's CUDA_ERROR_STUB_LIBRARY confirms it later. */
        kind = strstr(realpath(path, real) ? real : path, "/stubs/") ? CP_LIB_STUB
                                                                     : CP_LIB_DRIVER;
    } else {
        /* dlerror() clears the message the program is about to read; take
         * it, then fail the same way once more so the program still finds it. */
        const char *e = dlerror();
        snprintf(err, sizeof(err), "%s", e ? e : "");
        (void)cp_real_dlopen(file, flags);
    }
    if (cp_hook_depth() == 0) {
        size_t nf = strnlen(file, 512), np = strlen(path), ne = strlen(err);
        (void)cp_rec_put_dlopen(file, nf, (uint64_t)(unsigned)flags, h != NULL, path, np,
                                err, ne, (uint64_t)kind);
    }
    return h;
}

/* The trampolines.  They keep the caller's return address on the stack when
 * they forward to glibc, which is what makes dlsym(RTLD_NEXT, ...) and
 * dlopen's caller-relative search ($ORIGIN, RUNPATH) behave as without us. */
#if defined(__x86_64__)
#define CP_TRAMPOLINE(sym, wants, hook, realptr)                              \
    __asm__(".text\n"                                                        \
            ".globl " #sym "\n"                                              \
            ".type " #sym ",@function\n"                                     \
            #sym ":\n"                                                       \
            "  pushq %rdi\n"                                                 \
            "  pushq %rsi\n"                                                 \
            "  subq $8, %rsp\n"                                              \
            "  call " #wants "\n"                                            \
            "  addq $8, %rsp\n"                                              \
            "  popq %rsi\n"                                                  \
            "  popq %rdi\n"                                                  \
            "  testl %eax, %eax\n"                                           \
            "  jnz " #hook "\n"                                              \
            "  jmp *" #realptr "(%rip)\n"                                    \
            ".size " #sym ", .-" #sym "\n");
CP_TRAMPOLINE(dlsym, cp_dlsym_wants, cp_dlsym_hook, cp_real_dlsym_ptr)
CP_TRAMPOLINE(dlopen, cp_dlopen_wants, cp_dlopen_hook, cp_real_dlopen_ptr)
#else
/* Elsewhere, plain C: relative lookups then become relative to the shim. */
CP_EXPORT void *dlsym(void *handle, const char *name)
{
    return cp_dlsym_wants(handle, name) ? cp_dlsym_hook(handle, name)
                                        : cp_real_dlsym(handle, name);
}
CP_EXPORT void *dlopen(const char *file, int flags)
{
    return cp_dlopen_wants(file, flags) ? cp_dlopen_hook(file, flags)
                                        : cp_real_dlopen(file, flags);
}
#endif

/* --- cuGetProcAddress ------------------------------------------------------- */

typedef CUresult (*cp_gpa1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*cp_gpa2_fn)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

static void cp_gpa_after(const char *sym, void **pfn, int ver, cuuint64_t flags, CUresult r,
                         int status, int route)
{
    int handed = 0;
    if (r == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && pfn && *pfn) {
        void *w = cp_substitute(*pfn, route);
        handed = w != *pfn;
        *pfn = w;
    }
    /* Keep the trace small: failures (a driver too old shows here first),
     * the resolver requests, and each new highest version asked for (the
     * newest CUDA a runtime or library in the process was built for). */
    static atomic_int max_ver;
    int seen = atomic_load_explicit(&max_ver, memory_order_relaxed);
    int newest = r == CUDA_SUCCESS && ver > seen &&
                 atomic_compare_exchange_strong(&max_ver, &seen, ver);
    if (cp_hook_depth() == 0 &&
        (r != CUDA_SUCCESS || status != 0 || newest || (sym && cp_is_resolver_name(sym))))
        cp_rec_resolve(sym, ver, flags, r, status, route, handed);
}

CP_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    static _Atomic(void *) real;
    void *f = atomic_load(&real);
    if (!f) {
        f = cp_real_in_libcuda("cuGetProcAddress");
        if (!f)
            return CUDA_ERROR_NOT_FOUND;
        atomic_store(&real, f);
    }
    CUresult r = ((cp_gpa1_fn)f)(symbol, pfn, cudaVersion, flags);
    cp_gpa_after(symbol, pfn, cudaVersion, flags, r, r == CUDA_SUCCESS ? 0 : 1, CP_ROUTE_GPA);
    return r;
}

CP_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *st);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *st)
{
    static _Atomic(void *) real;
    void *f = atomic_load(&real);
    if (!f) {
        f = cp_real_in_libcuda("cuGetProcAddress_v2");
        if (!f)
            return CUDA_ERROR_NOT_FOUND;
        atomic_store(&real, f);
    }
    CUresult r = ((cp_gpa2_fn)f)(symbol, pfn, cudaVersion, flags, st);
    cp_gpa_after(symbol, pfn, cudaVersion, flags, r, st ? (int)*st : 0, CP_ROUTE_GPA2);
    return r;
}
