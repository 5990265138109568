/*
 * cp_ledger.c - the per-process tables of cp_ledger.h: calls per API,
 * copies per device, OOMs with PyTorch's segments, the first time each call
 * site was seen; the call-site accounting is cp_ledger_sites.c's.
 *
 * A call is a record of it: the records that only describe a call recorded
 * on its own (OOM repeats the failed allocation's EV, XDEV a launch's,
 * ASYNC_ERROR the failing call's) are not counted again, and launches are
 * the LAUNCH_COUNT records' counts (the shim counts them instead of
 * recording each, so they have no time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_ledger.h"
#include "cp_fw.h"
#include "cp_grow.h"
#include "cp_model.h"

#define CP_LG_MAX_API 65536     /* ids above are a damaged trace's */

cp_ledger *cp_ledger_new(int timeline)
{
    cp_ledger *lg = calloc(1, sizeof *lg);
    if (lg) {
        lg->timeline = timeline;
        cp_map_init(&lg->site_ix, sizeof(size_t));
        cp_map_init(&lg->first_ts, sizeof(uint64_t));
    }
    return lg;
}

void cp_ledger_free(cp_ledger *lg)
{
    if (!lg)
        return;
    for (size_t i = 0; i < lg->n_api; i++)
        free(lg->api[i].hist);
    free(lg->api);
    free(lg->site);
    cp_map_free(&lg->site_ix);
    cp_map_free(&lg->first_ts);
    for (int i = 0; i < lg->n_oom; i++)
        free(lg->oom[i].seg);
    free(lg->ser);
    free(lg->gone);
    free(lg);
}

const char *cp_lg_dir_name(int dir)
{
    static const char *const n[CP_LG_DIR_N] = { "HtoD", "DtoH", "DtoD", "HtoH" };
    return dir >= 0 && dir < CP_LG_DIR_N ? n[dir] : "?";
}

const char *cp_lg_cls_name(int cls)
{
    return cls == CP_LG_CLS_DEVICE ? "device" : cp_copy_class_name(cls);
}

/* --- durations -------------------------------------------------------------------------- */

/* Exact below 64 ns, then 32 buckets per power of two (about 3% wide). */
static int cp_lg_hist_ix(uint64_t v)
{
    if (v < 64)
        return (int)v;
    int o = 63 - __builtin_clzll(v);
    return 64 + (o - 6) * 32 + (int)((v >> (o - 5)) & 31);
}

static void cp_lg_hist_range(int i, uint64_t *lo, uint64_t *width)
{
    if (i < 64) {
        *lo = (uint64_t)i;
        *width = 1;
        return;
    }
    int o = (i - 64) / 32 + 6, sub = (i - 64) % 32;
    *lo = (uint64_t)(32 + sub) << (o - 5);
    *width = 1ull << (o - 5);
}

uint64_t cp_ledger_median(const cp_lg_api *a)
{
    if (!a->timed || !a->hist)
        return 0;
    uint64_t want = (a->timed + 1) / 2, seen = 0;
    for (int i = 0; i < CP_LG_HIST; i++) {
        seen += a->hist[i];
        if (seen < want)
            continue;
        uint64_t lo, w;
        cp_lg_hist_range(i, &lo, &w);
        uint64_t m = lo + w / 2;
        return m < a->min_ns ? a->min_ns : m > a->max_ns ? a->max_ns : m;
    }
    return a->max_ns;
}

void cp_ledger_hist_add(uint32_t *dst, const uint32_t *src)
{
    for (int i = 0; i < CP_LG_HIST; i++)
        dst[i] += src[i];
}

static cp_lg_api *cp_lg_api_of(cp_ledger *lg, uint64_t id)
{
    if (id >= CP_LG_MAX_API)
        return NULL;
    if (id >= lg->n_api) {
        size_t n = (size_t)id + 1, cap = lg->n_api;
        cp_lg_api *a = realloc(lg->api, n * sizeof *a);
        if (!a) {
            lg->err = ENOMEM;
            return NULL;
        }
        memset(a + cap, 0, (n - cap) * sizeof *a);
        lg->api = a;
        lg->n_api = n;
    }
    return &lg->api[id];
}

static void cp_lg_call(cp_ledger *lg, const cp_record *r, int timed)
{
    cp_lg_api *a = cp_lg_api_of(lg, r->ev.api);
    if (!a)
        return;
    a->calls++;
    if (r->ev.result != 0)
        a->errors++;
    if (!timed)
        return;
    uint64_t d = r->ev.dur_ns;
    if (!a->hist && !(a->hist = calloc(CP_LG_HIST, sizeof *a->hist))) {
        lg->err = ENOMEM;
        return;
    }
    a->hist[cp_lg_hist_ix(d)]++;
    if (!a->timed || d < a->min_ns)
        a->min_ns = d;
    if (d > a->max_ns)
        a->max_ns = d;
    a->timed++;
    a->total_ns += d;
}

