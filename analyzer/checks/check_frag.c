/*
 * check_frag.c - fragmentation: per device, memory that is held but cannot
 * serve the requests that come, or is thrown away and taken again.  One
 * number per device, from the best evidence the trace has:
 *   torch  1 - largest free block / free bytes inside PyTorch's allocator
 *          (framework records), with reserved minus allocated;
 *   retry  cached memory released after failed allocations (retry storms)
 *          / peak held;
 *   churn  bytes allocated again at a size just freed (same large sizes
 *          freed and allocated again: empty_cache() in a loop) / all bytes
 *          allocated;
 *   pool   (reserved - used) / reserved of a stream-ordered pool at an
 *          allocation failure;
 *   vmm    physical VMM memory not mapped anywhere / VMM memory held.
 *
 * Free space inside a caching allocator is what a cache is, so the number
 * alone is info.  The finding is a warning only when fragmentation cost
 * something on that device and the number is at least FR_WARN_VALUE: an
 * allocation failed there, PyTorch had to retry (num_alloc_retries,
 * num_ooms), cached memory was released in a retry storm, a pool held the
 * room at an allocation failure, or segments churned (the same large sizes
 * freed and allocated again through the driver, FR_CHURN_MIN_NS or more
 * spent in those calls).  A failure counts only when the memory the
 * fragmentation kept from it (reserved but unallocated, released in the
 * retry, or a pool's reserved but unused) was at least what it asked for:
 * a request larger than all of it (one larger than the card) fails the
 * same however the free space lies, as the oom verdict says (capacity).
 * Stream-ordered allocations (cuMemAllocAsync,
 * cuMemAllocFromPoolAsync) are served from their pool without a driver
 * call or a synchronisation: they are never churn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_advice.h"
#include "cp_checks.h"
#include "cp_fw.h"

extern const cp_check cp_check_frag;   /* defined at the end of this file */

#define FR_MIN_BYTES (64ull << 20)
#define FR_CHURN_MIN_SIZE CP_FREE_SITE_MIN_BYTES  /* smaller frees have no site */
/* Churn is a call into the driver and back (cp_free_site_kind, cp_trace.h):
 * memory a pool serves is not. */
#define FR_CHURN_MIN_COUNT 16
#define FR_TORCH_MIN_GAP (256ull << 20)
#define FR_CHURN_MIN_NS 1000000ull      /* 1 ms in churned driver calls */
#define FR_WARN_VALUE 0.10              /* below: the number says there is none */

typedef struct cp_frag_dev {
    int in_retry;
    uint64_t failures;          /* failed allocations on the device */
    uint64_t torch_retries, torch_ooms;     /* the highest counters PyTorch reported */
    uint64_t pending_release;   /* freed since the failure, not yet retried */
    uint64_t fail_stack, fail_size;
    uint64_t fail_min;          /* the smallest request that failed (driver or PyTorch), 0: none */
    int released_now;           /* this failure's release was counted */
    uint64_t released, storms;
    uint64_t churn_count, churn_bytes, churn_ns;
    int have_pool;
    uint64_t pool_reserved, pool_used;
    int have_torch;
    cp_torch_dev torch;         /* the record with the most reserved-but-unallocated */
    uint64_t t_first, t_last;   /* first and last evidence (failure, release, churn, record) */
} cp_frag_dev;

/* Evidence on d at time ts: the finding's time range covers it. */
static void fr_when(cp_frag_dev *d, uint64_t ts)
{
    if (!d->t_first)
        d->t_first = ts;
    d->t_last = ts;
}

/* A request of `size` failed on d: the smallest such is what fragmentation
 * must have kept from the program for the failures to be its cost. */
static void fr_failed(cp_frag_dev *d, uint64_t size)
{
    if (size && (!d->fail_min || size < d->fail_min))
        d->fail_min = size;
}

