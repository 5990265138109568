/*
 * cp_inflight.h - the launches in flight, for the first sticky error
 * (cp_inflight.c).
 *
 * Every launch is written into its thread's ring of the last
 * CP_INFLIGHT_RING launches, with what the launch path has: the function,
 * grid, block, shared memory, stream, the thread's context, the caller's
 * address and the raw Python frames.  Nothing is recorded until a driver
 * call first returns a sticky error; then the launches issued on that
 * context since its last successful synchronisation are written
 * (CP_REC_ASYNC_ERROR, CP_REC_INFLIGHT).
 */
#ifndef CP_INFLIGHT_H
#define CP_INFLIGHT_H

#include <stdint.h>

#include "cp_cuda.h"
#include "cp_wrap.h"

#define CP_INFLIGHT_RING 64     /* launches kept per thread */
#define CP_INFLIGHT_PY 6        /* Python frames kept per launch */

/*! cp_inflight_launch() : note one launch in the calling thread's ring. */
void cp_inflight_launch(const cp_call *c, const void *func, const unsigned grid[3],
                        const unsigned block[3], unsigned shmem, CUstream s);

/*! cp_inflight_synced() : a synchronisation succeeded: the whole context
 *  (stream == NULL and whole_ctx) or one stream has finished what was
 *  launched before it. */
void cp_inflight_synced(CUcontext ctx, CUstream stream, int whole_ctx);

/*! cp_inflight_sticky() : non-zero for the CUresults that leave a context
 *  unusable (700, 710, 714-719, 999). */
static inline int cp_inflight_sticky(CUresult r)
{
    return r == 700 || r == 710 || (r >= 714 && r <= 719) || r == 999;
}

/*! cp_inflight_fatal() : non-zero for the CUresults that end a run: the
 *  sticky ones, and 214 (CUDA_ERROR_ECC_UNCORRECTABLE). */
static inline int cp_inflight_fatal(CUresult r)
{
    return cp_inflight_sticky(r) || r == CUDA_ERROR_ECC_UNCORRECTABLE;
}

/*! cp_inflight_error() : call c returned an error that ends the run
 *  (cp_inflight_fatal): the first time in this process, record a sticky
 *  one with the launches in flight on its context; for either, the kernel
 *  log's word (cp_klog_fatal).  Called by the wrappers (inside the hook
 *  guard). */
void cp_inflight_error(const cp_call *c);

/*! cp_inflight_after_fork() : in a forked child: forget the parent's rings
 *  (its launches are not this process's) and the error state. */
void cp_inflight_after_fork(void);

#endif /* CP_INFLIGHT_H */
