/*
 * cp_ledger_sites.c - device memory by call site, as heaptrack keeps it:
 * per site and device what is live, what was live at the device's peak, the
 * most it held, its allocations and its temporary ones; the sites holding
 * the most at each OOM; and, for the page, each site's most held per bucket
 * of the process's timeline.
 *
 * What a site held at the peak costs O(1) per event, without a snapshot at
 * every new high: the device's epoch moves at each new peak, and a site
 * that changes first records, once per epoch, what it held before the
 * change (what it held at that peak); a site that did not change since the
 * last peak still holds what it held then.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_ledger.h"
#include "cp_grow.h"
#include "cp_model.h"

static uint64_t cp_lg_key(uint64_t stack, int dev)
{
    return stack << 7 | (uint64_t)(dev + 1);
}

static uint64_t *cp_lg_ser_of(cp_ledger *lg, const cp_lg_site *s)
{
    return lg->ser + (size_t)s->ser * CP_SER_N;
}

/* Follow the process's timeline: its buckets merged pairwise as it grew. */
static void cp_lg_ser_sync(cp_ledger *lg, const cp_series *ps)
{
    if (!lg->ser_width)
        lg->ser_width = ps->width;
    while (lg->ser_width < ps->width) {
        for (size_t k = 0; k < lg->n_site; k++) {
            cp_lg_site *s = &lg->site[k];
            if (s->ser < 0)
                continue;
            uint64_t *v = cp_lg_ser_of(lg, s);
            for (int i = 0; i < CP_SER_N / 2; i++)
                v[i] = v[2 * i] > v[2 * i + 1] ? v[2 * i] : v[2 * i + 1];
            memset(v + CP_SER_N / 2, 0, sizeof *v * (CP_SER_N / 2));
            if (s->ser_last >= 0)
                s->ser_last /= 2;
        }
        lg->ser_width *= 2;
    }
}

/* s went from before to after in bucket b; the buckets since its last
 * change carried what it held then. */
static void cp_lg_ser_put(cp_ledger *lg, cp_lg_site *s, int b, uint64_t before, uint64_t after)
{
    uint64_t *v = cp_lg_ser_of(lg, s);
    for (int j = s->ser_last + 1; j < b; j++)
        v[j] = before;
    if (s->ser_last < b)
        v[b] = before;
    if (after > v[b])
        v[b] = after;
    s->ser_last = b;
}

static cp_lg_site *cp_lg_site_get(cp_ledger *lg, const cp_proc *p, uint64_t stack, int dev)
{
    int created;
    size_t *ix = cp_map_put(&lg->site_ix, cp_lg_key(stack, dev), &created);
    if (!ix) {
        lg->err = ENOMEM;
        return NULL;
    }
    if (!created)
        return &lg->site[*ix - 1];
    if (cp_grow((void **)&lg->site, &lg->cap_site, lg->n_site + 1, sizeof *lg->site, 64) != 0) {
        lg->err = ENOMEM;
        cp_map_del(&lg->site_ix, cp_lg_key(stack, dev), NULL);
        return NULL;
    }
    cp_lg_site *s = &lg->site[lg->n_site];
    memset(s, 0, sizeof *s);
    s->stack = stack;
    s->dev = dev;
    s->epoch = lg->dev[dev].epoch;
    s->ser = -1;
    s->ser_last = -1;
    *ix = ++lg->n_site;
    if (lg->timeline && p->series && lg->n_ser < CP_LG_SERIES_SITES) {
        uint64_t *v = realloc(lg->ser, (size_t)(lg->n_ser + 1) * CP_SER_N * sizeof *v);
        if (v) {
            lg->ser = v;
            memset(v + (size_t)lg->n_ser * CP_SER_N, 0, CP_SER_N * sizeof *v);
            s->ser = lg->n_ser++;
        }
    }
    return s;
}

/* Before s changes: what it held at the device's last peak, once per peak. */
static void cp_lg_site_touch(cp_ledger *lg, cp_lg_site *s)
{
    uint32_t e = lg->dev[s->dev].epoch;
    if (s->epoch != e) {
        s->at_peak = s->live;
        s->epoch = e;
    }
}

