/*
 * check_copy.c - how data moves between host and device:
 *   pageable-async-copy  "async" copies whose host side is pageable memory;
 *   blocking-copy        synchronous device-to-host copies and
 *                        synchronisations repeated inside the hot loop.
 */
#include <stdlib.h>
#include <string.h>

#include "report_checks.h"

/* A call site that runs at least this often is inside a loop. */
#define CP_HOT_MIN 10

static int cp_is_dev_class(uint64_t c)
{
    return c == CP_MC_DEVICE || c == CP_MC_MANAGED || c == CP_MC_ARRAY;
}

static int cp_is_host_class(uint64_t c)
{
    return c == CP_MC_PAGEABLE || c == CP_MC_PINNED || c == CP_MC_REGISTERED;
}

/* --- pageable-async-copy ----------------------------------------------------------- */

typedef struct cp_pac {
    cp_map agg;                 /* stack*2 + (1 for DtoH) -> cp_agg_val */
    uint64_t htod, dtoh;
} cp_pac;

static int pac_init(cp_proc *p, void **st)
{
    (void)p;
    cp_pac *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    cp_map_init(&s->agg, sizeof(cp_agg_val));
    *st = s;
    return 0;
}

static void pac_rec(cp_proc *p, void *st, const cp_record *r)
{
    cp_pac *s = st;
    (void)p;
    if (!(r->u.copy.flags & CP_CF_ASYNC) || r->ev.result != 0)
        return;
    int dtoh;
    if (r->u.copy.src_class == CP_MC_PAGEABLE && cp_is_dev_class(r->u.copy.dst_class))
        dtoh = 0;
    else if (r->u.copy.dst_class == CP_MC_PAGEABLE && cp_is_dev_class(r->u.copy.src_class))
        dtoh = 1;
    else
        return;
    cp_agg_val *v = cp_agg_add(&s->agg, r->ev.stack * 2 + (uint64_t)dtoh, r->ev.stack,
                               r->u.copy.bytes, r->ev.dur_ns, r->ts);
    if (v && !v->note)
        v->note = dtoh ? "device to pageable host" : "pageable host to device";
    if (dtoh)
        s->dtoh++;
    else
        s->htod++;
}

static void pac_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_pac *s = st;
    if (!s->agg.n)
        return;
    char b1[32], b2[32];
    cp_finding *f = cp_finding_new(rep, &cp_check_pageable, p, "pageable");
    if (!f)
        return;
    f->sort = CP_SORT_NS;
    cp_finding_sites_from(f, p, &s->agg);
    cp_finding_retitle(f, "%llu async cop%s with pageable host memory (%s) blocked the "
                       "caller for %s", (unsigned long long)f->count,
                       f->count == 1 ? "y" : "ies", cp_fmt_bytes(f->bytes, b1, sizeof b1),
                       cp_fmt_ns(f->ns, b2, sizeof b2));
    cp_finding_line(f, "%llu host-to-device and %llu device-to-host copies were issued as "
                    "asynchronous but ran synchronously: the host side was not pinned.",
                    (unsigned long long)s->htod, (unsigned long long)s->dtoh);
    cp_jb_ku(&f->details, "htod_count", s->htod);
    cp_jb_ku(&f->details, "dtoh_count", s->dtoh);
}

static void pac_done(void *st)
{
    cp_pac *s = st;
    cp_map_free(&s->agg);
    free(s);
}

const cp_check cp_check_pageable = {
    .id = "pageable-async-copy",
    .sev = CP_SEV_WARNING,
    .name = "async copy from pageable memory",
    .explain = "An asynchronous copy (cuMemcpyHtoDAsync, cuMemcpyDtoHAsync, or PyTorch's "
               ".to(device, non_blocking=True) / .cpu(non_blocking=True)) only overlaps with "
               "other work when its host buffer is page-locked. With ordinary (pageable) "
               "memory the driver first stages the data through an internal pinned buffer "
               "and the call returns only when that is done, so non_blocking=True did "
               "nothing and the caller was blocked for the time shown.",
    .fix = "Pin the host memory: DataLoader(pin_memory=True), tensor.pin_memory(), "
           "torch.empty(..., pin_memory=True), or cuMemHostAlloc / cudaHostRegister for "
           "buffers you manage yourself; allocate pinned buffers once and reuse them.",
    .types = CP_TYPE_BIT(CP_REC_COPY),
    .init = pac_init,
    .rec = pac_rec,
    .finish = pac_finish,
    .done = pac_done,
};

/* --- blocking-copy ------------------------------------------------------------------- */

typedef struct cp_blk {
    cp_map agg;                 /* stack*8 + what -> cp_agg_val */
} cp_blk;

static int blk_init(cp_proc *p, void **st)
{
    (void)p;
    cp_blk *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    cp_map_init(&s->agg, sizeof(cp_agg_val));
    *st = s;
    return 0;
}

static void blk_rec(cp_proc *p, void *st, const cp_record *r)
{
    cp_blk *s = st;
    uint64_t what;
    uint64_t bytes = 0;
    if (r->ev.result != 0)
        return;
    if (r->type == CP_REC_COPY) {
        if ((r->u.copy.flags & CP_CF_ASYNC) || !cp_is_dev_class(r->u.copy.src_class) ||
            !cp_is_host_class(r->u.copy.dst_class))
            return;
        what = 0;
        bytes = r->u.copy.bytes;
    } else {
        what = r->u.sync.op;
    }
    cp_agg_val *v = cp_agg_add(&s->agg, r->ev.stack * 8 + (what & 7), r->ev.stack, bytes,
                               r->ev.dur_ns, r->ts);
    if (v && !v->note) {
        const char *n = p->dec ? cp_dec_api_name(p->dec, r->ev.api) : NULL;
        v->note = cp_sym_intern(n ? n : "?", n ? strlen(n) : 1);
    }
}

static void blk_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_blk *s = st;
    uint64_t copies = 0, syncs = 0, ns = 0, sites = 0;
    size_t it = 0;
    uint64_t key;
    cp_agg_val *v;
    while ((v = cp_map_next(&s->agg, &it, &key))) {
        if (v->count < CP_HOT_MIN)
            continue;
        sites++;
        ns += v->ns;
        if (key % 8 == 0)
            copies += v->count;
        else
            syncs += v->count;
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
    it = 0;
    while ((v = cp_map_next(&s->agg, &it, &key))) {
        if (v->count < CP_HOT_MIN)
            continue;
        cp_finding_site(f, p, v->stack, v->count, v->bytes, v->ns, v->note);
        f->count += v->count;
        f->bytes += v->bytes;
        f->ns += v->ns;
    }
    cp_finding_line(f, "A call site that waits for the GPU %d or more times is inside the "
                    "training or inference loop: each wait drains the GPU's queue.",
                    CP_HOT_MIN);
    cp_jb_ku(&f->details, "copies", copies);
    cp_jb_ku(&f->details, "synchronizations", syncs);
    cp_jb_ku(&f->details, "hot_loop_min_count", CP_HOT_MIN);
}

static void blk_done(void *st)
{
    cp_blk *s = st;
    cp_map_free(&s->agg);
    free(s);
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
    .types = CP_TYPE_BIT(CP_REC_COPY) | CP_TYPE_BIT(CP_REC_SYNC),
    .init = blk_init,
    .rec = blk_rec,
    .finish = blk_finish,
    .done = blk_done,
};