typedef struct cp_fr {
    cp_frag_dev d[CP_MAX_DEV];
    cp_map pending;             /* (dev << 56 | size) -> cp_frag_pend */
    cp_map churn_sites;         /* stack -> cp_agg_val */
    cp_map churn_free_sites;    /* stack of the free -> cp_agg_val */
    cp_map retry_sites;         /* stack -> cp_agg_val */
} cp_fr;

/* Frees of one size on one device not yet followed by an allocation of it. */
typedef struct cp_frag_pend {
    uint64_t n;
    uint64_t free_stack;        /* the latest of them */
} cp_frag_pend;

static const cp_state_map fr_maps[] = {
    CP_STATE_MAP(cp_fr, pending, cp_frag_pend),
    CP_STATE_MAP(cp_fr, churn_sites, cp_agg_val),
    CP_STATE_MAP(cp_fr, churn_free_sites, cp_agg_val),
    CP_STATE_MAP(cp_fr, retry_sites, cp_agg_val),
};

static uint64_t fr_gap(const cp_torch_dev *t)
{
    return t->reserved > t->allocated ? t->reserved - t->allocated : 0;
}

/* Keep, per device, the summary with the most reserved-but-unallocated
 * memory among those that carry the snapshot-derived fields. */
static void fr_keep(cp_fr *s, const cp_torch_dev *td, uint64_t ts)
{
    if (td->device < 0 || td->device >= CP_MAX_DEV)
        return;
    cp_frag_dev *d = &s->d[td->device];
    /* The counters only grow: the highest seen is the run's. */
    if (td->retries > d->torch_retries)
        d->torch_retries = td->retries;
    if (td->num_ooms > d->torch_ooms)
        d->torch_ooms = td->num_ooms;
    if (!td->have_frag)
        return;
    if (!d->have_torch || fr_gap(td) > fr_gap(&d->torch)) {
        d->have_torch = 1;
        d->torch = *td;
        if (fr_gap(td) >= FR_TORCH_MIN_GAP)
            fr_when(d, ts);
    }
}

static void fr_torch(cp_proc *p, cp_fr *s)
{
    const char *k = p->fw_ready_kind;
    if (!k || strncmp(k, "torch.", 6) != 0)
        return;
    cp_jv v = { p->fw_ready_json, p->fw_ready_len }, devs, o;
    cp_torch_dev td;
    if (strcmp(k, "torch.oom") == 0) {
        cp_torch_oom oom;
        if (cp_torch_dev_parse(v, &td) == 0) {
            fr_keep(s, &td, p->t_last);
            /* PyTorch may refuse without a driver failure (a memory
             * fraction): its request is known from the record only. */
            if (td.device >= 0 && td.device < CP_MAX_DEV &&
                cp_torch_oom_parse(p->fw_ready_json, p->fw_ready_len, &oom) == 0)
                fr_failed(&s->d[td.device], oom.request);
        }
        return;
    }
    if (cp_json_member(v, "devices", &devs))
        return;
    size_t it = 0;
    while (cp_json_next(devs, &it, &o) == 1) {
        if (cp_torch_dev_parse(o, &td) == 0)
            fr_keep(s, &td, p->t_last);
    }
}

