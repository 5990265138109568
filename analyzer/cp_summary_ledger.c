/*
 * cp_summary_ledger.c - a process's ledger (cp_ledger.h) in a summary, and
 * back: the "ledger" member of a process of docs/report.md's summary
 * schema.  It is optional (a summary written before it has none: its
 * pages lack the site tables, and stats only its devices' peaks), and read
 * whole or not at all.  What it holds makes the page, stats and diff of
 * merged summaries the same as of the traces: the APIs with their
 * histograms, the devices' copies, every site with its timeline, the OOMs,
 * and when each stack a finding names was first seen.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_summary.h"
#include "cp_grow.h"
#include "cp_jread.h"
#include "cp_ledger.h"

/* --- writing ------------------------------------------------------------------------------ */

static void cp_sl_u64s(cp_jb *b, const uint64_t *v, size_t n)
{
    cp_jb_open(b, '[');
    for (size_t i = 0; i < n; i++) {
        cp_jb_elem(b);
        cp_jb_u64(b, v[i]);
    }
    cp_jb_close(b, ']');
}

static void cp_sl_first(cp_jb *b, const cp_ledger *lg, uint64_t stack)
{
    uint64_t t = cp_ledger_first_ts(lg, stack);
    if (t)
        cp_jb_row(b, "uu", stack, t);
}

/* One entry of each list: an API, a device, a site, an OOM (by index). */
static void cp_sl_api(cp_jb *b, const cp_proc *p, size_t i)
{
    const cp_lg_api *a = &p->ledger->api[i];
    if (!a->calls)
        return;
    cp_jb_open(b, '[');
    cp_jb_vals(b, "usuuuuuu", (uint64_t)i, a->name, a->calls, a->errors, a->timed,
               a->total_ns, a->min_ns, a->max_ns);
    cp_jb_open(b, '[');
    for (int k = 0; a->hist && k < CP_LG_HIST; k++)
        if (a->hist[k])
            cp_jb_vals(b, "uu", (uint64_t)k, (uint64_t)a->hist[k]);
    cp_jb_close(b, ']');
    cp_jb_close(b, ']');
}

/* A device: [[ordinal, blocked_ns, n_blocking, held, peak, peak_ts, epoch],
 * [copies by direction and class], [their bytes]]. */
static void cp_sl_dev(cp_jb *b, const cp_proc *p, size_t d)
{
    const cp_lg_dev *v = &p->ledger->dev[d];
    if (!v->seen)
        return;
    const uint64_t head[] = { d, v->blocked_ns, v->n_blocking, v->held, v->peak, v->peak_ts,
                              v->epoch };
    cp_jb_open(b, '[');
    cp_sl_u64s(b, head, sizeof head / sizeof *head);
    cp_sl_u64s(b, &v->copies[0][0], CP_LG_DIR_N * CP_LG_CLS_N);
    cp_sl_u64s(b, &v->copy_bytes[0][0], CP_LG_DIR_N * CP_LG_CLS_N);
    cp_jb_close(b, ']');
}

static void cp_sl_null(cp_jb *b)
{
    cp_jb_elem(b);
    cp_jb_raw(b, "null");
}

static void cp_sl_site(cp_jb *b, const cp_proc *p, size_t i)
{
    const cp_lg_site *s = &p->ledger->site[i];
    const uint64_t *ser = cp_ledger_series(p->ledger, s);
    int n = p->series && p->series->cur >= 0 ? cp_series_n(p->series) : 0;
    cp_jb_open(b, '[');
    cp_jb_vals(b, "uiuuuuuuuuu", s->stack, (int64_t)s->dev, s->live, s->at_peak, s->max_live,
               s->n_alloc, s->alloc_bytes, s->n_free, s->n_temp, s->temp_bytes,
               (uint64_t)s->epoch);
    if (ser && n)
        cp_sl_u64s(b, ser, (size_t)n);
    else
        cp_sl_null(b);
    cp_jb_close(b, ']');
}

