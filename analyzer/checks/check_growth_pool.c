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
 *
 * A flat top: a program that keeps every step's arrays for a last pass
 * over them (an average of the kept weights) stops growing before the end
 * but lets nothing go, and its last eighths are flat.  When the rule fails
 * over all the samples, or holds only over the second half of the work,
 * it is tried again without the last of them, from a sixteenth up to a
 * third of the work: a window that holds it, followed by samples none of
 * which is below its last floor, is growth kept to the end (taken when it
 * shows more growth than the whole).  The top may be longer, up to seven
 * eighths of the work, when it runs elsewhere: none of its samples names
 * a place at which the window saw the pool grow, so the loop that grew it
 * has ended (a warm-up's plateau is the same loop going on at the same
 * line).  A pass over a few hundred kept arrays, one eager operation
 * each per leaf, can take longer than the jitted loop that made them.
 *
 * XLA keeps no allocation stacks.  Each sample names where the program
 * was when it was taken (the companion's "at": the innermost frame of the
 * program's own code, and its callers); the growth's sites are the places
 * whose samples in the window saw bytes in use go up since the sample
 * before, net (what a step allocates and frees again cancels out): in a
 * training loop, the line of the step whose results are kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_growth_pool.h"
#include "check_growth_window.h"
#include "cp_advice.h"
#include "cp_fw_jax.h"

#define CP_GPOOL_KEEP 4096          /* samples kept; beyond, every other one */
#define CP_GPOOL_PLACES 64          /* distinct places kept; later ones count as none */
/* Ids of the places' stacks and frames: above every id the shim hands out,
 * apart from attribution's (1 << 61) and the backward pass's (1 << 62). */
#define CP_GPOOL_ID (1ull << 60)
#define CP_GPOOL_TAIL_DIV 3         /* a flat top: at most 1/3 of the work, */
#define CP_GPOOL_TAIL_MIN_DIV 16    /* and at least 1/16 of it; */
#define CP_GPOOL_TAIL_FAR 7         /* up to 7/8 of it when it runs elsewhere */
#define CP_GPOOL_CUTS 64            /* places a flat top may start, tried */
#define CP_GPOOL_SITES 3            /* sites named: the first, the next with 1/4 of the growth */

/* A place samples were taken at (cp_jax_at, its strings interned). */
typedef struct gp_at {
    int n;
    const char *file[CP_JAX_AT_FRAMES], *func[CP_JAX_AT_FRAMES];
    int64_t line[CP_JAX_AT_FRAMES];
} gp_at;

typedef struct cp_gpool_sample {
    uint64_t w, ts, in_use, limit;
    uint32_t place;                 /* 1 + its index in places, 0: none named */
    uint32_t at_exit;               /* jax.exit: taken as the interpreter ends */
} cp_gpool_sample;

struct cp_gpool {
    cp_gpool_sample s[CP_GPOOL_KEEP];
    size_t n;
    unsigned stride_log;            /* one sample of every 2^stride_log is kept */
    uint64_t seen;
    uint64_t pool;                  /* the pool's driver memory, most seen (pool_bytes) */
    gp_at places[CP_GPOOL_PLACES];
    uint32_t n_places;
    uint64_t n_ids;                 /* stack and frame ids handed out (CP_GPOOL_ID) */
    size_t from;                    /* the first sample gp_judge() judged last, */
    int after_plateau;              /* ... when it is the last of a warm-up's plateau */
};

static int gp_at_same(const gp_at *a, const gp_at *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->line[i] != b->line[i] || a->file[i] != b->file[i] || a->func[i] != b->func[i])
            return 0;
    return 1;
}

/* 1 + the index of the place record rec names in g->places (added when
 * new), or 0 when it names none (or too many came before it). */
static uint32_t gp_place(struct cp_gpool *g, cp_jv rec)
{
    cp_jax_at at;
    gp_at a = { 0 };
    cp_jax_at_parse(rec, &at);
    for (int k = 0; k < at.n; k++) {
        a.file[k] = cp_sym_intern(at.file[k], strlen(at.file[k]));
        a.func[k] = cp_sym_intern(at.func[k], strlen(at.func[k]));
        a.line[k] = at.line[k];
        if (!a.file[k] || !a.func[k])
            break;
        a.n = k + 1;
    }
    if (!a.n)
        return 0;
    for (uint32_t i = 0; i < g->n_places; i++)
        if (gp_at_same(&g->places[i], &a))
            return i + 1;
    if (g->n_places == CP_GPOOL_PLACES)
        return 0;
    g->places[g->n_places++] = a;
    return g->n_places;
}

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
    cp_gpool_sample x = { w, ts, 0, 0, gp_place(g, v), strcmp(k, "jax.exit") == 0 };
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