/* --- copies ---------------------------------------------------------------------------- */

static int cp_lg_host(uint64_t c)
{
    return c == CP_MC_PINNED || c == CP_MC_REGISTERED || c == CP_MC_PAGEABLE;
}

static void cp_lg_copy(cp_ledger *lg, const cp_record *r)
{
    const typeof(r->u.copy) *c = &r->u.copy;
    int hs = cp_lg_host(c->src_class), hd = cp_lg_host(c->dst_class);
    int dir = hs ? (hd ? CP_LG_HTOH : CP_LG_HTOD) : (hd ? CP_LG_DTOH : CP_LG_DTOD);
    int cls = cp_series_copy_class(r);
    if (cls < 0)
        cls = CP_LG_CLS_DEVICE;
    int64_t dev = r->ev.dev;
    if (dev < 0)
        dev = hd ? c->src_dev : c->dst_dev;
    if (dev < 0 || dev >= 64)
        return;
    cp_lg_dev *v = &lg->dev[dev];
    v->seen = 1;
    v->copies[dir][cls]++;
    v->copy_bytes[dir][cls] += c->bytes;
    if (cp_series_copy_blocks(r)) {
        v->blocked_ns += r->ev.dur_ns;
        v->n_blocking++;
    }
}

/* --- OOMs ------------------------------------------------------------------------------ */

static cp_lg_oom *cp_lg_oom_new(cp_ledger *lg, uint64_t ts, int dev)
{
    if (lg->n_oom == CP_LG_OOMS)
        return NULL;
    cp_lg_oom *o = &lg->oom[lg->n_oom++];
    memset(o, 0, sizeof *o);
    o->ts = ts;
    o->dev = dev;
    return o;
}

static void cp_lg_on_oom(cp_ledger *lg, const cp_record *r)
{
    cp_lg_oom *o = cp_lg_oom_new(lg, r->ts, (int)r->ev.dev);
    if (!o)
        return;
    o->driver = 1;
    o->request = r->u.oom.requested;
    cp__lg_oom_sites(lg, o);
}

static void cp_lg_seg_parse(cp_jv s, cp_lg_seg *g)
{
    cp_jv fb, e;
    memset(g, 0, sizeof *g);
    cp_json_u64(s, "address", &g->address);
    cp_json_u64(s, "total_size", &g->total);
    cp_json_u64(s, "allocated_size", &g->allocated);
    cp_json_u64(s, "active_size", &g->active);
    uint64_t nf = 0;
    size_t it = 0;
    if (cp_json_member(s, "free_blocks", &fb) == 0) {
        while (cp_json_next(fb, &it, &e) == 1) {
            char *end;
            uint64_t v = strtoull(e.p, &end, 10);
            if (end == e.p)
                continue;
            if (g->n_free < CP_LG_SEG_FREE)
                g->free[g->n_free++] = v;
            nf++;
        }
    } else {
        cp_json_u64(s, "n_free_blocks", &nf);
    }
    g->n_free_all = (uint32_t)(nf > UINT32_MAX ? UINT32_MAX : nf);
}

static int cp_lg_seg_cmp(const void *a, const void *b)
{
    const cp_lg_seg *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return x->address < y->address ? -1 : x->address > y->address;
}

void cp__lg_torch_oom(cp_ledger *lg, const char *json, size_t n, uint64_t ts)
{
    cp_jv v = { json, n }, segs, s;
    int64_t dev = -1;
    uint64_t req = 0;
    cp_json_i64(v, "device", &dev);
    cp_json_u64(v, "request_bytes", &req);
    cp_lg_oom *o = NULL;
    for (int i = lg->n_oom - 1; i >= 0 && !o; i--)
        if (lg->oom[i].dev == dev && !lg->oom[i].seg)
            o = &lg->oom[i];
    if (!o && !(o = cp_lg_oom_new(lg, ts, (int)dev)))
        return;
    if (!o->request)
        o->request = req;
    if (!o->n_top)
        cp__lg_oom_sites(lg, o);
    if (cp_json_member(v, "segments", &segs) != 0)
        return;
    size_t it = 0, cap = 0;
    while (cp_json_next(segs, &it, &s) == 1) {
        o->n_seg_all++;
        if (cp_grow((void **)&o->seg, &cap, (size_t)o->n_seg + 1, sizeof *o->seg, 8) != 0) {
            lg->err = ENOMEM;
            break;
        }
        cp_lg_seg_parse(s, &o->seg[o->n_seg++]);
    }
    /* The largest first, as memory_viz lays them out; only the first
     * CP_LG_SEGS kept. */
    if (o->seg)
        qsort(o->seg, (size_t)o->n_seg, sizeof *o->seg, cp_lg_seg_cmp);
    if (o->n_seg > CP_LG_SEGS)
        o->n_seg = CP_LG_SEGS;
}