static void cp_sl_oom(cp_jb *b, const cp_proc *p, size_t i)
{
    const cp_lg_oom *o = &p->ledger->oom[i];
    cp_jb_open(b, '[');
    cp_jb_vals(b, "uuiiu", o->ts, o->request, (int64_t)o->dev, (int64_t)o->driver,
               (uint64_t)o->n_seg_all);
    cp_jb_open(b, '[');
    for (int k = 0; k < o->n_top; k++)
        cp_jb_row(b, "uu", o->top[k].stack, o->top[k].bytes);
    cp_jb_close(b, ']');
    if (!o->seg) {
        cp_sl_null(b);
    } else {
        cp_jb_open(b, '[');
        for (int k = 0; k < o->n_seg; k++) {
            const cp_lg_seg *g = &o->seg[k];
            cp_jb_open(b, '[');
            cp_jb_vals(b, "uuuuu", g->address, g->total, g->allocated, g->active,
                       (uint64_t)g->n_free_all);
            cp_sl_u64s(b, g->free, g->n_free);
            cp_jb_close(b, ']');
        }
        cp_jb_close(b, ']');
    }
    cp_jb_close(b, ']');
}

static void cp_sl_list(cp_jb *b, const char *key, const cp_proc *p, size_t n,
                       void (*item)(cp_jb *, const cp_proc *, size_t))
{
    cp_jb_key(b, key);
    cp_jb_open(b, '[');
    for (size_t i = 0; i < n; i++)
        item(b, p, i);
    cp_jb_close(b, ']');
}

void cp_summary_ledger_write(cp_jb *b, const cp_part *pt)
{
    const cp_proc *p = pt->proc;
    const cp_ledger *lg = p->ledger;
    if (!lg)
        return;
    cp_jb_key(b, "ledger");
    cp_jb_open(b, '{');
    cp_jb_ku(b, "width", lg->ser_width);
    cp_sl_list(b, "api", p, lg->n_api, cp_sl_api);
    cp_sl_list(b, "dev", p, 64, cp_sl_dev);
    cp_sl_list(b, "sites", p, lg->n_site, cp_sl_site);
    cp_sl_list(b, "oom", p, (size_t)lg->n_oom, cp_sl_oom);
    /* When the stacks a finding can name were first seen (its time): its
     * own findings' and those the checks across processes name. */
    cp_jb_key(b, "first");
    cp_jb_open(b, '[');
    cp_sl_first(b, lg, p->first_cuda_stack);
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        cp_sl_first(b, lg, p->mem[d].ctx_stack);
        cp_sl_first(b, lg, p->mem[d].first_alloc_stack);
    }
    for (size_t i = 0; i < pt->rep.n; i++)
        for (size_t k = 0; k < pt->rep.f[i]->n_sites; k++)
            cp_sl_first(b, lg, pt->rep.f[i]->sites[k].stack);
    cp_jb_close(b, ']');
    cp_jb_close(b, '}');
}

/* --- reading ------------------------------------------------------------------------------ */

typedef struct cp_slr {
    const cp_jn *bad;           /* the first node that is not what it should be */
    int oom;
} cp_slr;

/* Element i of array a, of type t (NULL and the error when not). */
static const cp_jn *cp_slr_at(cp_slr *r, const cp_jn *a, size_t i, int t)
{
    if (!a || a->type != CP_J_ARR || i >= a->n || a->kid[i].type != t) {
        if (!r->bad)
            r->bad = a && a->type == CP_J_ARR && i < a->n ? &a->kid[i] : a;
        return NULL;
    }
    return &a->kid[i];
}

static uint64_t cp_slr_u(cp_slr *r, const cp_jn *a, size_t i)
{
    const cp_jn *v = cp_slr_at(r, a, i, CP_J_INT);
    if (v && v->neg && !r->bad)
        r->bad = v;
    return v && !v->neg ? v->u : 0;
}

static int64_t cp_slr_i(cp_slr *r, const cp_jn *a, size_t i)
{
    const cp_jn *v = cp_slr_at(r, a, i, CP_J_INT);
    return v ? (v->neg ? -(int64_t)v->u : (int64_t)v->u) : 0;
}