static void cp_lg_site_moved(cp_ledger *lg, const cp_proc *p, cp_lg_site *s, uint64_t before)
{
    if (s->ser < 0 || !p->series || p->series->cur < 0)
        return;
    cp_lg_ser_sync(lg, p->series);
    cp_lg_ser_put(lg, s, p->series->cur, before, s->live);
}

void cp__lg_site_alloc(cp_ledger *lg, cp_proc *p, uint64_t stack, int dev, uint64_t size)
{
    cp_lg_site *s = cp_lg_site_get(lg, p, stack, dev);
    cp_lg_dev *d = &lg->dev[dev];
    d->seen = 1;
    if (s) {
        cp_lg_site_touch(lg, s);
        uint64_t before = s->live;
        s->live += size;
        s->n_alloc++;
        s->alloc_bytes += size;
        if (s->live > s->max_live)
            s->max_live = s->live;
        cp_lg_site_moved(lg, p, s, before);
    }
    d->held += size;
    if (d->held > d->peak) {
        d->peak = d->held;
        d->peak_ts = p->t_last;
        d->epoch++;
    }
}

void cp__lg_site_free(cp_ledger *lg, cp_proc *p, uint64_t stack, int dev, uint64_t size,
                      int temp)
{
    cp_lg_dev *d = &lg->dev[dev];
    d->held -= size < d->held ? size : d->held;
    cp_lg_site *s = cp_lg_site_get(lg, p, stack, dev);
    if (!s)
        return;
    cp_lg_site_touch(lg, s);
    uint64_t before = s->live;
    s->live -= size < s->live ? size : s->live;
    s->n_free++;
    if (temp) {
        s->n_temp++;
        s->temp_bytes += size;
    }
    cp_lg_site_moved(lg, p, s, before);
}

void cp__lg_oom_sites(cp_ledger *lg, cp_lg_oom *o)
{
    o->n_top = 0;
    for (size_t k = 0; k < lg->n_site; k++) {
        const cp_lg_site *s = &lg->site[k];
        if (s->dev != o->dev || !s->live)
            continue;
        if (o->n_top == CP_LG_OOM_TOP && s->live <= o->top[CP_LG_OOM_TOP - 1].bytes)
            continue;
        int i = o->n_top < CP_LG_OOM_TOP ? o->n_top++ : CP_LG_OOM_TOP - 1;
        for (; i > 0 && o->top[i - 1].bytes < s->live; i--)
            o->top[i] = o->top[i - 1];
        o->top[i] = (cp_lg_top){ s->stack, s->live };
    }
}

void cp__lg_sites_finish(cp_ledger *lg, cp_proc *p)
{
    const cp_series *ps = p->series;
    int n = ps && ps->cur >= 0 ? cp_series_n(ps) : 0;
    if (n && lg->n_ser)
        cp_lg_ser_sync(lg, ps);
    for (size_t k = 0; k < lg->n_site; k++) {
        cp_lg_site *s = &lg->site[k];
        cp_lg_site_touch(lg, s);
        if (s->ser < 0)
            continue;
        uint64_t *v = cp_lg_ser_of(lg, s);
        for (int j = s->ser_last + 1; j < n; j++)
            v[j] = s->live;
        s->ser_last = n - 1;
    }
}

const uint64_t *cp_ledger_series(const cp_ledger *lg, const cp_lg_site *site)
{
    return site->ser < 0 ? NULL : lg->ser + (size_t)site->ser * CP_SER_N;
}

static uint64_t cp_lg_site_val(const cp_lg_site *s, int key)
{
    switch (key) {
    case 0: return s->at_peak;
    case 1: return s->n_alloc;
    case 2: return s->n_temp;
    default: return s->max_live;
    }
}

