/*
 * fk_fault.c - an asynchronous kernel fault, on request.
 *
 * FAKECUDA_FAIL_LAUNCH=N makes the N-th successful kernel launch of the
 * process (1-based, all threads) "fault on the device": the launch itself
 * returns CUDA_SUCCESS, as on a real GPU; the next synchronising call (a
 * context, stream or event synchronisation or query, a synchronous copy)
 * returns FAKECUDA_FAIL_CODE (default 700, CUDA_ERROR_ILLEGAL_ADDRESS), and
 * from then on every entry point returns it too: the error is sticky, the
 * context is unusable.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "fk_internal.h"

static pthread_once_t fk_fault_once = PTHREAD_ONCE_INIT;
static uint64_t fk_fault_at;            /* 0: never */
static CUresult fk_fault_code = CUDA_ERROR_ILLEGAL_ADDRESS;
static atomic_uint_fast64_t fk_fault_launches;
static atomic_int fk_fault_pending;
static atomic_int fk_fault_sticky;

static void fk_fault_env(void)
{
    const char *s = getenv("FAKECUDA_FAIL_LAUNCH");
    if (s && *s)
        fk_fault_at = strtoull(s, NULL, 10);
    s = getenv("FAKECUDA_FAIL_CODE");
    if (s && *s && atoi(s) > 0)
        fk_fault_code = (CUresult)atoi(s);
}

void fk_fault_launched(void)
{
    pthread_once(&fk_fault_once, fk_fault_env);
    if (fk_fault_at && atomic_fetch_add(&fk_fault_launches, 1) + 1 == fk_fault_at)
        atomic_store(&fk_fault_pending, 1);
}

CUresult fk_fault_sync(void)
{
    if (atomic_load(&fk_fault_sticky))
        return (CUresult)atomic_load(&fk_fault_sticky);
    if (atomic_load(&fk_fault_pending)) {
        atomic_store(&fk_fault_sticky, (int)fk_fault_code);
        return fk_fault_code;
    }
    return CUDA_SUCCESS;
}

CUresult fk_fault_sticky_code(void)
{
    return (CUresult)atomic_load_explicit(&fk_fault_sticky, memory_order_relaxed);
}
