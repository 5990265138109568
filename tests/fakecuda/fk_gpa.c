/*
 * fk_gpa.c - cuGetProcAddress (CUDA 11.3 ABI, 4 arguments) and
 * cuGetProcAddress_v2 (CUDA 12.0 ABI, 5 arguments) of the fake driver.
 *
 * Resolution mimics the real driver: for (base name, cudaVersion) take the
 * ABI with the highest introduction version <= cudaVersion; with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (or DEFAULT plus
 * CUDA_API_PER_THREAD_DEFAULT_STREAM=1) prefer that ABI's _ptsz/_ptds twin.
 * The pointer returned is the exported symbol's own address (taken through
 * a hidden alias, so a preloaded shim cannot substitute itself), hence
 * dladdr() on it names the exact ELF symbol.  Works before cuInit.
 */
#include <string.h>

#include "fk_internal.h"

#define FK_SYM(elf, base, ver, pt) extern __typeof__(elf) fk_pfn_##elf __attribute__((visibility("hidden")));
#define FK_ABSENT(base, ver, pt)
#include "fk_symtab.h"
#undef FK_SYM
#undef FK_ABSENT

struct fk_gpa_ent {
    const char *base;
    int ver;
    int pt;
    void *pfn;          /* NULL: an ABI the fake does not implement */
};

static const struct fk_gpa_ent fk_gpa_tab[] = {
#define FK_SYM(elf, base, ver, pt) {#base, ver, pt, (void *)fk_pfn_##elf},
#define FK_ABSENT(base, ver, pt) {#base, ver, pt, NULL},
#include "fk_symtab.h"
#undef FK_SYM
#undef FK_ABSENT
};

#define FK_NGPA (sizeof(fk_gpa_tab) / sizeof(fk_gpa_tab[0]))

/* Best entry of symbol with pt twin-ness <= version, or NULL. */
static const struct fk_gpa_ent *fk_gpa_best(const char *symbol, int pt, int version, int *known)
{
    const struct fk_gpa_ent *best = NULL;
    for (size_t i = 0; i < FK_NGPA; i++) {
        const struct fk_gpa_ent *e = &fk_gpa_tab[i];
        if (strcmp(e->base, symbol) != 0)
            continue;
        *known = 1;
        if (e->pt == pt && e->ver <= version && (!best || e->ver > best->ver))
            best = e;
    }
    return best;
}

static CUresult fk_gpa(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    fk_env_load();
    if (pfn)
        *pfn = NULL;
    if (fk_stub)
        return CUDA_ERROR_STUB_LIBRARY;
    if (!symbol || !pfn || (flags & ~(cuuint64_t)3))
        return CUDA_ERROR_INVALID_VALUE;
    /* A runtime newer than the driver is refused outright; with
     * FAKECUDA_GPA_NEWER=1 it is answered as a real driver answers the
     * CUDA Python bindings: with the newest ABI the driver has, and
     * functions newer than the driver are not found. */
    int newer = cudaVersion > fk_driver_version;
    if (newer && !fk_gpa_newer)
        return CUDA_ERROR_INVALID_VALUE;
    if (newer)
        cudaVersion = fk_driver_version;
    int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? 1
                  : (flags & CU_GET_PROC_ADDRESS_LEGACY_STREAM)           ? 0
                                                                          : fk_ptds_default;
    int known = 0;
    const struct fk_gpa_ent *e = fk_gpa_best(symbol, 0, cudaVersion, &known);
    if (want_pt) {
        /* The twin must belong to the chosen ABI, not an older one. */
        const struct fk_gpa_ent *t = fk_gpa_best(symbol, 1, cudaVersion, &known);
        if (t && (!e || t->ver >= e->ver))
            e = t;
    }
    CUdriverProcAddressQueryResult st = !known || (newer && !e)
                                            ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                                        : !e   ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                        : !e->pfn ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                                                  : CU_GET_PROC_ADDRESS_SUCCESS;
    if (status)
        *status = st;
    if (st != CU_GET_PROC_ADDRESS_SUCCESS)
        return CUDA_ERROR_NOT_FOUND;
    *pfn = e->pfn;
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return fk_gpa(symbol, pfn, cudaVersion, flags, NULL);
}
FK_ALIAS(cuGetProcAddress);

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    return fk_gpa(symbol, pfn, cudaVersion, flags, symbolStatus);
}
FK_ALIAS(cuGetProcAddress_v2);