static void cp_slr_u64s(cp_slr *r, const cp_jn *a, uint64_t *out, size_t n)
{
    if (!a || a->type != CP_J_ARR || a->n != n) {
        r->bad = r->bad ? r->bad : a;
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = cp_slr_u(r, a, i);
}

static void cp_slr_api(cp_slr *r, cp_ledger *lg, const cp_jn *e)
{
    uint64_t id = cp_slr_u(r, e, 0);
    const cp_jn *name = cp_slr_at(r, e, 1, CP_J_STR), *h = cp_slr_at(r, e, 8, CP_J_ARR);
    if (r->bad || id >= 65536)
        return;
    if (id >= lg->n_api) {
        cp_lg_api *v = realloc(lg->api, (size_t)(id + 1) * sizeof *v);
        if (!v) {
            r->oom = 1;
            return;
        }
        memset(v + lg->n_api, 0, (size_t)(id + 1 - lg->n_api) * sizeof *v);
        lg->api = v;
        lg->n_api = (size_t)id + 1;
    }
    cp_lg_api *a = &lg->api[id];
    a->name = cp_sym_intern(name->s, name->len);
    a->calls = cp_slr_u(r, e, 2);
    a->errors = cp_slr_u(r, e, 3);
    a->timed = cp_slr_u(r, e, 4);
    a->total_ns = cp_slr_u(r, e, 5);
    a->min_ns = cp_slr_u(r, e, 6);
    a->max_ns = cp_slr_u(r, e, 7);
    if (!h->n)
        return;
    if (!(a->hist = calloc(CP_LG_HIST, sizeof *a->hist))) {
        r->oom = 1;
        return;
    }
    for (size_t k = 0; k + 1 < h->n; k += 2) {
        uint64_t ix = cp_slr_u(r, h, k);
        if (ix < CP_LG_HIST)
            a->hist[ix] = (uint32_t)cp_slr_u(r, h, k + 1);
    }
}

static void cp_slr_site(cp_slr *r, cp_ledger *lg, const cp_jn *e, int n)
{
    if (cp_grow((void **)&lg->site, &lg->cap_site, lg->n_site + 1, sizeof *lg->site, 64) != 0) {
        r->oom = 1;
        return;
    }
    cp_lg_site *s = &lg->site[lg->n_site];
    memset(s, 0, sizeof *s);
    s->stack = cp_slr_u(r, e, 0);
    s->dev = (int)cp_slr_i(r, e, 1);
    uint64_t *f[] = { &s->live, &s->at_peak, &s->max_live, &s->n_alloc, &s->alloc_bytes,
                      &s->n_free, &s->n_temp, &s->temp_bytes };
    for (size_t k = 0; k < sizeof f / sizeof *f; k++)
        *f[k] = cp_slr_u(r, e, 2 + k);
    s->epoch = (uint32_t)cp_slr_u(r, e, 10);
    s->ser = s->ser_last = -1;
    if (s->dev < 0 || s->dev >= 64) {
        r->bad = r->bad ? r->bad : e;
        return;
    }
    const cp_jn *ser = e->n > 11 ? &e->kid[11] : NULL;
    if (ser && ser->type == CP_J_ARR) {
        uint64_t *v = realloc(lg->ser, (size_t)(lg->n_ser + 1) * CP_SER_N * sizeof *v);
        if (!v || ser->n != (size_t)n) {
            r->oom |= !v;
            r->bad = r->bad ? r->bad : ser;
            lg->ser = v ? v : lg->ser;
            return;
        }
        lg->ser = v;
        memset(v + (size_t)lg->n_ser * CP_SER_N, 0, CP_SER_N * sizeof *v);
        cp_slr_u64s(r, ser, v + (size_t)lg->n_ser * CP_SER_N, (size_t)n);
        s->ser = lg->n_ser++;
        s->ser_last = n - 1;
    }
    size_t *ix = cp_map_put(&lg->site_ix, s->stack << 7 | (uint64_t)(s->dev + 1), NULL);
    if (!ix)
        r->oom = 1;
    else
        *ix = ++lg->n_site;
}

static void cp_slr_oom(cp_slr *r, cp_ledger *lg, const cp_jn *e)
{
    if (lg->n_oom == CP_LG_OOMS) {
        r->bad = r->bad ? r->bad : e;
        return;
    }
    cp_lg_oom *o = &lg->oom[lg->n_oom++];
    memset(o, 0, sizeof *o);
    o->ts = cp_slr_u(r, e, 0);
    o->request = cp_slr_u(r, e, 1);
    o->dev = (int)cp_slr_i(r, e, 2);
    o->driver = (int)cp_slr_i(r, e, 3);
    o->n_seg_all = (int)cp_slr_u(r, e, 4);
    const cp_jn *top = cp_slr_at(r, e, 5, CP_J_ARR);
    for (size_t k = 0; top && k < top->n && k < CP_LG_OOM_TOP; k++, o->n_top++) {
        o->top[k].stack = cp_slr_u(r, &top->kid[k], 0);
        o->top[k].bytes = cp_slr_u(r, &top->kid[k], 1);
    }
    const cp_jn *segs = e->n > 6 && e->kid[6].type == CP_J_ARR ? &e->kid[6] : NULL;
    if (!segs)
        return;
    o->seg = calloc(segs->n ? segs->n : 1, sizeof *o->seg);
    if (!o->seg) {
        r->oom = 1;
        return;
    }
    for (size_t k = 0; k < segs->n && k < CP_LG_SEGS; k++, o->n_seg++) {
        const cp_jn *s = &segs->kid[k], *fr = cp_slr_at(r, s, 5, CP_J_ARR);
        cp_lg_seg *g = &o->seg[k];
        g->address = cp_slr_u(r, s, 0);
        g->total = cp_slr_u(r, s, 1);
        g->allocated = cp_slr_u(r, s, 2);
        g->active = cp_slr_u(r, s, 3);
        g->n_free_all = (uint32_t)cp_slr_u(r, s, 4);
        for (size_t f = 0; fr && f < fr->n && f < CP_LG_SEG_FREE; f++)
            g->free[g->n_free++] = cp_slr_u(r, fr, f);
    }
}

int cp_summary_ledger_read(cp_proc *p, const cp_jn *o, const cp_jn **bad)
{
    cp_slr r = { 0 };
    const cp_jn *v = cp_jn_get(o, "ledger");
    if (!v)
        return 0;
    cp_ledger *lg = cp_ledger_new(1);
    if (!lg)
        return -ENOMEM;
    p->ledger = lg;
    int n = p->series && p->series->cur >= 0 ? cp_series_n(p->series) : 0;
    const cp_jn *w = cp_jn_get(v, "width"), *api = cp_jn_get(v, "api"), *dev = cp_jn_get(v, "dev");
    const cp_jn *sites = cp_jn_get(v, "sites"), *ooms = cp_jn_get(v, "oom");
    const cp_jn *first = cp_jn_get(v, "first");
    if (!w || w->type != CP_J_INT || !api || api->type != CP_J_ARR || !dev ||
        dev->type != CP_J_ARR || !sites || sites->type != CP_J_ARR || !ooms ||
        ooms->type != CP_J_ARR || !first || first->type != CP_J_ARR) {
        *bad = v;
        return -EINVAL;
    }
    lg->ser_width = w->u;
    for (size_t i = 0; i < api->n && !r.bad && !r.oom; i++)
        cp_slr_api(&r, lg, &api->kid[i]);
    for (size_t i = 0; i < dev->n && !r.bad; i++) {
        const cp_jn *e = &dev->kid[i];
        uint64_t h[7] = { 0 };
        cp_slr_u64s(&r, cp_slr_at(&r, e, 0, CP_J_ARR), h, 7);
        if (r.bad || h[0] >= 64) {
            r.bad = r.bad ? r.bad : e;
            break;
        }
        cp_lg_dev *x = &lg->dev[h[0]];
        *x = (cp_lg_dev){ .blocked_ns = h[1], .n_blocking = h[2], .held = h[3], .peak = h[4],
                          .peak_ts = h[5], .epoch = (uint32_t)h[6], .seen = 1 };
        cp_slr_u64s(&r, cp_slr_at(&r, e, 1, CP_J_ARR), &x->copies[0][0],
                    CP_LG_DIR_N * CP_LG_CLS_N);
        cp_slr_u64s(&r, cp_slr_at(&r, e, 2, CP_J_ARR), &x->copy_bytes[0][0],
                    CP_LG_DIR_N * CP_LG_CLS_N);
    }
    for (size_t i = 0; i < sites->n && !r.bad && !r.oom; i++)
        cp_slr_site(&r, lg, &sites->kid[i], n);
    for (size_t i = 0; i < ooms->n && !r.bad && !r.oom; i++)
        cp_slr_oom(&r, lg, &ooms->kid[i]);
    for (size_t i = 0; i < first->n && !r.bad && !r.oom; i++) {
        uint64_t *t = cp_map_put(&lg->first_ts, cp_slr_u(&r, &first->kid[i], 0), NULL);
        if (!t)
            r.oom = 1;
        else
            *t = cp_slr_u(&r, &first->kid[i], 1);
    }
    if (r.oom)
        return -ENOMEM;
    *bad = r.bad;
    return r.bad ? -EINVAL : 0;
}
