/*
 * check_blocking.c - blocking-copy: synchronous device-to-host copies and
 * synchronisations repeated inside the hot loop.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_advice.h"
#include "check_copy.h"

extern const cp_check cp_check_blocking;   /* defined at the end of this file */

/* A call site that runs at least this often may be inside a loop ... */
#define CP_HOT_MIN 10
/* ... when the thread launched kernels between most of its occurrences
 * (COPY and SYNC records carry the launches since the thread's previous
 * one): a wait inside the compute loop.  One burst (moving a model to the
 * GPU, saving a checkpoint) has no launches between its waits.  Traces
 * without that field fall back on timing: the occurrences span at least
 * 1/CP_HOT_SPAN_DIV of the process's active CUDA time (first to last copy,
 * memset, synchronisation, allocation, free or launch count record), or
 * CUDA work at other sites came between most of them. */
#define CP_HOT_SPAN_DIV 10

/* --- blocking-copy ------------------------------------------------------------------- */

/* One call site's waits (value of cp_blk.agg). */
typedef struct cp_blocking_site {
    cp_agg_val a;
    uint64_t last_ts, last_seq;
    uint64_t interleaved;       /* gaps with other CUDA work between occurrences */
    uint64_t gaps_known;        /* gaps whose launch count the trace gives */
    uint64_t gaps_launched;     /* ... of them with kernel launches */
    uint64_t last_tid, last_cum; /* the thread's launch total at the last occurrence */
} cp_blocking_site;

/* A thread's kernel launches so far, summed from its COPY/SYNC records. */
typedef struct cp_blocking_cum {
    uint64_t launches;
    int known;
} cp_blocking_cum;

typedef struct cp_blk {
    cp_map agg;                 /* stack*8 + what -> cp_blocking_site */
    cp_map pend;                /* tid -> cp_pend */
    cp_map cum;                 /* tid -> cp_blocking_cum */
    uint64_t n_set;             /* entries of pend with set: none (the usual
                                 * case) spares every record the lookup */
    uint64_t seq;               /* work records seen */
    uint64_t first_ts, last_ts; /* of work records */
} cp_blk;

static const cp_state_map blk_maps[] = {
    CP_STATE_MAP(cp_blk, agg, cp_blocking_site),
    CP_STATE_MAP(cp_blk, pend, cp_pend),
    CP_STATE_MAP(cp_blk, cum, cp_blocking_cum),
};

/* One wait at stack (what: 0 = a device-to-host copy, else the sync op),
 * that began when the work counter was at seq. */
static void blk_add(cp_proc *p, cp_blk *s, uint64_t stack, uint64_t what, uint64_t bytes,
                    uint64_t ns, uint64_t ts, uint64_t api, uint64_t seq, uint64_t tid)
{
    const cp_blocking_cum *cum = cp_map_get(&s->cum, tid);
    int created;
    cp_blocking_site *b = cp_map_put(&s->agg, stack * 8 + (what & 7), &created);
    if (!b)
        return;
    if (created) {
        b->a.first_ts = ts;
        b->a.stack = stack;
        const char *n = p->dec ? cp_dec_api_name(p->dec, api) : NULL;
        b->a.note = cp_sym_intern(n ? n : "?", n ? strlen(n) : 1);
    } else {
        if (seq > b->last_seq)
            b->interleaved++;
        if (cum && cum->known && b->last_tid == tid) {
            b->gaps_known++;
            b->gaps_launched += cum->launches > b->last_cum;
        }
    }
    b->last_tid = tid;
    b->last_cum = cum ? cum->launches : 0;
    b->a.count++;
    b->a.bytes += bytes;
    b->a.ns += ns;
    b->last_ts = ts;
    b->last_seq = s->seq;
}

/* The run's span and the records' order, for every record the check
 * reads. */
static inline uint64_t blk_seen(cp_blk *s, const cp_record *r)
{
    if (!s->first_ts)
        s->first_ts = r->ts;
    s->last_ts = r->ts;
    return s->seq++;
}

/* The rest of blocking-copy's records: inline too (cp_checks.h). */
static inline __attribute__((always_inline)) void
blk_rec_full(cp_proc *p, cp_blk *s, const cp_record *r)
{
    uint64_t seq = blk_seen(s, r);
    uint64_t l = r->type == CP_REC_COPY ? r->u.copy.launches
               : r->type == CP_REC_SYNC ? r->u.sync.launches : CP_LAUNCHES_UNKNOWN;
    if (l != CP_LAUNCHES_UNKNOWN) {
        cp_blocking_cum *cum = cp_map_put(&s->cum, r->tid, NULL);
        if (cum) {
            cum->launches += l;
            cum->known = 1;
        }
    }
    if (!cp_pend_ender(r))
        return;                 /* FREE, LAUNCH_COUNT: other work, nothing more */
    cp_pend *c = s->n_set ? cp_map_get(&s->pend, r->tid) : NULL;
    if (c && c->set) {
        c->set = 0;
        s->n_set--;
        if (cp_pend_synced_by(c, r)) {
            /* A blocking copy: the sync is part of it.  Only downloads
             * wait for results; an upload's wait is its data arriving. */
            if (c->dtoh)
                blk_add(p, s, c->stack, 0, c->bytes, c->ns + r->ev.dur_ns, r->ts, c->api,
                        c->seq, r->tid);
            return;
        }
    }
    if (r->ev.result != 0)
        return;
    int dtoh;
    if (cp_pageable_async(r, &dtoh)) {
        c = cp_map_put(&s->pend, r->tid, NULL);
        if (c) {
            s->n_set += !c->set;
            cp_pend_set(c, r, dtoh, seq);
        }
        return;
    }
    if (r->type == CP_REC_COPY) {
        if ((r->u.copy.flags & CP_CF_ASYNC) || !cp_is_dev_class(r->u.copy.src_class) ||
            !cp_is_host_class(r->u.copy.dst_class))
            return;
        blk_add(p, s, r->ev.stack, 0, r->u.copy.bytes, r->ev.dur_ns, r->ts, r->ev.api, seq,
                r->tid);
    } else if (r->type == CP_REC_SYNC && r->u.sync.op != CP_SYNC_GRAPH_LAUNCH) {
        /* (a graph launch is work submitted, not a wait) */
        blk_add(p, s, r->ev.stack, r->u.sync.op, 0, r->ev.dur_ns, r->ts, r->ev.api, seq,
                r->tid);
    }
}

