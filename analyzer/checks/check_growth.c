/*
 * check_growth.c - memory-growth: device memory held keeps rising through
 * the run with no plateau.
 *
 * The held total is sampled per bucket of memory events (alloc/free); the
 * 64 buckets double their width whenever the run outgrows them, so the
 * timeline costs the same for ten events or a billion.  Each allocation
 * site keeps its live bytes at every bucket boundary (merged the same way),
 * which tells at the end which sites' memory arrived during the growth and
 * was still there when it ended.  The teardown (the frees after the last
 * allocation) is not part of the window.
 *
 * Growth = over 8 equal segments of the window, the floor (lowest held
 * total) rises from segment to segment at least 6 times of 7, still rises
 * in the last one, by 16 MiB or more in all, while memory is also being
 * freed (a loop at work, not a one-time setup).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_checks.h"
#include "cp_fw.h"

#define GB 64
#define GSEG 8
#define CP_GROWTH_MIN (16ull << 20)
#define CP_GROWTH_MIN_FREES 8

typedef struct gbucket {
    uint64_t min, max, ts0, ts1, frees;
    int used;
} gbucket;

typedef struct gsite {
    uint64_t stack, live, count;
    uint32_t touched;           /* at[] is valid below this bucket */
    uint64_t at[GB];            /* live bytes at the end of bucket i */
} gsite;

typedef struct cp_gr {
    gbucket b[GB];
    uint64_t width;             /* memory events per bucket */
    uint64_t seq;               /* device memory events seen */
    uint64_t last_alloc_seq;
    cp_map sites;               /* stack -> gsite */
    int torch_seen;
    uint64_t torch_n;           /* torch.periodic / torch.exit records */
    uint64_t t_alloc0, t_res0, t_alloc1, t_res1;
} cp_gr;

static const cp_state_map gr_maps[] = {
    CP_STATE_MAP(cp_gr, sites, gsite),
};

static int gr_init(cp_proc *p, void *st)
{
    cp_gr *s = st;
    (void)p;
    s->width = 1;
    return 0;
}

static void gr_merge(cp_gr *s)
{
    for (int i = 0; i < GB / 2; i++) {
        gbucket a = s->b[2 * i], c = s->b[2 * i + 1];
        gbucket m = a;
        if (c.used) {
            if (!a.used) {
                m = c;
            } else {
                m.min = c.min < a.min ? c.min : a.min;
                m.max = c.max > a.max ? c.max : a.max;
                m.ts1 = c.ts1;
                m.frees += c.frees;
            }
        }
        s->b[i] = m;
    }
    memset(&s->b[GB / 2], 0, sizeof s->b[0] * (GB / 2));
    size_t it = 0;
    gsite *g;
    while ((g = cp_map_next(&s->sites, &it, NULL))) {
        for (uint32_t i = 0; 2 * i + 1 < g->touched; i++)
            g->at[i] = g->at[2 * i + 1];
        g->touched /= 2;
    }
    s->width *= 2;
}

/* bytes / secs as an integer, saturated: times and sizes come from the
 * trace, and a double beyond 2^64 does not convert (UBSan, found by
 * tests/fuzz/fuzz_report.c). */
static uint64_t cp_rate_u64(double bytes, double secs)
{
    double r = secs > 0 ? bytes / secs : 0;
    if (!(r > 0))
        return 0;
    return r >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)r;
}

static uint64_t cp_held_all(const cp_proc *p)
{
    uint64_t t = 0;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        t += p->mem[d].held_total;
    return t;
}

/* bytes allocated (is_free 0) or freed (1) at site `stack`.  Unsigned on
 * purpose: sizes come from the trace and may be anything up to 2^64-1, so
 * no signed delta (and no negation of one) is ever formed. */
static void gr_site(cp_gr *s, uint64_t stack, uint32_t idx, uint64_t bytes, int is_free)
{
    gsite *g = cp_map_put(&s->sites, stack, NULL);
    if (!g)
        return;
    g->stack = stack;
    for (uint32_t j = g->touched; j < idx && j < GB; j++)
        g->at[j] = g->live;
    if (idx > g->touched)
        g->touched = idx;
    if (is_free)
        g->live = bytes > g->live ? 0 : g->live - bytes;
    else
        g->live += bytes;
    if (!is_free && bytes)
        g->count++;
}

