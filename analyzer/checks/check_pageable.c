/*
 * check_pageable.c - pageable-async-copy: "async" copies whose host side is
 * pageable memory (the copy is synchronous; the program waited for it).
 */
#include <stdlib.h>
#include <string.h>

#include "cp_advice.h"
#include "check_copy.h"

extern const cp_check cp_check_pageable;   /* defined at the end of this file */

/* A pageable-async-copy site is worth a warning from this much on. */
#define CP_PAC_MIN_NS 1000000ull
#define CP_PAC_MIN_BYTES (1ull << 20)

/* --- pageable-async-copy ----------------------------------------------------------- */

typedef struct cp_pac {
    cp_map agg;                 /* stack*2 + (1 for DtoH) -> cp_agg_val */
    cp_map pend;                /* tid -> cp_pend */
    uint64_t n_set;             /* entries of pend with set: none (the usual
                                 * case) spares every record the lookup */
    uint64_t htod, dtoh, blocking;
} cp_pac;

static const cp_state_map pac_maps[] = {
    CP_STATE_MAP(cp_pac, agg, cp_agg_val),
    CP_STATE_MAP(cp_pac, pend, cp_pend),
};

static void pac_commit(cp_pac *s, cp_pend *c)
{
    cp_agg_val *v = cp_agg_add(&s->agg, c->stack * 2 + (uint64_t)c->dtoh, c->stack, c->bytes,
                               c->ns, c->ts);
    if (v && !v->note)
        v->note = c->dtoh ? "device to pageable host" : "pageable host to device";
    if (c->dtoh)
        s->dtoh++;
    else
        s->htod++;
    c->set = 0;
    s->n_set--;
}

static __attribute__((noinline)) void pac_rec_full(cp_pac *s, const cp_record *r)
{
    cp_pend *c = s->n_set ? cp_map_get(&s->pend, r->tid) : NULL;
    if (c && c->set) {
        if (cp_pend_synced_by(c, r)) {
            s->blocking++;      /* a blocking copy, as meant */
            c->set = 0;
            s->n_set--;
        } else {
            pac_commit(s, c);
        }
    }
    int dtoh;
    if (!cp_pageable_async(r, &dtoh))
        return;
    c = cp_map_put(&s->pend, r->tid, NULL);
    if (c) {
        s->n_set += !c->set;
        cp_pend_set(c, r, dtoh, 0);
    }
}

/* The records that end nothing, and with nothing pending the ones that
 * start nothing, without pac_rec_full()'s frame: inlined into the checks'
 * dispatch. */
__attribute__((always_inline)) inline void
cp_check_pageable_rec(cp_proc *p, void *st, const cp_record *r)
{
    cp_pac *s = st;
    int dtoh;
    (void)p;
    if (!cp_pend_ender(r) || (!s->n_set && !cp_pageable_async(r, &dtoh)))
        return;
    pac_rec_full(s, r);
}

static void pac_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_pac *s = st;
    size_t it = 0;
    cp_pend *c;
    while ((c = cp_map_next(&s->pend, &it, NULL)))
        if (c->set)
            pac_commit(s, c);
    if (!s->agg.n)
        return;
    char b1[32], b2[32], b3[32];
    int big = 0;
    cp_agg_val *v;
    it = 0;
    while ((v = cp_map_next(&s->agg, &it, NULL)))
        big |= v->ns >= CP_PAC_MIN_NS || v->bytes >= CP_PAC_MIN_BYTES;
    cp_finding *f = cp_finding_new(rep, &cp_check_pageable, p, "pageable");
    if (!f)
        return;
    /* A few bytes copied now and then (a scalar) cost nothing worth a
     * warning; the sites are still listed. */
    if (!big)
        f->sev = CP_SEV_INFO;
    f->sort = CP_SORT_NS;
    cp_advice_fix(f, p, CP_ADV_PINNED);
    cp_finding_sites_from(f, p, &s->agg);
    cp_finding_retitle(f, "%llu async cop%s with pageable host memory (%s) blocked the "
                       "caller for %s", (unsigned long long)f->count,
                       f->count == 1 ? "y" : "ies", cp_fmt_bytes(f->bytes, b1, sizeof b1),
                       cp_fmt_ns(f->ns, b2, sizeof b2));
    cp_finding_line(f, "%llu host-to-device and %llu device-to-host copies were issued as "
                    "asynchronous but ran synchronously: the host side was not pinned.",
                    (unsigned long long)s->htod, (unsigned long long)s->dtoh);
    if (!big)
        cp_finding_line(f, "No site moved %s or blocked for %s: too little to matter.",
                        cp_fmt_bytes(CP_PAC_MIN_BYTES, b1, sizeof b1),
                        cp_fmt_ns(CP_PAC_MIN_NS, b3, sizeof b3));
    cp_jb_ku(&f->details, "htod_count", s->htod);
    cp_jb_ku(&f->details, "dtoh_count", s->dtoh);
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
               "nothing and the caller was blocked for the time shown. A copy followed at once by a "
               "synchronisation of its stream (PyTorch's default non_blocking=False) was "
               "meant to block and is not counted.",
    .fix = "Pin the host memory: DataLoader(pin_memory=True), tensor.pin_memory(), "
           "torch.empty(..., pin_memory=True), or cuMemHostAlloc / cudaHostRegister for "
           "buffers you manage yourself; allocate pinned buffers once and reuse them.",
    .types = CP_TYPE_BIT(CP_REC_COPY) | CP_TYPE_BIT(CP_REC_MEMSET) | CP_TYPE_BIT(CP_REC_SYNC) |
             CP_TYPE_BIT(CP_REC_ALLOC),
    CP_CHECK_STATE(cp_pac, pac_maps),
    .rec = cp_check_pageable_rec,
    .finish = pac_finish,
};
