// cflags: -I/usr/local/cuda/include -Itests/unit
// link: build/tests/unit/abi_ours.o
/*
 * test_abi_cudah.c - include/cp_cuda.h and the wrapper table against
 * NVIDIA's own headers, where a CUDA toolkit is installed:
 *   - every size, offset and constant in abi_list.h must be equal;
 *   - every row of include/cp_api_table.h must have exactly the prototype of
 *     its PFN_* typedef in cudaTypedefs.h (compile-time: a mismatch does not
 *     build).
 * Without a toolkit it skips (exit 77).
 */
#include <stdio.h>

#if __has_include(<cuda.h>) && __has_include(<cudaTypedefs.h>)
#include <stddef.h>
#include <stdint.h>
/* The internal switch exposes the PFN typedefs of the older ABIs
 * (cuStreamBeginCapture v10000, cuDevicePrimaryCtxRelease v7000...), which
 * cuprobe wraps too. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

extern const long abi_ours[];
extern const char *const abi_names[];
extern const int abi_count;

#define ABI_SIZE(t) (long)sizeof(t),
#define ABI_OFF(t, f) (long)offsetof(t, f),
#define ABI_VAL(v) (long)(v),
static const long abi_theirs[] = {
#include "abi_list.h"
};

#define CP_API(name, pfn, mode, hook, params, args)                                     \
    _Static_assert(__builtin_types_compatible_p(pfn, CUresult (*) params),              \
                   #name " does not match " #pfn);
#define CP_API0(name, pfn, mode, hook)                                                  \
    _Static_assert(__builtin_types_compatible_p(pfn, CUresult (*)(void)),               \
                   #name " does not match " #pfn);
#include "cp_api_table.h"

int main(void)
{
    int bad = 0, n = (int)(sizeof(abi_theirs) / sizeof(abi_theirs[0]));
    if (n != abi_count) {
        printf("list length differs: %d vs %d\n", n, abi_count);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        if (abi_theirs[i] != abi_ours[i]) {
            printf("MISMATCH %s: cuda.h %ld, cp_cuda.h %ld\n", abi_names[i], abi_theirs[i],
                   abi_ours[i]);
            bad++;
        }
    }
    printf("%d ABI facts compared against cuda.h %d, %d mismatches; every wrapper "
           "prototype matches its PFN typedef\n", n, CUDA_VERSION, bad);
    return bad ? 1 : 0;
}
#else
int main(void)
{
    printf("no CUDA toolkit headers (cuda.h, cudaTypedefs.h): ABI cross-check skipped\n");
    return 77;
}
#endif