/* --- records --------------------------------------------------------------------------- */

static void cp_lg_gone(cp_ledger *lg, const cp_live *l, int temp)
{
    if (l->dev < 0 || l->dev >= 64 || cp_hold_of_kind(l->kind) < 0)
        return;
    if (cp_grow((void **)&lg->gone, &lg->cap_gone, lg->n_gone + 1, sizeof *lg->gone, 4) != 0) {
        lg->err = ENOMEM;
        return;
    }
    lg->gone[lg->n_gone++] = (struct cp_lg_gone){ l->size, l->stack, l->dev, temp };
}

void cp_ledger_pre(cp_ledger *lg, cp_proc *p, const cp_record *r)
{
    if (r->type == CP_REC_FREE) {
        const cp_live *l = cp_model_freeing(p, r);
        /* No memory event since its allocation: a temporary one. */
        if (l)
            cp_lg_gone(lg, l, l->seq == p->mem_seq);
        return;
    }
    uint64_t ctx;
    int dev;
    if (r->type != CP_REC_CTX || !cp_model_ctx_ending(p, r, &ctx, &dev))
        return;
    /* The driver frees what the context still held. */
    const cp_lives *maps[2] = { &p->live_dev, &p->live_vmm };
    for (int i = 0; i < 2; i++) {
        size_t it = 0;
        const cp_live *l;
        while ((l = cp_lives_next(maps[i], &it)))
            if (l->ctx == ctx)
                cp_lg_gone(lg, l, 0);
    }
}

static void cp_lg_first_seen(cp_ledger *lg, uint64_t stack, uint64_t ts)
{
    int created;
    uint64_t *v = cp_map_put(&lg->first_ts, stack, &created);
    if (!v)
        lg->err = ENOMEM;
    else if (created)
        *v = ts ? ts : 1;
}

void cp_ledger_post(cp_ledger *lg, cp_proc *p, const cp_record *r)
{
    unsigned t = r->type;
    if (cp_rec_has_ev(t) && r->ev.stack)
        cp_lg_first_seen(lg, r->ev.stack, r->ts);
    for (size_t i = 0; i < lg->n_gone; i++) {
        const struct cp_lg_gone *g = &lg->gone[i];
        cp__lg_site_free(lg, p, g->stack, g->dev, g->size, g->temp);
    }
    lg->n_gone = 0;
    switch (t) {
    case CP_REC_OOM:
        cp_lg_on_oom(lg, r);
        return;
    case CP_REC_XDEV:
    case CP_REC_ASYNC_ERROR:
        return;
    case CP_REC_LAUNCH_COUNT: {
        cp_lg_api *a = cp_lg_api_of(lg, r->u.launch_count.api);
        if (a)
            a->calls += r->u.launch_count.count;
        return;
    }
    case CP_REC_FRAMEWORK:
        if (p->fw_ready_kind && strcmp(p->fw_ready_kind, "torch.oom") == 0)
            cp__lg_torch_oom(lg, p->fw_ready_json, p->fw_ready_len, r->ts);
        return;
    default:
        break;
    }
    if (!cp_rec_has_ev(t))
        return;
    /* A FREE is written before the driver frees (its dur_ns is 0, not a
     * time): counted as a call, never as a timed one. */
    cp_lg_call(lg, r, t != CP_REC_FREE);
    if (t == CP_REC_COPY && r->ev.result == 0)
        cp_lg_copy(lg, r);
    else if (t == CP_REC_ALLOC && r->ev.result == 0 && cp_hold_of_kind(r->u.alloc.kind) >= 0 &&
             r->ev.dev >= 0 && r->ev.dev < 64)
        cp__lg_site_alloc(lg, p, r->ev.stack, (int)r->ev.dev, r->u.alloc.size);
}

void cp_ledger_finish(cp_ledger *lg, cp_proc *p, const cp_dec *d)
{
    for (size_t i = 0; i < lg->n_api; i++) {
        cp_lg_api *a = &lg->api[i];
        if (!a->calls)
            continue;
        const char *n = d ? cp_dec_api_name(d, i) : NULL;
        char buf[32];
        if (!n) {
            snprintf(buf, sizeof buf, "#%zu", i);
            n = buf;
        }
        a->name = cp_sym_intern(n, strlen(n));
    }
    cp__lg_sites_finish(lg, p);
}

uint64_t cp_ledger_first_ts(const cp_ledger *lg, uint64_t stack)
{
    const uint64_t *v = lg ? cp_map_get(&lg->first_ts, stack) : NULL;
    return v ? *v : 0;
}