/* The work at which samples [from, ...) start: the first's own, or when
 * it is the last of a warm-up's plateau, just before the next sample's.
 * The companion writes a sample only when the numbers changed, so the
 * plateau's last sample held until the next one was written. */
static uint64_t gp_w_from(const struct cp_gpool *g, size_t from)
{
    uint64_t w = g->s[from].w;
    return g->after_plateau && g->s[from + 1].w > w + 1 ? g->s[from + 1].w - 1 : w;
}

/* Samples [from, n) as memory-growth's window state (buckets only), in
 * *t, the first at gp_w_from().  @return : 0, or -1 when there is no work
 * to place them on. */
static int gp_buckets(const struct cp_gpool *g, size_t from, size_t n, cp_growth *t)
{
    uint64_t w0 = gp_w_from(g, from), span = g->s[n - 1].w - w0;
    if (span < CP_GROWTH_MIN_WORK)
        return -1;
    t->started = 1;
    t->w0 = w0;
    t->w = g->s[n - 1].w;
    while (span >> t->width_log >= CP_GROWTH_BUCKETS)
        t->width_log++;
    for (size_t i = from; i < n; i++) {
        const cp_gpool_sample *x = &g->s[i];
        cp_growth_bucket *b = &t->b[(x->w > w0 ? x->w - w0 : 0) >> t->width_log];
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
 * its arrays go).  A drop at the exit sample is that too, whatever work
 * came after the last look: the arrays went between the two, and work
 * done after they went would have been seen by a look (the companion
 * looks about once a second at the least) unless it was shorter.
 * @return : how many. */
static size_t gp_window_end(const struct cp_gpool *g)
{
    size_t n = g->n;
    if (n > 2 && g->s[n - 1].at_exit && g->s[n - 1].in_use < g->s[n - 2].in_use)
        n--;
    while (n > 2) {
        const cp_gpool_sample *a = &g->s[n - 2], *b = &g->s[n - 1];
        if (b->in_use >= a->in_use ||
            (b->w - a->w) * CP_TEARDOWN_DIV > b->w - g->s[0].w)
            break;
        n--;
    }
    return n;
}

/* What gp_sites() found. */
typedef struct gp_sites_out {
    int sites;                      /* sites added */
    uint64_t samples, named;        /* samples of the window; of them, naming a place */
    uint64_t top_samples, top_bytes;    /* the first site's */
    uint64_t net;                   /* what the window's samples saw added, net */
} gp_sites_out;

/* The bytes the samples [from, n) (from >= 1) saw added since the sample
 * before, net, by the place each names, into net and count (per place).
 * @return : how many of them name one. */
static uint64_t gp_net(const struct cp_gpool *g, size_t from, size_t n, int64_t *net,
                       uint64_t *count)
{
    uint64_t named = 0;
    memset(net, 0, CP_GPOOL_PLACES * sizeof *net);
    memset(count, 0, CP_GPOOL_PLACES * sizeof *count);
    for (size_t i = from; i < n; i++) {
        const cp_gpool_sample *x = &g->s[i];
        if (!x->place)
            continue;
        named++;
        /* Bytes in use are far below 2^63: the difference fits. */
        net[x->place - 1] += (int64_t)(x->in_use - g->s[i - 1].in_use);
        count[x->place - 1]++;
    }
    return named;
}

/* Whether the samples [m, n) run elsewhere than the growth of the window
 * [from, m): one names a place at least, and none names a place whose
 * samples in the window saw the pool grow (net). */
static int gp_elsewhere(const struct cp_gpool *g, size_t from, size_t m, size_t n)
{
    int64_t net[CP_GPOOL_PLACES];
    uint64_t count[CP_GPOOL_PLACES];
    int named = 0;
    gp_net(g, from ? from : 1, m, net, count);
    for (size_t i = m; i < n; i++) {
        uint32_t p = g->s[i].place;
        if (p && net[p - 1] > 0)
            return 0;
        named |= p != 0;
    }
    return named;
}

/* Place i of g as a stack of p's own (Python frames only).  @return : its
 * id, or 0 when out of memory. */
static uint64_t gp_stack(struct cp_gpool *g, uint32_t i, cp_proc *p)
{
    const gp_at *at = &g->places[i];
    uint64_t py[CP_JAX_AT_FRAMES];
    for (int k = 0; k < at->n; k++) {
        py[k] = CP_GPOOL_ID | ++g->n_ids;
        if (cp_stacks_pyframe(&p->stacks, py[k], at->file[k], at->func[k], (uint64_t)at->line[k]))
            return 0;
    }
    uint64_t sid = CP_GPOOL_ID | ++g->n_ids;
    return cp_stacks_add(&p->stacks, sid, 0, NULL, (uint64_t)at->n, py) ? 0 : sid;
}

/* The places at which the samples of the window [from, n) saw the pool
 * grow, by the bytes each saw added since the sample before, net (what a
 * step allocates and frees again cancels out; see the top of the file),
 * as sites of f: the first, and the next ones with a quarter of the
 * growth or more. */
static void gp_sites(struct cp_gpool *g, size_t from, size_t n, cp_finding *f, cp_proc *p,
                     gp_sites_out *o)
{
    int64_t net[CP_GPOOL_PLACES];
    uint64_t count[CP_GPOOL_PLACES];
    memset(o, 0, sizeof *o);
    if (from == 0)
        from = 1;
    o->samples = from < n ? n - from : 0;
    o->named = gp_net(g, from, n, net, count);
    o->net = from < n && g->s[n - 1].in_use > g->s[from - 1].in_use
           ? g->s[n - 1].in_use - g->s[from - 1].in_use : 0;
    unsigned char used[CP_GPOOL_PLACES] = { 0 };
    for (int k = 0; k < CP_GPOOL_SITES; k++) {
        int best = -1;
        for (uint32_t i = 0; i < g->n_places; i++)
            if (!used[i] && net[i] > 0 && (best < 0 || net[i] > net[best]))
                best = (int)i;
        if (best < 0 || (k > 0 && (uint64_t)net[best] * 4 < o->net))
            break;
        used[best] = 1;
        uint64_t sid = gp_stack(g, (uint32_t)best, p);
        if (!sid)
            break;
        cp_finding_site(f, p, sid, count[best], (uint64_t)net[best], 0, "XLA pool samples");
        if (k == 0) {
            o->top_samples = count[best];
            o->top_bytes = (uint64_t)net[best];
        }
        o->sites++;
    }
}

/* The first sample of the window: the first in its start bucket or after. */
static size_t gp_first_in(const struct cp_gpool *g, size_t n, const cp_growth *t,
                          const cp_growth_win *w)
{
    uint64_t w_start = t->w0 + ((uint64_t)w->start << t->width_log);
    size_t i = g->from;
    while (i < n && g->s[i].w < w_start)
        i++;
    return i;
}

/* The finding about the first m samples, of the n before the teardown
 * (m < n: a flat top followed). */
static void gp_finding(struct cp_gpool *g, size_t m, size_t n, const cp_growth *t,
                       const cp_growth_win *w, cp_proc *p, cp_report *rep, const cp_check *check)
{
    char b1[32], b2[32], b3[32], tb[32];
    const cp_gpool_sample *last = &g->s[m - 1];
    uint64_t growth = w->floor[CP_GROWTH_SEGS - 1] - w->base;
    uint64_t t0 = t->b[cp_gwin_used_from(t, w->start, w->end)].ts0, t1 = last->ts;
    /* After a warm-up's plateau, bucket 0 holds its last sample, taken
     * when the plateau began to hold: the growth began at the next. */
    if (g->after_plateau && t0 < g->s[g->from + 1].ts)
        t0 = g->s[g->from + 1].ts;
    double secs = t1 > t0 ? (double)(t1 - t0) / 1e9 : 0;
    double rate = secs > 0 ? (double)growth / secs : 0;
    cp_finding *f = cp_finding_new(rep, check, p, "memory in use in XLA's pool grew by %s while "
                                   "the program kept working (%s/s over %s)%s",
                                   cp_fmt_bytes(growth, b1, sizeof b1),
                                   cp_fmt_bytes(rate < 1e18 ? (uint64_t)rate : 0, b2, sizeof b2),
                                   cp_fmt_ns(t1 - t0, tb, sizeof tb),
                                   m < n ? ", and kept it to the end" : "");
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
    int plateau = w->start || g->after_plateau;
    cp_finding_line(f, "Lowest in use in each eighth of the %s: from %s to %s, rising to the "
                    "end%s.", w->half ? "second half of the work (kernel launches; the first "
                    "half was its warm-up)" : plateau ? "work after its warm-up plateau "
                    "(kernel launches)" : "work (kernel launches)",
                    cp_fmt_bytes(w->floor[0], b1, sizeof b1),
                    cp_fmt_bytes(w->floor[CP_GROWTH_SEGS - 1], b2, sizeof b2),
                    m < n ? " of the growth" : "");
    uint64_t w_all = g->s[n - 1].w - g->s[0].w;
    double tail_pct = m < n && w_all ? 100.0 * (double)(g->s[n - 1].w - last->w) / (double)w_all
                                     : 0;
    if (m < n)
        cp_finding_line(f, "Then it grew no more but let nothing go: the last %.0f%% of the "
                        "work (%zu sample%s, to %s in use) ran with all of it still held, as a "
                        "last pass over every step's kept arrays does.", tail_pct, n - m,
                        n - m == 1 ? "" : "s", cp_fmt_bytes(g->s[n - 1].in_use, b1, sizeof b1));
    double to_limit = -1;
    if (m == n && last->limit > last->in_use && rate > 0) {
        to_limit = (double)(last->limit - last->in_use) / rate;
        cp_finding_line(f, "Cost: at this rate the pool's limit (%s; %s in use at the end) is "
                        "reached %s after the point this run reached, and XLA then raises "
                        "RESOURCE_EXHAUSTED.", cp_fmt_bytes(last->limit, b1, sizeof b1),
                        cp_fmt_bytes(last->in_use, b3, sizeof b3),
                        cp_fmt_ns(to_limit < 1e9 ? (uint64_t)(to_limit * 1e9) : UINT64_MAX,
                                  tb, sizeof tb));
    } else if (m < n && last->limit) {
        cp_finding_line(f, "Cost: %s of the pool's %s limit held by the end; a run of more "
                        "steps keeps more, and XLA raises RESOURCE_EXHAUSTED when it is full.",
                        cp_fmt_bytes(g->s[n - 1].in_use, b1, sizeof b1),
                        cp_fmt_bytes(last->limit, b3, sizeof b3));
    }
    gp_sites_out so;
    gp_sites(g, gp_first_in(g, m, t, w), m, f, p, &so);
    if (so.sites)
        cp_finding_line(f, "XLA keeps no allocation stacks: the sites are where the program "
                        "was when the samples saw the pool grow (the first: %llu of the "
                        "window's %llu samples, %s of the %s they saw added, net). The arrays "
                        "that line makes and the program keeps are the likely ones.",
                        (unsigned long long)so.top_samples, (unsigned long long)so.samples,
                        cp_fmt_bytes(so.top_bytes, b1, sizeof b1),
                        cp_fmt_bytes(so.net, b2, sizeof b2));
    cp_finding_line(f, "%sTo see which arrays stay, save "
                    "jax.profiler.save_device_memory_profile(\"mem.prof\") at two steps of the "
                    "loop and compare them (pprof -diff_base).",
                    so.sites ? "" : "XLA's samples name no call site. ");
    cp_jb *b = &f->details;
    cp_jb_ks(b, "framework", "jax");
    cp_jb_ks(b, "source", "xla_pool_samples");
    cp_jb_ku(b, "growth_bytes", growth);
    cp_jb_ku(b, "start_ns", t0);
    cp_jb_ku(b, "plateau_bytes", plateau ? w->base : 0);
    cp_jb_kd(b, "rate_bytes_per_s", rate);
    cp_jb_kd(b, "duration_s", secs);
    cp_jb_ku(b, "samples", n);
    cp_jb_ku(b, "pool_bytes", g->pool);
    cp_jb_ku(b, "pool_limit_bytes", last->limit);
    cp_jb_kd(b, "seconds_to_limit", to_limit);
    cp_jb_kb(b, "held_to_end", m < n);
    cp_jb_kd(b, "held_work_pct", tail_pct);
    cp_jb_ku(b, "samples_at_sites", so.named);
    cp_jb_key(b, "floor_bytes");
    cp_jb_open(b, '[');
    for (int i = 0; i < CP_GROWTH_SEGS; i++) {
        cp_jb_elem(b);
        cp_jb_u64(b, w->floor[i]);
    }
    cp_jb_close(b, ']');
}

/* The end of a warm-up's plateau in samples [0, m): the last sample of
 * the last flat stretch (within CP_GROWTH_STEP) of what stays, the least
 * in use from each sample to the m-th, that spans an eighth of their work
 * or more and ends before the last.  A stretch lasts until the sample
 * after it (the companion writes one only when the numbers changed).  XLA
 * compiles and autotunes the first call of a jitted step, launching more
 * kernels than a short loop does, so a plateau can take most of the work.
 * @return : 1 + its index, or 0 when there is none. */
static size_t gp_plateau_end(const struct cp_gpool *g, size_t m)
{
    uint64_t all = g->s[m - 1].w - g->s[0].w, stays = UINT64_MAX, level = 0;
    size_t hi = m;                  /* the stretch's last sample; m: none yet */
    for (size_t i = m; i-- > 0;) {
        if (g->s[i].in_use < stays)
            stays = g->s[i].in_use;
        if (hi < m && stays + CP_GROWTH_STEP >= level)
            continue;
        if (hi + 1 < m && (g->s[hi + 1].w - g->s[i + 1].w) * 8 >= all)
            return hi + 1;
        hi = i;
        level = stays;
    }
    return hi + 1 < m && (g->s[hi + 1].w - g->s[0].w) * 8 >= all ? hi + 1 : 0;
}

/* The rule over samples [0, n), or when it fails, over those after a
 * warm-up's plateau (gp_plateau_end()): t reset and filled, *w its window,
 * g->from its first sample.  @return : 1 when they grew. */
static int gp_judge(struct cp_gpool *g, size_t n, cp_growth *t, cp_growth_win *w)
{
    size_t from = 0, end;
    g->after_plateau = 0;
    for (int k = 0; k < 2; k++) {
        memset(t, 0, sizeof *t);
        /* cp_gwin_window() may merge buckets, which walks the (empty) site maps. */
        cp_map_init(&t->sites, sizeof(cp_growth_site));
        cp_map_init(&t->steps, sizeof(cp_growth_site));
        g->from = from;
        if (gp_buckets(g, from, n, t) == 0 && cp_gwin_window(t, w, NULL)) {
            /* The window starts where the plateau ended: a stretch of it
             * between two samples that are far apart on the work axis is
             * no second plateau. */
            if (g->after_plateau) {
                w->start = 0;
                w->half = 0;
                w->base = w->floor[0];
            }
            return 1;
        }
        if (k || !(end = gp_plateau_end(g, n)))
            break;
        from = end - 1;
        g->after_plateau = 1;
    }
    return 0;
}

/* A flat top (see the top of the file) after the first m of the n
 * samples: the most samples m < n whose rule holds, none after them below
 * the last floor of their window, the work from their last to the end
 * between 1/CP_GPOOL_TAIL_MIN_DIV and 1/CP_GPOOL_TAIL_DIV of all of it,
 * or up to CP_GPOOL_TAIL_FAR/8 of it when they run elsewhere.  t and *w
 * are left as m's.  @return : m, or 0 when there is none. */
static size_t gp_flat_top(struct cp_gpool *g, size_t n, cp_growth *t, cp_growth_win *w)
{
    uint64_t w_last = g->s[n - 1].w, all = w_last - g->s[0].w;
    size_t lo = n - 1;
    while (lo > CP_GROWTH_SEGS && (w_last - g->s[lo - 1].w) * 8 <= all * CP_GPOOL_TAIL_FAR)
        lo--;
    size_t step = (n - 1 - lo) / CP_GPOOL_CUTS + 1;
    uint64_t tail_min = UINT64_MAX;
    for (size_t m = n - 1; m >= lo && m >= CP_GROWTH_SEGS; m--) {
        if (g->s[m].in_use < tail_min)
            tail_min = g->s[m].in_use;
        uint64_t tail = w_last - g->s[m - 1].w;
        if ((n - 1 - m) % step || tail * CP_GPOOL_TAIL_MIN_DIV < all)
            continue;
        if (!gp_judge(g, m, t, w) || tail_min + CP_GROWTH_STEP < w->floor[CP_GROWTH_SEGS - 1])
            continue;
        if (tail * CP_GPOOL_TAIL_DIV <= all || gp_elsewhere(g, gp_first_in(g, m, t, w), m, n))
            return m;
    }
    return 0;
}

int cp_gpool_finish(struct cp_gpool *g, cp_proc *p, cp_report *rep, const cp_check *check,
                    uint64_t w_end)
{
    size_t n = g ? gp_window_end(g) : 0;
    if (n < CP_GROWTH_SEGS)
        return 0;
    gp_spread_work(g->s, g->n, w_end, p->t_last);
    cp_growth *t = malloc(sizeof *t);
    if (!t)
        return 0;
    cp_growth_win w;
    size_t m = n;
    int grew = gp_judge(g, n, t, &w);
    /* A flat top at the end also fails the rule, or leaves it to the
     * second half of the work (the top's eighths are flat): the window
     * before the top, when it holds, shows more of the growth. */
    if (!grew || w.half) {
        uint64_t all = grew ? w.floor[CP_GROWTH_SEGS - 1] - w.base : 0;
        size_t top = gp_flat_top(g, n, t, &w);
        if (top && w.floor[CP_GROWTH_SEGS - 1] - w.base > all)
            m = top;
        else if (grew)
            gp_judge(g, n, t, &w);
        grew = grew || m < n;
    }
    if (grew)
        gp_finding(g, m, n, t, &w, p, rep, check);
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