static int cp_lg_sort_cmp(const void *a, const void *b, void *arg)
{
    const cp_ledger *lg = ((const void **)arg)[0];
    int key = *(const int *)((const void **)arg)[1];
    const cp_lg_site *x = &lg->site[*(const size_t *)a], *y = &lg->site[*(const size_t *)b];
    uint64_t vx = cp_lg_site_val(x, key), vy = cp_lg_site_val(y, key);
    if (vx != vy)
        return vx > vy ? -1 : 1;
    if (x->stack != y->stack)
        return x->stack < y->stack ? -1 : 1;
    return x->dev - y->dev;
}

size_t cp_ledger_sort_sites(const cp_ledger *lg, int dev, int key, size_t *out, size_t cap)
{
    size_t n = 0;
    size_t *all = malloc((lg->n_site ? lg->n_site : 1) * sizeof *all);
    if (!all)
        return 0;
    for (size_t k = 0; k < lg->n_site; k++)
        if ((dev < 0 || lg->site[k].dev == dev) && cp_lg_site_val(&lg->site[k], key))
            all[n++] = k;
    const void *arg[2] = { lg, &key };
    qsort_r(all, n, sizeof *all, cp_lg_sort_cmp, arg);
    if (n > cap)
        n = cap;
    memcpy(out, all, n * sizeof *out);
    free(all);
    return n;
}

static uint64_t cp_lg_row_val(const cp_lg_row *r, int key)
{
    return key == 0 ? r->at_peak : key == 1 ? r->n_alloc : r->n_temp;
}

static int cp_lg_row_cmp(const void *a, const void *b, void *arg)
{
    const cp_lg_row *x = a, *y = b;
    int key = *(const int *)arg;
    uint64_t vx = cp_lg_row_val(x, key), vy = cp_lg_row_val(y, key);
    if (vx != vy)
        return vx > vy ? -1 : 1;
    return strcmp(x->label, y->label);
}

size_t cp_ledger_rows(cp_proc *p, int d, int key, size_t top, cp_lg_row **out)
{
    const cp_ledger *lg = p->ledger;
    *out = NULL;
    if (!lg || !lg->n_site)
        return 0;
    size_t *ix = malloc(lg->n_site * sizeof *ix);
    cp_lg_row *v = calloc(lg->n_site, sizeof *v);
    cp_map by_label;
    cp_map_init(&by_label, sizeof(size_t));
    size_t n = 0, ns = ix && v ? cp_ledger_sort_sites(lg, d, key, ix, lg->n_site) : 0;
    for (size_t i = 0; i < ns; i++) {
        const cp_lg_site *s = &lg->site[ix[i]];
        const char *l = cp_site_label(&p->stacks, s->stack);
        int created;
        /* Labels are interned: one pointer per text. */
        size_t *at = cp_map_put(&by_label, (uint64_t)(uintptr_t)l, &created);
        if (!at)
            break;
        if (created) {
            *at = n;
            v[n++] = (cp_lg_row){ .label = l, .stack = s->stack };
        }
        cp_lg_row *r = &v[*at];
        r->at_peak += s->at_peak;
        r->n_alloc += s->n_alloc;
        r->alloc_bytes += s->alloc_bytes;
        r->n_free += s->n_free;
        r->n_temp += s->n_temp;
        r->temp_bytes += s->temp_bytes;
        r->n_stacks++;
    }
    cp_map_free(&by_label);
    free(ix);
    if (!n) {
        free(v);
        return 0;
    }
    qsort_r(v, n, sizeof *v, cp_lg_row_cmp, &key);
    *out = v;
    return n < top ? n : top;
}

void cp_ledger_seed(cp_ledger *lg, cp_proc *p)
{
    const cp_lives *maps[2] = { &p->live_dev, &p->live_vmm };
    for (int i = 0; i < 2; i++) {
        size_t it = 0;
        const cp_live *l;
        while ((l = cp_lives_next(maps[i], &it)))
            if (l->dev >= 0 && l->dev < 64 && cp_hold_of_kind(l->kind) >= 0)
                cp__lg_site_alloc(lg, p, l->stack, l->dev, l->size);
    }
    /* Held, not allocated, in the window. */
    for (size_t k = 0; k < lg->n_site; k++) {
        lg->site[k].n_alloc = 0;
        lg->site[k].alloc_bytes = 0;
    }
}
