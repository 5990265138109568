/*
 * fatal_async.h - the first sticky asynchronous CUDA error of a process
 * (CP_REC_ASYNC_ERROR) and the launches that were in flight on its context
 * (CP_REC_INFLIGHT), for check_fatal.c.
 */
#ifndef FATAL_ASYNC_H
#define FATAL_ASYNC_H

#include <stdint.h>

#include "cp_findings.h"

#define FA_MAX 64

typedef struct fa_launch {
    uint64_t api, func, stream, ctx, stack, tid;
    uint64_t grid[3], block[3], shmem;
    char name[160];
} fa_launch;

typedef struct fa_state {
    int have;
    uint64_t code, api, stack, ts, ctx;
    int64_t dev;
    uint64_t n_expected, overflow;
    fa_launch l[FA_MAX];
    int n;
} fa_state;

/* The record types fa_rec() reads. */
#define FA_TYPES (CP_TYPE_BIT(CP_REC_ASYNC_ERROR) | CP_TYPE_BIT(CP_REC_INFLIGHT))

/*! fa_rec() : take the first ASYNC_ERROR record and the INFLIGHT records
 *  that follow it into *s; other records are ignored. */
void fa_rec(cp_proc *p, fa_state *s, const cp_record *r);

/*! fa_explain() : the error, where it surfaced, the launches in flight
 *  with their sites, and (when with_rerun) the rerun command lines, as
 *  lines and details of finding f.  Without a recorded error: only the
 *  explanation and the rerun lines. */
void fa_explain(cp_proc *p, const fa_state *s, cp_finding *f, int with_rerun);

/*! fa_sticky() : non-zero for the CUresults that leave a context unusable
 *  (the asynchronous class of cp_curesult.h's CP_CUERR_CLASSES). */
int fa_sticky(uint64_t code);

#endif /* FATAL_ASYNC_H */
