/*
 * check_growth_pool.c - memory-growth inside XLA's pool, from its samples
 * (see check_growth_pool.h).
 *
 * The samples fill a window of memory-growth's own kind, one bucket per
 * 2^width_log launches from the first sample to the last, each bucket with
 * the lowest and last bytes in use of its samples, and cp_gwin_window()
 * applies the rule: the floors of the eighths rise at least 6 times of 7,
 * in the last one too, by CP_GROWTH_MIN or more, over CP_GROWTH_MIN_WORK
 * launches or more; a warm-up plateau or a first half of warm-up is left
 * out the same way.  A drop in the last samples with no work in between is
 * the program letting its arrays go at the end (the driver-level check's
 * teardown) and is left out too.
 *
 * A sample's place on the work axis is the launch count the trace had
 * reached when it was taken.  Launch counts reach the trace in batches
 * (every 4096 launches of a thread, and at flush points), so that count
 * may lag: between two values seen, the samples are spread in proportion
 * to time (the run's last value, at its end, closes the last stretch).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_growth_pool.h"
#include "check_growth_window.h"
#include "cp_advice.h"
#include "cp_fw_jax.h"

#define CP_GPOOL_KEEP 4096          /* samples kept; beyond, every other one */

typedef struct cp_gpool_sample {
    uint64_t w, ts, in_use, limit;
} cp_gpool_sample;

struct cp_gpool {
    cp_gpool_sample s[CP_GPOOL_KEEP];
    size_t n;
    unsigned stride_log;            /* one sample of every 2^stride_log is kept */
    uint64_t seen;
    uint64_t pool;                  /* the pool's driver memory, most seen (pool_bytes) */
};

int cp_gpool_add(struct cp_gpool **gp, const cp_proc *p, uint64_t w, uint64_t ts)
{
    const char *k = p->fw_ready_kind;
    if (!k || strncmp(k, "jax.", 4) != 0)
        return 0;
    cp_jax_dev d[CP_JAX_DEVS];
    cp_jv v = { p->fw_ready_json, p->fw_ready_len };
    int n = cp_jax_devs_parse(v, d, CP_JAX_DEVS);
    if (n == 0)
        return 1;                   /* no GPU answered: nothing to sample */
    if (!*gp && !(*gp = calloc(1, sizeof **gp)))
        return 1;
    struct cp_gpool *g = *gp;
    if (g->seen++ & ((1ull << g->stride_log) - 1))
        return 1;
    if (g->n == CP_GPOOL_KEEP) {
        /* Full: keep every other sample, and from now on every other one. */
        for (size_t i = 0; i < CP_GPOOL_KEEP / 2; i++)
            g->s[i] = g->s[2 * i];
        g->n = CP_GPOOL_KEEP / 2;
        g->stride_log++;
    }
    cp_gpool_sample x = { w, ts, 0, 0 };
    uint64_t pool = 0;
    for (int i = 0; i < n; i++) {
        x.in_use += d[i].in_use;
        x.limit += d[i].limit;
        pool += d[i].pool_bytes;
    }
    if (pool > g->pool)
        g->pool = pool;
    g->s[g->n++] = x;
    return 1;
}

/* Spread samples that saw the same launch count over the stretch to the
 * next count seen (w_end at ts_end after the last). */
static void gp_spread_work(cp_gpool_sample *s, size_t n, uint64_t w_end, uint64_t ts_end)
{
    for (size_t k = 0, j; k < n; k = j) {
        for (j = k + 1; j < n && s[j].w == s[k].w; j++)
            ;
        uint64_t wj = j < n ? s[j].w : w_end, tj = j < n ? s[j].ts : ts_end;
        if (wj <= s[k].w || tj <= s[k].ts)
            continue;
        double per_ns = (double)(wj - s[k].w) / (double)(tj - s[k].ts);
        for (size_t i = k + 1; i < j; i++)
            s[i].w = s[k].w + (uint64_t)(per_ns * (double)(s[i].ts - s[k].ts));
    }
}

/* The samples as memory-growth's window state (buckets only), in *t.
 * @return : 0, or -1 when there is no work to place them on. */
static int gp_buckets(const struct cp_gpool *g, size_t n, cp_growth *t)
{
    uint64_t w0 = g->s[0].w, span = g->s[n - 1].w - w0;
    if (span < CP_GROWTH_MIN_WORK)
        return -1;
    t->started = 1;
    t->w0 = w0;
    t->w = g->s[n - 1].w;
    while (span >> t->width_log >= CP_GROWTH_BUCKETS)
        t->width_log++;
    for (size_t i = 0; i < n; i++) {
        const cp_gpool_sample *x = &g->s[i];
        cp_growth_bucket *b = &t->b[(x->w - w0) >> t->width_log];
        if (!b->used) {
            b->used = 1;
            b->min = x->in_use;
            b->ts0 = x->ts;
        }
        b->min = x->in_use < b->min ? x->in_use : b->min;
        b->last = x->in_use;
        b->ts1 = x->ts;
    }
    return 0;
}

/* The samples before the end's drop with no work (the program letting
 * its arrays go).  @return : how many. */
static size_t gp_window_end(const struct cp_gpool *g)
{
    size_t n = g->n;
    while (n > 2) {
        const cp_gpool_sample *a = &g->s[n - 2], *b = &g->s[n - 1];
        if (b->in_use >= a->in_use ||
            (b->w - a->w) * CP_TEARDOWN_DIV > b->w - g->s[0].w)
            break;
        n--;
    }
    return n;
}