/* One device memory event: total is the held total after it. */
static uint32_t gr_event(cp_gr *s, uint64_t total, uint64_t ts, int is_free)
{
    s->seq++;
    uint64_t idx = (s->seq - 1) / s->width;
    while (idx >= GB) {
        gr_merge(s);
        idx = (s->seq - 1) / s->width;
    }
    gbucket *b = &s->b[idx];
    if (!b->used) {
        b->used = 1;
        b->min = b->max = total;
        b->ts0 = ts;
    }
    if (total < b->min)
        b->min = total;
    if (total > b->max)
        b->max = total;
    b->ts1 = ts;
    b->frees += (uint64_t)is_free;
    return (uint32_t)idx;
}

static void gr_framework(cp_proc *p, cp_gr *s)
{
    if (!p->fw_ready_kind || (strcmp(p->fw_ready_kind, "torch.periodic") != 0 &&
                              strcmp(p->fw_ready_kind, "torch.exit") != 0))
        return;
    cp_jv v = { p->fw_ready_json, p->fw_ready_len }, devs, d;
    uint64_t a = 0, r = 0;
    size_t it = 0;
    if (cp_json_member(v, "devices", &devs))
        return;
    while (cp_json_next(devs, &it, &d) == 1) {
        cp_torch_dev td;
        if (cp_torch_dev_parse(d, &td) == 0) {
            a += td.allocated;
            r += td.reserved;
        }
    }
    if (!s->torch_seen) {
        s->torch_seen = 1;
        s->t_alloc0 = a;
        s->t_res0 = r;
    }
    s->t_alloc1 = a;
    s->t_res1 = r;
    s->torch_n++;
}

static void gr_rec(cp_proc *p, void *st, const cp_record *r)
{
    cp_gr *s = st;
    if (r->type == CP_REC_FRAMEWORK) {
        gr_framework(p, s);
        return;
    }
    if (r->ev.result != 0)
        return;
    if (r->type == CP_REC_ALLOC) {        /* after the model: total includes it */
        if (cp_hold_of_kind(r->u.alloc.kind) < 0)
            return;
        uint32_t idx = gr_event(s, cp_held_all(p), r->ts, 0);
        s->last_alloc_seq = s->seq;
        gr_site(s, r->ev.stack, idx, r->u.alloc.size, 0);
        return;
    }
    /* FREE, before the model: the allocation is still in the live map. */
    const cp_live *l = cp_model_freeing(p, r);
    if (!l || cp_hold_of_kind(l->kind) < 0)
        return;
    uint64_t total = cp_held_all(p);
    uint64_t stack = l->stack, size = l->size;
    uint32_t idx = gr_event(s, total >= size ? total - size : 0, r->ts, 1);
    gr_site(s, stack, idx, size, 1);
}

