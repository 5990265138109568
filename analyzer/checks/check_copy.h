/*
 * check_copy.h - what pageable-async-copy (check_pageable.c) and
 * blocking-copy (check_blocking.c) share: both read an async copy together
 * with what its thread does next.
 *
 * A framework implements a blocking copy (PyTorch: .to("cuda"), .cpu(),
 * .item(), .tolist() with non_blocking=False) as an async copy followed at
 * once by a synchronisation of the same stream: such a copy was meant to
 * block, so it is a blocking copy, not a non_blocking that did nothing.
 * "At once" means: the thread's next copy, memset, synchronisation or
 * allocation record is a successful cuStreamSynchronize of that stream or
 * a cuCtxSynchronize of that context (launches are not recorded one by
 * one, so they cannot be told apart).
 */
#ifndef CHECK_COPY_H
#define CHECK_COPY_H

#include "cp_checks.h"

static inline int cp_is_dev_class(uint64_t c)
{
    return c == CP_MC_DEVICE || c == CP_MC_MANAGED || c == CP_MC_ARRAY;
}

static inline int cp_is_host_class(uint64_t c)
{
    return c == CP_MC_PAGEABLE || c == CP_MC_PINNED || c == CP_MC_REGISTERED;
}

/* --- an async pageable copy waiting for its thread's next record ------------------- */

typedef struct cp_pend {
    int set, dtoh;
    uint64_t stack, bytes, ns, ts, stream, ctx, api, seq;
} cp_pend;

/* The stream handles that all mean the legacy default stream. */
static inline int cp_same_stream(uint64_t a, uint64_t b)
{
    return a == b || (a <= 1 && b <= 1);
}

/* Whether r is one of the records that end a thread's pending copy. */
static inline int cp_pend_ender(const cp_record *r)
{
    return r->type == CP_REC_COPY || r->type == CP_REC_MEMSET || r->type == CP_REC_SYNC ||
           r->type == CP_REC_ALLOC;
}

/* Whether sync record r waits for pending copy c. */
static inline int cp_pend_synced_by(const cp_pend *c, const cp_record *r)
{
    if (r->type != CP_REC_SYNC || r->ev.result != 0)
        return 0;
    if (c->ctx && r->ev.ctx && c->ctx != r->ev.ctx)
        return 0;
    return r->u.sync.op == CP_SYNC_CTX ||
           (r->u.sync.op == CP_SYNC_STREAM && cp_same_stream(c->stream, r->ev.stream));
}

/* An async copy between pageable host memory and the device: 1 (with
 * *dtoh set), else 0. */
static inline int cp_pageable_async(const cp_record *r, int *dtoh)
{
    if (r->type != CP_REC_COPY || !(r->u.copy.flags & CP_CF_ASYNC) || r->ev.result != 0)
        return 0;
    if (r->u.copy.src_class == CP_MC_PAGEABLE && cp_is_dev_class(r->u.copy.dst_class))
        *dtoh = 0;
    else if (r->u.copy.dst_class == CP_MC_PAGEABLE && cp_is_dev_class(r->u.copy.src_class))
        *dtoh = 1;
    else
        return 0;
    return 1;
}

static inline void cp_pend_set(cp_pend *c, const cp_record *r, int dtoh, uint64_t seq)
{
    *c = (cp_pend){ .set = 1, .dtoh = dtoh, .stack = r->ev.stack, .bytes = r->u.copy.bytes,
                    .ns = r->ev.dur_ns, .ts = r->ts, .stream = r->ev.stream, .ctx = r->ev.ctx,
                    .api = r->ev.api, .seq = seq };
}

#endif /* CHECK_COPY_H */
