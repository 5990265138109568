/*
 * check_fatal_async.h - the first sticky asynchronous CUDA error of a process
 * (CP_REC_ASYNC_ERROR) and the launches that were in flight on its context
 * (CP_REC_INFLIGHT), for check_fatal.c.
 */
#ifndef CHECK_FATAL_ASYNC_H
#define CHECK_FATAL_ASYNC_H

#include <stdint.h>

#include "cp_findings.h"

#define CP_ASYNC_MAX 64

typedef struct cp_async_launch {
    uint64_t api, func, stream, ctx, stack, tid;
    uint64_t grid[3], block[3], shmem;
    char name[160];
} cp_async_launch;

typedef struct cp_async_state {
    int have;
    uint64_t code, api, stack, ts, ctx;
    int64_t dev;
    uint64_t n_expected, overflow;
    cp_async_launch l[CP_ASYNC_MAX];
    int n;
} cp_async_state;

/* The record types cp_async_rec() reads. */
#define CP_ASYNC_TYPES (CP_TYPE_BIT(CP_REC_ASYNC_ERROR) | CP_TYPE_BIT(CP_REC_INFLIGHT))

/*! cp_async_rec() : take the first ASYNC_ERROR record and the INFLIGHT records
 *  that follow it into *s; other records are ignored. */
void cp_async_rec(cp_proc *p, cp_async_state *s, const cp_record *r);

/*! cp_async_explain() : the error, where it surfaced, the launches in flight
 *  with their sites, and (when with_rerun) the rerun command lines, as
 *  lines and details of finding f.  Without a recorded error: only the
 *  explanation and the rerun lines. */
void cp_async_explain(cp_proc *p, const cp_async_state *s, cp_finding *f, int with_rerun);

/*! cp_async_sticky() : non-zero for the CUresults that leave a context unusable
 *  (the asynchronous class of cp_curesult.h's CP_CUERR_CLASSES). */
int cp_async_sticky(uint64_t code);

#endif /* CHECK_FATAL_ASYNC_H */