static void gr_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_gr *s = st;
    if (!s->last_alloc_seq)
        return;
    /* The window ends before the bucket of the last allocation: the
     * teardown must not look like a drop. */
    uint32_t w = (uint32_t)((s->last_alloc_seq - 1) / s->width);
    if (w < 2 * GSEG)
        return;
    uint64_t floor[GSEG], ts0[GSEG], frees = 0;
    for (int i = 0; i < GSEG; i++) {
        uint32_t a = (uint32_t)(i * w / GSEG), e = (uint32_t)((i + 1) * w / GSEG);
        floor[i] = UINT64_MAX;
        ts0[i] = s->b[a].ts0;
        for (uint32_t j = a; j < e; j++) {
            if (s->b[j].used && s->b[j].min < floor[i])
                floor[i] = s->b[j].min;
            frees += s->b[j].frees;
        }
    }
    int rises = 0, first_rise = -1;
    for (int i = 0; i + 1 < GSEG; i++)
        if (floor[i + 1] > floor[i]) {
            rises++;
            if (first_rise < 0)
                first_rise = i;
        }
    if (rises < GSEG - 2 || floor[GSEG - 1] <= floor[GSEG - 2] ||
        floor[GSEG - 1] < floor[0] + CP_GROWTH_MIN || frees < CP_GROWTH_MIN_FREES)
        return;
    uint64_t growth = floor[GSEG - 1] - floor[0];
    uint64_t t_end = s->b[w - 1].ts1, t_start = ts0[0];
    double secs = t_end > t_start ? (double)(t_end - t_start) / 1e9 : 0;
    char b1[32], b2[32], b3[32], b4[32], tb[32];
    cp_finding *f = cp_finding_new(rep, &cp_check_growth, p, "g");
    if (!f)
        return;
    f->sort = CP_SORT_BYTES;
    /* Sites: live bytes at the window's end minus at the growth's start. */
    uint32_t sb = (uint32_t)((first_rise + 1) * w / GSEG) - 1, eb = w - 1;
    size_t it = 0;
    gsite *g;
    while ((g = cp_map_next(&s->sites, &it, NULL))) {
        for (uint32_t j = g->touched; j < GB; j++)
            g->at[j] = g->live;
        g->touched = GB;
        if (g->at[eb] > g->at[sb]) {
            cp_finding_site(f, p, g->stack, g->count, g->at[eb] - g->at[sb], 0, NULL);
            f->count += g->count;
        }
    }
    f->bytes = growth;
    f->t_from = t_start;
    f->t_to = t_end;
    cp_finding_retitle(f, "device memory held grew by %s with no plateau (%s/s over %s)",
                       cp_fmt_bytes(growth, b1, sizeof b1),
                       cp_fmt_bytes(cp_rate_u64((double)growth, secs), b2,
                                    sizeof b2), cp_fmt_ns(t_end - t_start, tb, sizeof tb));
    cp_finding_line(f, "Lowest memory held in each eighth of the run: from %s to %s; "
                    "the sites below are where the added memory was allocated.",
                    cp_fmt_bytes(floor[0], b1, sizeof b1),
                    cp_fmt_bytes(floor[GSEG - 1], b3, sizeof b3));
    if (s->torch_seen && s->torch_n < 2) {
        /* One record (at exit) has no trend: say what holds the memory. */
        int tensors = s->t_alloc1 * 2 >= s->t_res1;
        cp_finding_line(f, "PyTorch at the end: %s allocated of %s reserved: %s",
                        cp_fmt_bytes(s->t_alloc1, b1, sizeof b1),
                        cp_fmt_bytes(s->t_res1, b2, sizeof b2),
                        tensors ? "live tensors hold the memory (references are being kept)"
                                : "most of it is the allocator's cache, not live tensors");
        cp_jb_ks(&f->details, "torch_cause", tensors ? "tensors" : "cache");
    } else if (s->torch_seen) {
        int tensors = s->t_alloc1 > s->t_alloc0 + growth / 2;
        cp_finding_line(f, "PyTorch: allocated %s -> %s, reserved %s -> %s: %s",
                        cp_fmt_bytes(s->t_alloc0, b1, sizeof b1),
                        cp_fmt_bytes(s->t_alloc1, b2, sizeof b2),
                        cp_fmt_bytes(s->t_res0, b3, sizeof b3),
                        cp_fmt_bytes(s->t_res1, b4, sizeof b4),
                        tensors ? "live tensors are growing (references are being kept)"
                                : "the cache grows while live tensors do not "
                                  "(fragmentation of the caching allocator)");
        cp_jb_ks(&f->details, "torch_cause", tensors ? "tensors" : "cache");
    }
    cp_jb_ku(&f->details, "growth_bytes", growth);
    cp_jb_kd(&f->details, "rate_bytes_per_s", secs > 0 ? (double)growth / secs : 0);
    cp_jb_kd(&f->details, "duration_s", secs);
    cp_jb_key(&f->details, "floor_bytes");
    cp_jb_open(&f->details, '[');
    for (int i = 0; i < GSEG; i++) {
        cp_jb_elem(&f->details);
        cp_jb_u64(&f->details, floor[i]);
    }
    cp_jb_close(&f->details, ']');
}

const cp_check cp_check_growth = {
    .id = "memory-growth",
    .sev = CP_SEV_WARNING,
    .name = "memory keeps growing",
    .explain = "The device memory this process holds rose steadily through the run and had "
               "not levelled off when it ended. A training or serving loop normally reaches "
               "a plateau after its first steps; steady growth means something allocated "
               "every iteration is kept: a list of tensors that still reference the graph "
               "(losses.append(loss) instead of loss.item()), a cache keyed by step, or "
               "buffers allocated per request and never freed. It ends in an out-of-memory "
               "error when the run is long enough.",
    .fix = "Look at the sites below: keep only what you need (loss.item() or "
           "loss.detach() when logging, clear per-step lists, bound caches), free buffers "
           "at the end of each iteration, and check that no reference outlives the step.",
    .types = CP_TYPE_BIT(CP_REC_ALLOC) | CP_TYPE_BIT(CP_REC_FREE) |
             CP_TYPE_BIT(CP_REC_FRAMEWORK),
    .pre_types = CP_TYPE_BIT(CP_REC_FREE),
    CP_CHECK_STATE(cp_gr, gr_maps),
    .init = gr_init,
    .rec = gr_rec,
    .finish = gr_finish,
};