/* FREE and LAUNCH_COUNT (other work: no launches to add, no pending copy
 * to end) before blk_rec_full(): inlined into the checks' dispatch. */
__attribute__((always_inline)) inline void
cp_check_blocking_rec(cp_proc *p, void *st, const cp_record *r)
{
    cp_blk *s = st;
    if (!cp_pend_ender(r)) {
        blk_seen(s, r);
        return;
    }
    blk_rec_full(p, s, r);
}

/* Repeated, and spread over the run rather than one burst. */
static int blk_hot(const cp_blk *s, const cp_blocking_site *b)
{
    if (b->a.count < CP_HOT_MIN)
        return 0;
    if (b->gaps_known * 2 >= b->a.count - 1)
        return b->gaps_launched * 2 >= b->gaps_known;
    uint64_t active = s->last_ts - s->first_ts;
    uint64_t span = b->last_ts - b->a.first_ts;
    return span * CP_HOT_SPAN_DIV >= active || b->interleaved * 2 >= b->a.count - 1;
}

static void blk_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_blk *s = st;
    uint64_t copies = 0, syncs = 0, ns = 0, sites = 0;
    size_t it = 0;
    uint64_t key;
    cp_blocking_site *b;
    while ((b = cp_map_next(&s->agg, &it, &key))) {
        if (!blk_hot(s, b))
            continue;
        sites++;
        ns += b->a.ns;
        if (key % 8 == 0)
            copies += b->a.count;
        else
            syncs += b->a.count;
    }
    if (!sites)
        return;
    char b1[32];
    cp_finding *f = cp_finding_new(rep, &cp_check_blocking, p,
                                   "%llu synchronous device-to-host cop%s and %llu "
                                   "synchronisation%s inside a loop blocked the host for %s",
                                   (unsigned long long)copies, copies == 1 ? "y" : "ies",
                                   (unsigned long long)syncs, syncs == 1 ? "" : "s",
                                   cp_fmt_ns(ns, b1, sizeof b1));
    if (!f)
        return;
    f->sort = CP_SORT_NS;
    cp_advice_fix(f, p, CP_ADV_SYNC);
    it = 0;
    while ((b = cp_map_next(&s->agg, &it, &key))) {
        if (!blk_hot(s, b))
            continue;
        cp_finding_site(f, p, b->a.stack, b->a.count, b->a.bytes, b->a.ns, b->a.note);
        f->count += b->a.count;
        f->bytes += b->a.bytes;
        f->ns += b->a.ns;
    }
    cp_finding_line(f, "A call site that waits for the GPU %d or more times, spread over the "
                    "run, is inside the training or inference loop: each wait drains the "
                    "GPU's queue.", CP_HOT_MIN);
    cp_jb_ku(&f->details, "copies", copies);
    cp_jb_ku(&f->details, "synchronizations", syncs);
    cp_jb_ku(&f->details, "hot_loop_min_count", CP_HOT_MIN);
}

const cp_check cp_check_blocking = {
    .id = "blocking-copy",
    .sev = CP_SEV_INFO,
    .name = "host waits for the GPU in the loop",
    .explain = "Every synchronous device-to-host copy (tensor.item(), .cpu(), .tolist(), "
               "printing a CUDA tensor, float(loss)) and every stream or context "
               "synchronisation makes the host wait until the GPU has finished all queued "
               "work. Done once per step it keeps the GPU from running ahead and leaves it "
               "idle while the host prepares the next step.",
    .fix = "Keep values on the GPU inside the loop (accumulate the loss as a tensor, log "
           "every N steps), use non_blocking copies into pinned buffers with an event, and "
           "remove torch.cuda.synchronize() calls that are not needed for timing.",
    .types = CP_TYPE_BIT(CP_REC_COPY) | CP_TYPE_BIT(CP_REC_SYNC) | CP_TYPE_BIT(CP_REC_MEMSET) |
             CP_TYPE_BIT(CP_REC_ALLOC) | CP_TYPE_BIT(CP_REC_FREE) |
             CP_TYPE_BIT(CP_REC_LAUNCH_COUNT),
    CP_CHECK_STATE(cp_blk, blk_maps),
    .rec = cp_check_blocking_rec,
    .finish = blk_finish,
};
