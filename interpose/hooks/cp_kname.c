/*
 * cp_kname.c - kernel names by CUfunction or CUkernel handle: filled by the
 * lookup hooks (cp_hooks_launch.c), read by the launch counts and the
 * in-flight ring (cp_inflight.c); asks the driver for a handle it did not
 * see being looked up.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cp_evt.h"
#include "cp_launch.h"

#define CP_NAME_SLOTS 8192
static _Atomic(uintptr_t) cp_name_key[CP_NAME_SLOTS];
static _Atomic(char *) cp_name_val[CP_NAME_SLOTS];
static void *cp_slot_func_name;

static unsigned cp_ptr_hash(uintptr_t v, unsigned mask)
{
    return (unsigned)((v >> 4) * 0x9E3779B97F4A7C15ull >> 40) & mask;
}

void cp_launch_name_set(const void *handle, const char *name)
{
    if (!handle || !name)
        return;
    unsigned h = cp_ptr_hash((uintptr_t)handle, CP_NAME_SLOTS - 1);
    for (unsigned i = 0; i < CP_NAME_SLOTS; i++, h = (h + 1) & (CP_NAME_SLOTS - 1)) {
        uintptr_t k = atomic_load(&cp_name_key[h]);
        if (k == (uintptr_t)handle)
            return;
        if (k == 0) {
            uintptr_t expect = 0;
            char *copy = strdup(name);
            if (!copy)
                return;
            if (atomic_compare_exchange_strong(&cp_name_key[h], &expect, (uintptr_t)handle)) {
                atomic_store(&cp_name_val[h], copy);
                return;
            }
            free(copy);
        }
    }
}

const char *cp_launch_name(const void *handle)
{
    unsigned h = cp_ptr_hash((uintptr_t)handle, CP_NAME_SLOTS - 1);
    for (unsigned i = 0; i < CP_NAME_SLOTS; i++, h = (h + 1) & (CP_NAME_SLOTS - 1)) {
        uintptr_t k = atomic_load(&cp_name_key[h]);
        if (k == (uintptr_t)handle)
            return atomic_load(&cp_name_val[h]);
        if (k == 0)
            break;
    }
    /* Functions we did not see being looked up: ask the driver (12.3+). */
    CUresult (*fname)(const char **, CUfunction) = cp_real(&cp_slot_func_name, "cuFuncGetName", CP_REAL_DRIVER);
    const char *n = NULL;
    if (fname && !cp_ev_capturing() && fname(&n, (CUfunction)handle) == CUDA_SUCCESS && n) {
        cp_launch_name_set(handle, n);
        return n;
    }
    return NULL;
}