/* The rest of fragmentation's records: inline too (cp_checks.h). */
static inline __attribute__((always_inline)) void
fr_rec_full(cp_proc *p, void *st, const cp_record *r)
{
    cp_fr *s = st;
    if (r->type == CP_REC_FRAMEWORK) {
        fr_torch(p, s);
        return;
    }
    if (r->type == CP_REC_POOL) {
        if (r->u.pool.op != CP_POOL_ATTR_AT_FAILURE || r->ev.dev < 0 || r->ev.dev >= CP_MAX_DEV)
            return;
        cp_frag_dev *d = &s->d[r->ev.dev];
        d->have_pool = 1;
        if (r->u.pool.attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
            d->pool_reserved = r->u.pool.value;
        else if (r->u.pool.attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
            d->pool_used = r->u.pool.value;
        return;
    }
    if (r->type == CP_REC_FREE) {       /* before the model */
        if (r->ev.result != 0)
            return;
        const cp_live *l = cp_model_freeing(p, r);
        if (!l || l->dev < 0 || l->dev >= CP_MAX_DEV || cp_hold_of_kind(l->kind) < 0)
            return;
        cp_frag_dev *d = &s->d[l->dev];
        if (d->in_retry)
            d->pending_release += l->size;
        if (l->size >= FR_CHURN_MIN_SIZE && cp_free_site_kind(l->kind)) {
            cp_frag_pend *n = cp_map_put(&s->pending, ((uint64_t)l->dev << 56) | l->size, NULL);
            if (n) {
                n->n++;
                n->free_stack = r->ev.stack;
            }
        }
        return;
    }
    /* ALLOC */
    int dev = (int)r->ev.dev;
    if (dev < 0 || dev >= CP_MAX_DEV || cp_hold_of_kind(r->u.alloc.kind) < 0)
        return;
    cp_frag_dev *d = &s->d[dev];
    /* Memory freed after a failure counts once the program tries again:
     * a release followed by a retry is the allocator's cache giving way;
     * frees with no retry are the program cleaning up. */
    if (d->in_retry && d->pending_release) {
        if (!d->released_now) {
            d->storms++;
            cp_agg_add(&s->retry_sites, d->fail_stack, d->fail_stack, d->fail_size, 0, r->ts);
            fr_when(d, r->ts);
        }
        d->released_now = 1;
        d->released += d->pending_release;
        d->pending_release = 0;
    }
    if (r->ev.result == CUDA_ERROR_OUT_OF_MEMORY) {
        d->failures++;
        fr_failed(d, r->u.alloc.size);
        fr_when(d, r->ts);
        if (!d->in_retry) {
            d->fail_stack = r->ev.stack;
            d->fail_size = r->u.alloc.size;
            d->released_now = 0;
        }
        d->in_retry = 1;
        return;
    }
    if (r->ev.result != 0)
        return;
    d->in_retry = 0;
    d->pending_release = 0;
    uint64_t key = ((uint64_t)dev << 56) | r->u.alloc.size;
    cp_frag_pend *n = r->u.alloc.size >= FR_CHURN_MIN_SIZE && cp_free_site_kind(r->u.alloc.kind)
                     ? cp_map_get(&s->pending, key) : NULL;
    if (n && n->n) {
        n->n--;
        d->churn_count++;
        d->churn_bytes += r->u.alloc.size;
        fr_when(d, r->ts);
        d->churn_ns += r->ev.dur_ns;
        cp_agg_add(&s->churn_sites, r->ev.stack, r->ev.stack, r->u.alloc.size, 0, r->ts);
        /* The free is where the fix goes (empty_cache() in the loop). */
        cp_agg_add(&s->churn_free_sites, n->free_stack, n->free_stack, r->u.alloc.size, 0,
                   r->ts);
    }
}

/* A successful ALLOC on a device outside a retry, of a size or kind that
 * cannot be churn (four in five of them in a training run), changes
 * nothing: fr_rec_full() sets in_retry and pending_release to 0, which
 * they are (pending_release grows only while in_retry), and looks up no
 * pending free.  Before it: inlined into the checks' dispatch. */
__attribute__((always_inline)) inline void
cp_check_frag_rec(cp_proc *p, void *st, const cp_record *r)
{
    const cp_fr *s = st;
    uint64_t dev = (uint64_t)r->ev.dev;     /* -1 (none) is out of range too */
    if (r->type == CP_REC_ALLOC && r->ev.result == 0 && dev < CP_MAX_DEV &&
        !s->d[dev].in_retry &&
        (r->u.alloc.size < FR_CHURN_MIN_SIZE || !cp_free_site_kind(r->u.alloc.kind)))
        return;
    fr_rec_full(p, st, r);
}

typedef struct cp_frag_num {
    double value;
    const char *method, *how;
    uint64_t bytes;
    int hurt;                   /* it cost something (see the file comment) */
    uint64_t room;              /* what the fragmentation kept from a failed request */
    int too_big;                /* every failure asked for more than room */
} cp_frag_num;

static int fr_churned(const cp_devmem *m, const cp_frag_dev *d)
{
    return d->churn_count >= FR_CHURN_MIN_COUNT && d->churn_bytes >= 4 * m->peak_total &&
           d->churn_bytes >= FR_MIN_BYTES;
}

static int fr_stormed(const cp_frag_dev *d)
{
    return d->storms && d->released >= FR_MIN_BYTES;
}

/* The device's number from the best evidence, or 0 when nothing is wrong. */
static int fr_number(const cp_proc *p, const cp_frag_dev *d, int dev, cp_frag_num *n)
{
    const cp_devmem *m = &p->mem[dev];
    uint64_t pool_room = d->have_pool && d->pool_reserved > d->pool_used
                         ? d->pool_reserved - d->pool_used : 0;
    n->room = d->have_torch ? fr_gap(&d->torch) : 0;
    n->room = d->released > n->room ? d->released : n->room;
    n->room = pool_room > n->room ? pool_room : n->room;
    /* Failures, retries and releases are fragmentation's cost only when
     * the room it kept could have served the smallest request that
     * failed (unknown size: it may have). */
    int failed = d->failures || d->torch_retries || d->torch_ooms || fr_stormed(d);
    n->too_big = failed && d->fail_min > n->room;
    n->hurt = (failed && !n->too_big) || (fr_churned(m, d) && d->churn_ns >= FR_CHURN_MIN_NS);
    if (d->have_torch && d->torch.free_bytes) {
        uint64_t gap = d->torch.reserved > d->torch.allocated
                           ? d->torch.reserved - d->torch.allocated : 0;
        n->value = 1.0 - (double)d->torch.largest_free / (double)d->torch.free_bytes;
        n->method = "torch";
        n->how = "1 - largest free block / free bytes inside PyTorch's allocator";
        n->bytes = gap;
        if (n->value >= 0.5 && gap >= FR_TORCH_MIN_GAP)
            return 1;
    }
    if (fr_stormed(d)) {
        n->value = m->peak_total ? (double)d->released / (double)m->peak_total : 1.0;
        n->method = "retry";
        n->how = "cached memory released after failed allocations / peak held";
        n->bytes = d->released;
        return 1;
    }
    if (fr_churned(m, d)) {
        n->value = m->alloc_bytes ? (double)d->churn_bytes / (double)m->alloc_bytes : 0;
        n->method = "churn";
        n->how = "bytes allocated again at a size just freed / bytes allocated";
        n->bytes = d->churn_bytes;
        return 1;
    }
    if (d->have_pool && d->pool_reserved > d->pool_used &&
        d->pool_reserved - d->pool_used >= FR_MIN_BYTES &&
        (double)(d->pool_reserved - d->pool_used) >= 0.3 * (double)d->pool_reserved) {
        n->value = (double)(d->pool_reserved - d->pool_used) / (double)d->pool_reserved;
        n->method = "pool";
        n->how = "(pool reserved - pool used) / pool reserved, at the allocation failure";
        n->bytes = d->pool_reserved - d->pool_used;
        n->hurt = !n->too_big;
        return 1;
    }
    uint64_t vmm = m->held[CP_HOLD_VMM];
    if (vmm > m->vmm_mapped && vmm - m->vmm_mapped >= FR_MIN_BYTES &&
        (double)(vmm - m->vmm_mapped) >= 0.25 * (double)vmm) {
        n->value = (double)(vmm - m->vmm_mapped) / (double)vmm;
        n->method = "vmm";
        n->how = "VMM memory created but not mapped / VMM memory held (at the end)";
        n->bytes = vmm - m->vmm_mapped;
        return 1;
    }
    return 0;
}

static void fr_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_fr *s = st;
    cp_finding *f = NULL;
    char dn[192], b1[32], b2[32], b3[32], summary[512] = "";
    int n_dev = 0, hurt = 0;
    for (int dev = 0; dev < CP_MAX_DEV; dev++) {
        cp_frag_num n = { 0 };
        if (!fr_number(p, &s->d[dev], dev, &n))
            continue;
        if (!f) {
            f = cp_finding_new(rep, &cp_check_frag, p, "f");
            if (!f)
                return;
            f->sort = CP_SORT_BYTES;
            cp_advice_fix(f, p, CP_ADV_FRAG);
            cp_jb_key(&f->details, "devices");
            cp_jb_open(&f->details, '[');
        }
        n_dev++;
        int warn = n.hurt && n.value >= FR_WARN_VALUE;
        hurt |= warn;
        const cp_frag_dev *dw = &s->d[dev];
        if (dw->t_first && (!f->t_from || dw->t_first < f->t_from))
            f->t_from = dw->t_first;
        if (dw->t_last > f->t_to)
            f->t_to = dw->t_last;
        size_t l = strlen(summary);
        /* The title says how much memory the number is about, so that a
         * reader who sees only titles can weigh it. */
        snprintf(summary + l, sizeof summary - l, "%sGPU %d %.2f (%s involved)", l ? ", " : "", dev,
                 n.value, cp_fmt_bytes(n.bytes, b1, sizeof b1));
        cp_finding_line(f, "%s: %.2f = %s (%s involved).", cp_dev_name(p, dev, dn, sizeof dn),
                        n.value, n.how, cp_fmt_bytes(n.bytes, b1, sizeof b1));
        const cp_frag_dev *d = &s->d[dev];
        if (d->have_torch)
            cp_finding_line(f, "  PyTorch: reserved %s, allocated %s, largest free block %s.",
                            cp_fmt_bytes(d->torch.reserved, b1, sizeof b1),
                            cp_fmt_bytes(d->torch.allocated, b2, sizeof b2),
                            cp_fmt_bytes(d->torch.largest_free, b3, sizeof b3));
        if (d->storms)
            cp_finding_line(f, "  %llu allocation failure%s made the program release %s of "
                            "cached memory.", (unsigned long long)d->storms,
                            d->storms == 1 ? "" : "s", cp_fmt_bytes(d->released, b1, sizeof b1));
        if (d->churn_count)
            cp_finding_line(f, "  %llu driver allocations (%s) reused a size that had just been "
                            "freed; they took %s in the driver (a warning from %s).",
                            (unsigned long long)d->churn_count,
                            cp_fmt_bytes(d->churn_bytes, b1, sizeof b1),
                            cp_fmt_ns(d->churn_ns, b2, sizeof b2),
                            cp_fmt_ns(FR_CHURN_MIN_NS, b3, sizeof b3));
        if (d->failures || d->torch_retries || d->torch_ooms)
            cp_finding_line(f, "  %llu allocation%s failed on the device; PyTorch counted %llu "
                            "retr%s and %llu out-of-memory error%s.",
                            (unsigned long long)d->failures, d->failures == 1 ? "" : "s",
                            (unsigned long long)d->torch_retries,
                            d->torch_retries == 1 ? "y" : "ies",
                            (unsigned long long)d->torch_ooms, d->torch_ooms == 1 ? "" : "s");
        if (n.too_big)
            cp_finding_line(f, "  The smallest request that failed asked for %s, more than "
                            "the %s the fragmentation kept free%s: it would have failed in one "
                            "piece too, so it is not this finding's cost.",
                            cp_fmt_bytes(d->fail_min, b1, sizeof b1),
                            cp_fmt_bytes(n.room, b2, sizeof b2),
                            n.hurt ? "" : " (info)");
        if (!n.hurt && !n.too_big)
            cp_finding_line(f, "  It cost nothing here: no allocation failed, nothing was "
                            "retried, released in a retry storm or churned for %s or more. "
                            "Free space kept by a caching allocator is its cache.",
                            cp_fmt_ns(FR_CHURN_MIN_NS, b1, sizeof b1));
        else if (!warn)
            cp_finding_line(f, "  %.2f is below %.2f: too little fragmentation to have caused "
                            "what went wrong (info).", n.value, FR_WARN_VALUE);
        f->ns += d->churn_ns;
        cp_jb_open(&f->details, '{');
        cp_jb_ki(&f->details, "ordinal", dev);
        cp_jb_ks(&f->details, "uuid", cp_dev_uuid(p, dev, dn, sizeof dn));
        cp_jb_kd(&f->details, "value", n.value);
        cp_jb_ks(&f->details, "method", n.method);
        cp_jb_ks(&f->details, "computed_as", n.how);
        cp_jb_ku(&f->details, "bytes", n.bytes);
        if (d->have_torch)
            cp_jb_ku(&f->details, "reserved_minus_allocated",
                     d->torch.reserved > d->torch.allocated
                         ? d->torch.reserved - d->torch.allocated : 0);
        cp_jb_ku(&f->details, "released_in_retries", d->released);
        cp_jb_ku(&f->details, "churn_bytes", d->churn_bytes);
        cp_jb_ku(&f->details, "churn_ns", d->churn_ns);
        cp_jb_ku(&f->details, "failed_allocations", d->failures);
        cp_jb_ku(&f->details, "smallest_failed_request", d->fail_min);
        cp_jb_ku(&f->details, "room_for_failed", n.room);
        cp_jb_kb(&f->details, "hurt", n.hurt);
        cp_jb_kb(&f->details, "warning", warn);
        cp_jb_close(&f->details, '}');
        f->bytes += n.bytes;
        f->count++;
    }
    if (!f)
        return;
    cp_jb_close(&f->details, ']');
    if (!hurt)
        f->sev = CP_SEV_INFO;
    cp_finding_retitle(f, "fragmentation on %d GPU%s: %s%s", n_dev, n_dev == 1 ? "" : "s",
                       summary, hurt ? "" : "; it cost nothing in this run");
    size_t it = 0;
    cp_agg_val *v;
    while ((v = cp_map_next(&s->churn_sites, &it, NULL)))
        cp_finding_site(f, p, v->stack, v->count, v->bytes, 0, "re-allocated after a free");
    it = 0;
    while ((v = cp_map_next(&s->churn_free_sites, &it, NULL)))
        cp_finding_site(f, p, v->stack, v->count, v->bytes, 0,
                        "freed, then allocated again at the same size");
    it = 0;
    while ((v = cp_map_next(&s->retry_sites, &it, NULL)))
        cp_finding_site(f, p, v->stack, v->count, v->bytes, 0, "failed, cache released");
}

const cp_check cp_check_frag = {
    .id = "fragmentation",
    .sev = CP_SEV_WARNING,
    .name = "memory held but not usable",
    .explain = "Memory was held that could not serve the requests that came: free space "
               "inside a caching allocator split into blocks smaller than what is asked for, "
               "cached segments released only after an allocation failed (every release "
               "synchronises the device), a pool that reserves far more than it uses, or "
               "large buffers freed and allocated again at the same size (empty_cache() in a "
               "loop), which costs a driver call and a device synchronisation each time.",
    .fix = "For PyTorch set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or "
           "max_split_size_mb with a value of 21 or more), allocate the large, long-lived tensors first, do not call "
           "torch.cuda.empty_cache() inside the loop; for plain programs reuse buffers "
           "instead of freeing and reallocating them, and trim pools (cuMemPoolTrimTo).",
    .types = CP_TYPE_BIT(CP_REC_ALLOC) | CP_TYPE_BIT(CP_REC_FREE) | CP_TYPE_BIT(CP_REC_POOL) |
             CP_TYPE_BIT(CP_REC_FRAMEWORK),
    .pre_types = CP_TYPE_BIT(CP_REC_FREE),
    CP_CHECK_STATE(cp_fr, fr_maps),
    .rec = cp_check_frag_rec,
    .finish = fr_finish,
};