static void gp_finding(struct cp_gpool *g, size_t n, const cp_growth *t, const cp_growth_win *w,
                       cp_proc *p, cp_report *rep, const cp_check *check)
{
    char b1[32], b2[32], b3[32], tb[32];
    const cp_gpool_sample *last = &g->s[n - 1];
    uint64_t growth = w->floor[CP_GROWTH_SEGS - 1] - w->base;
    /* The growth's first sample: its start bucket may hold none. */
    uint32_t j = w->start;
    while (j < w->end && !t->b[j].used)
        j++;
    uint64_t t0 = t->b[j].ts0, t1 = last->ts;
    double secs = t1 > t0 ? (double)(t1 - t0) / 1e9 : 0;
    double rate = secs > 0 ? (double)growth / secs : 0;
    cp_finding *f = cp_finding_new(rep, check, p, "memory in use in XLA's pool grew by %s while "
                                   "the program kept working (%s/s over %s)",
                                   cp_fmt_bytes(growth, b1, sizeof b1),
                                   cp_fmt_bytes(rate < 1e18 ? (uint64_t)rate : 0, b2, sizeof b2),
                                   cp_fmt_ns(t1 - t0, tb, sizeof tb));
    if (!f)
        return;
    f->sort = CP_SORT_BYTES;
    f->bytes = growth;
    f->t_from = t0;
    f->t_to = t1;
    cp_advice_fix(f, p, CP_ADV_GROWTH);
    cp_finding_line(f, "The driver sees none of it: XLA took its pool (%s) from the driver and "
                    "serves every array from it. These are XLA's own numbers: bytes in use, "
                    "%zu samples of memory_stats() over the run.",
                    cp_fmt_bytes(g->pool, b1, sizeof b1), n);
    cp_finding_line(f, "Lowest in use in each eighth of the %s: from %s to %s, rising to the "
                    "end.", w->half ? "second half of the work (kernel launches; the first "
                    "half was its warm-up)" : w->start ? "work after its warm-up plateau "
                    "(kernel launches)" : "work (kernel launches)",
                    cp_fmt_bytes(w->floor[0], b1, sizeof b1),
                    cp_fmt_bytes(w->floor[CP_GROWTH_SEGS - 1], b2, sizeof b2));
    double to_limit = -1;
    if (last->limit > last->in_use && rate > 0) {
        to_limit = (double)(last->limit - last->in_use) / rate;
        cp_finding_line(f, "Cost: at this rate the pool's limit (%s; %s in use at the end) is "
                        "reached %s after the point this run reached, and XLA then raises "
                        "RESOURCE_EXHAUSTED.", cp_fmt_bytes(last->limit, b1, sizeof b1),
                        cp_fmt_bytes(last->in_use, b3, sizeof b3),
                        cp_fmt_ns(to_limit < 1e9 ? (uint64_t)(to_limit * 1e9) : UINT64_MAX,
                                  tb, sizeof tb));
    }
    cp_finding_line(f, "XLA's samples name no call site: to see which arrays stay, save "
                    "jax.profiler.save_device_memory_profile(\"mem.prof\") at two steps of the "
                    "loop and compare them (pprof -diff_base).");
    cp_jb *b = &f->details;
    cp_jb_ks(b, "framework", "jax");
    cp_jb_ks(b, "source", "xla_pool_samples");
    cp_jb_ku(b, "growth_bytes", growth);
    cp_jb_ku(b, "start_ns", t0);
    cp_jb_ku(b, "plateau_bytes", w->start ? w->base : 0);
    cp_jb_kd(b, "rate_bytes_per_s", rate);
    cp_jb_kd(b, "duration_s", secs);
    cp_jb_ku(b, "samples", n);
    cp_jb_ku(b, "pool_bytes", g->pool);
    cp_jb_ku(b, "pool_limit_bytes", last->limit);
    cp_jb_kd(b, "seconds_to_limit", to_limit);
    cp_jb_key(b, "floor_bytes");
    cp_jb_open(b, '[');
    for (int i = 0; i < CP_GROWTH_SEGS; i++) {
        cp_jb_elem(b);
        cp_jb_u64(b, w->floor[i]);
    }
    cp_jb_close(b, ']');
}

int cp_gpool_finish(struct cp_gpool *g, cp_proc *p, cp_report *rep, const cp_check *check,
                    uint64_t w_end)
{
    size_t n = g ? gp_window_end(g) : 0;
    if (n < CP_GROWTH_SEGS)
        return 0;
    gp_spread_work(g->s, g->n, w_end, p->t_last);
    cp_growth *t = calloc(1, sizeof *t);
    if (!t)
        return 0;
    /* cp_gwin_window() may merge buckets, which walks the (empty) site maps. */
    cp_map_init(&t->sites, sizeof(cp_growth_site));
    cp_map_init(&t->steps, sizeof(cp_growth_site));
    cp_growth_win w;
    int grew = gp_buckets(g, n, t) == 0 && cp_gwin_window(t, &w, NULL);
    if (grew)
        gp_finding(g, n, t, &w, p, rep, check);
    cp_map_free(&t->sites);
    cp_map_free(&t->steps);
    free(t->hist);
    free(t);
    return grew;
}

void cp_gpool_free(struct cp_gpool *g)
{
    free(g);
}
