/*
 * check_growth_window.c - memory-growth's timeline on the work axis: the held
 * total per bucket of kernel launches (64 buckets that merge pairwise as
 * the run outgrows them), each site's live bytes at every bucket boundary,
 * and the window's eighths, their floors and where the growth starts.
 * check_growth.c feeds it and writes the finding (see the top of that file
 * for what counts as growth).
 */
#include <string.h>

#include "cp_grow.h"
#include "check_growth_window.h"

static uint64_t u64_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Halve the resolution: bucket i becomes buckets 2i and 2i+1 together
 * (the first PyTorch sample of the pair, the end of the pair for at[]). */
static void gw_merge(cp_growth *s)
{
    if (s->in_tail) {
        /* The tail began in bucket tail_idx: an earlier partner holds
         * only memory from before it, a later one only the tail. */
        if ((s->tail_idx & 1) && s->b[s->tail_idx - 1].used)
            s->tail_min_pre = u64_min(s->tail_min_pre, s->b[s->tail_idx - 1].min);
        s->tail_idx /= 2;
    }
    for (int i = 0; i < CP_GROWTH_BUCKETS / 2; i++) {
        cp_growth_bucket a = s->b[2 * i], c = s->b[2 * i + 1];
        cp_growth_bucket m = a;
        if (c.used) {
            if (!a.used) {
                m = c;
            } else {
                m.min = u64_min(a.min, c.min);
                m.last = c.last;
                m.ts1 = c.ts1;
            }
        }
        s->b[i] = m;
        s->tb[i] = s->tn[2 * i] ? s->tb[2 * i] : s->tb[2 * i + 1];
        s->tn[i] = s->tn[2 * i] + s->tn[2 * i + 1];
    }
    memset(&s->b[CP_GROWTH_BUCKETS / 2], 0, sizeof s->b[0] * (CP_GROWTH_BUCKETS / 2));
    memset(&s->tn[CP_GROWTH_BUCKETS / 2], 0, sizeof s->tn[0] * (CP_GROWTH_BUCKETS / 2));
    cp_map *maps[2] = { &s->sites, &s->steps };
    for (int k = 0; k < 2; k++) {
        size_t it = 0;
        cp_growth_site *g;
        while ((g = cp_map_next(maps[k], &it, NULL))) {
            cp_growth_hist *h = cp_gwin_hist(s, g);
            for (uint32_t i = 0; 2 * i + 1 < g->touched; i++) {
                h->at[i] = h->at[2 * i + 1];
                h->n_at[i] = h->n_at[2 * i + 1];
            }
            g->touched /= 2;
        }
    }
    s->width_log++;
}

/* The bucket of work clock value w, merging until it fits. */
uint32_t cp_gwin_index(cp_growth *s, uint64_t w)
{
    uint64_t idx = (w - s->w0) >> s->width_log;
    while (idx >= CP_GROWTH_BUCKETS) {
        gw_merge(s);
        idx = (w - s->w0) >> s->width_log;
    }
    return (uint32_t)idx;
}

/* The bucket of an event that is not a memory event (a PyTorch sample, a
 * wait): 0 before the first allocation; in a teardown that began, the
 * last bucket rather than a merge the window would not need. */
uint32_t cp_gwin_slot(cp_growth *s)
{
    if (!s->started)
        return 0;
    if (s->in_tail && (s->w - s->w0) >> s->width_log >= CP_GROWTH_BUCKETS)
        return CP_GROWTH_BUCKETS - 1;
    return cp_gwin_index(s, s->w);
}

/* bytes allocated (is_free 0) or freed (1) at site `stack` of map m (the
 * sites; the steps count 1 per wait), as cp_gwin_site(). */
void cp_gwin_site_full(cp_growth *s, cp_map *m, uint64_t stack, uint32_t idx, uint64_t bytes,
                       int is_free)
{
    int created;
    cp_growth_site *g = cp_map_put(m, stack, &created);
    if (!g)
        return;
    if (created) {
        if (cp_grow((void **)&s->hist, &s->cap_hist, s->n_hist + 1, sizeof *s->hist, 64)) {
            cp_map_del(m, stack, NULL);
            return;
        }
        g->hist = (uint32_t)s->n_hist++;
    }
    g->stack = stack;
    if (idx > g->touched) {
        cp_growth_hist *h = cp_gwin_hist(s, g);
        for (uint32_t j = g->touched; j < idx && j < CP_GROWTH_BUCKETS; j++) {
            h->at[j] = g->live;
            h->n_at[j] = g->count;
        }
        g->touched = idx;
    }
    if (is_free)
        g->live = bytes > g->live ? 0 : g->live - bytes;
    else
        g->live += bytes;
    if (!is_free && bytes)
        g->count++;
}

/* Move bucket j's contents to bucket map[j] (map non-decreasing): buckets
 * that land together merge as in gw_merge(); a history's bucket k ends
 * where the last old bucket mapped at or below k ended. */
static void gw_move(cp_growth *s, const uint32_t *map)
{
    cp_growth_bucket nb[CP_GROWTH_BUCKETS];
    cp_growth_torch ntb[CP_GROWTH_BUCKETS];
    uint64_t ntn[CP_GROWTH_BUCKETS];
    memset(nb, 0, sizeof nb);
    memset(ntb, 0, sizeof ntb);
    memset(ntn, 0, sizeof ntn);
    for (uint32_t j = 0; j < CP_GROWTH_BUCKETS; j++) {
        cp_growth_bucket *d = &nb[map[j]], c = s->b[j];
        if (c.used && d->used) {
            d->min = u64_min(d->min, c.min);
            d->last = c.last;
            d->ts1 = c.ts1;
        } else if (c.used) {
            *d = c;
        }
        if (s->tn[j] && !ntn[map[j]])
            ntb[map[j]] = s->tb[j];
        ntn[map[j]] += s->tn[j];
    }
    if (s->in_tail) {
        uint32_t t = map[s->tail_idx];
        for (uint32_t j = 0; j < s->tail_idx; j++)
            if (map[j] == t && s->b[j].used)
                s->tail_min_pre = u64_min(s->tail_min_pre, s->b[j].min);
        s->tail_idx = t;
    }
    memcpy(s->b, nb, sizeof nb);
    memcpy(s->tb, ntb, sizeof ntb);
    memcpy(s->tn, ntn, sizeof ntn);
    cp_map *maps[2] = { &s->sites, &s->steps };
    for (int k = 0; k < 2; k++) {
        size_t it = 0;
        cp_growth_site *g;
        while ((g = cp_map_next(maps[k], &it, NULL))) {
            cp_growth_hist *h = cp_gwin_hist(s, g), o = *h;
            for (uint32_t j = g->touched; j < CP_GROWTH_BUCKETS; j++) {
                o.at[j] = g->live;
                o.n_at[j] = g->count;
            }
            uint32_t j = 0;
            for (uint32_t i = 0; i < CP_GROWTH_BUCKETS; i++) {
                while (j + 1 < CP_GROWTH_BUCKETS && map[j + 1] <= i)
                    j++;
                h->at[i] = o.at[j];
                h->n_at[i] = o.n_at[j];
            }
            g->touched = CP_GROWTH_BUCKETS;     /* every bucket written above */
        }
    }
}

/* Work the program did while memory grew can reach the trace after it all:
 * the shim writes a thread's launch counts every 4096 of its launches and
 * at exit, and a thread that makes no other driver event (PyTorch's
 * autograd thread when it only launches; the main thread when the backward
 * pass allocates) is seen only there.  Its launches were made during the
 * loop, not after the last allocation: counted where they arrived, they
 * put a flat stretch at the end of the work that was never there, and a
 * growth that ran to the end read as one that had stopped.  The counts say
 * how many, not when: they are spread over the time from the first memory
 * event to when they were written, each bucket moving right by their share
 * of the time up to its first event.  A bucket with no memory event moves
 * as the one before it: a stretch where the program only waited keeps its
 * place, so a plateau seen only through its waits stays a plateau. */
int cp_gwin_respread(cp_growth *s, uint32_t map[CP_GROWTH_BUCKETS])
{
    for (uint32_t j = 0; j < CP_GROWTH_BUCKETS; j++)
        map[j] = j;
    if (!s->started || !s->lc_moved || s->lc_from < s->w0 || s->w <= s->lc_from)
        return 0;
    uint64_t late = s->w - s->lc_from, t0 = s->b[0].ts0, t1 = s->lc_ts;
    if (s->py_exit_ts > t0 && s->py_exit_ts < t1)
        t1 = s->py_exit_ts;     /* the program's code had returned by then */
    if (late <= (s->w - s->w0) / CP_GROWTH_SEGS || t1 <= t0)
        return 0;
    uint32_t end = cp_gwin_index(s, s->w);      /* (may merge) */
    uint32_t from = (uint32_t)((s->lc_from - s->w0) >> s->width_log);
    double shift = (double)late / (double)(1ull << s->width_log);
    uint64_t t = t0;
    for (uint32_t j = 0; j < CP_GROWTH_BUCKETS; j++) {
        uint32_t lo = j ? map[j - 1] + (j <= from) : 0;
        if (j > from) {
            map[j] = j > lo ? j : lo;
            continue;
        }
        if (s->b[j].used && s->b[j].ts0 > t)
            t = s->b[j].ts0;
        double f = t >= t1 ? 1.0 : (double)(t - t0) / (double)(t1 - t0);
        double at = (double)j + shift * f;      /* compared before it converts */
        uint32_t hi = end - (from - j);         /* room for the buckets after it */
        map[j] = at < (double)lo ? lo : at > (double)hi ? hi : (uint32_t)at;
    }
    gw_move(s, map);
    if (s->in_tail) {
        uint64_t mask = (1ull << s->width_log) - 1;
        s->tail_w = s->w0 + ((uint64_t)s->tail_idx << s->width_log) + ((s->tail_w - s->w0) & mask);
    }
    return 1;
}

uint32_t cp_gwin_used_at(const cp_growth *s, uint32_t j)
{
    while (j && !s->b[j].used)
        j--;
    return j;
}

uint32_t cp_gwin_used_from(const cp_growth *s, uint32_t j, uint32_t end)
{
    while (j < end && !s->b[j].used)
        j++;
    return j;
}

/* Is `now` a rise over *ref, the level at the last rise or the lowest
 * since: by more than CP_GROWTH_STEP, so that a creep of a few bytes a
 * step is flat but adds up until it is not.  Moves *ref. */
static int gw_rise(uint64_t *ref, uint64_t now)
{
    if (now <= *ref || now - *ref <= CP_GROWTH_STEP) {
        if (now < *ref)
            *ref = now;
        return 0;
    }
    *ref = now;
    return 1;
}

/* Where the growth starts (see the top of the file): the first rise after
 * the last flat stretch of more than an eighth of the window's buckets
 * that ends in its first half.  lv: the level of each bucket.  A rise at a
 * bucket without events is the previous one's (its last above its min):
 * the growth starts there. */
static void gw_start(const cp_growth *s, cp_growth_win *g, const uint64_t *lv)
{
    uint32_t eighth = (g->end + 1) / CP_GROWTH_SEGS, last_rise = 0;
    uint64_t ref = lv[0];
    g->start = 0;
    g->base = g->floor[0];
    for (uint32_t j = 1; j <= g->end && 2 * j <= g->end + 1; j++) {
        if (!gw_rise(&ref, lv[j]))
            continue;
        if (j - last_rise > eighth && lv[j - 1] < g->floor[CP_GROWTH_SEGS - 1]) {
            g->start = s->b[j].used ? j : j - 1;    /* j > eighth >= 2 */
            g->t_plateau = s->b[cp_gwin_used_at(s, last_rise)].ts1;
            g->base = lv[j - 1];
        }
        last_rise = j;
    }
}

/* The floors of the eighths of buckets [from, g->end] into g->floor, and
 * their first rise.  @return : 1 when they rise at least CP_GROWTH_SEGS - 2 times of
 * CP_GROWTH_SEGS - 1, in the last one too, by CP_GROWTH_MIN or more in all. */
static int gw_floors(cp_growth_win *g, const uint64_t *lv, uint32_t from)
{
    int rises = 0, last = 0;
    uint64_t ref = UINT64_MAX, n = g->end + 1 - from;
    g->first_rise = -1;
    for (int i = 0; i < CP_GROWTH_SEGS; i++) {
        uint32_t a = from + (uint32_t)((uint64_t)i * n / CP_GROWTH_SEGS);
        uint32_t e = from + (uint32_t)((uint64_t)(i + 1) * n / CP_GROWTH_SEGS);
        g->floor[i] = UINT64_MAX;
        for (uint32_t j = a; j < e; j++)
            g->floor[i] = u64_min(g->floor[i], lv[j]);
        if (g->floor[i] == UINT64_MAX)
            continue;
        if (ref != UINT64_MAX && gw_rise(&ref, g->floor[i])) {
            rises++;
            last = i == CP_GROWTH_SEGS - 1;
            if (g->first_rise < 0)
                g->first_rise = i - 1;
        } else if (ref == UINT64_MAX) {
            ref = g->floor[i];
        }
    }
    return g->floor[0] != UINT64_MAX && rises >= CP_GROWTH_SEGS - 2 && last &&
           g->floor[CP_GROWTH_SEGS - 1] >= g->floor[0] + CP_GROWTH_MIN;
}

/* The floors of the window's eighths.  @return : 1 when they show growth. */
int cp_gwin_window(cp_growth *s, cp_growth_win *g, const uint64_t *less)
{
    uint64_t w_end = s->w, stop = w_end;
    g->teardown = s->in_tail && (w_end - s->tail_w) * CP_TEARDOWN_DIV <= w_end - s->w0;
    if (g->teardown)
        stop = s->tail_w;
    if (stop - s->w0 < CP_GROWTH_MIN_WORK)
        return 0;                   /* memory taken without work: set-up */
    g->end = cp_gwin_index(s, stop);     /* (may merge: tail_idx follows) */
    if (g->end + 1 < 2 * CP_GROWTH_SEGS)
        return 0;
    uint64_t level = UINT64_MAX, lv[CP_GROWTH_BUCKETS];
    for (uint32_t j = 0; j <= g->end; j++) {
        const cp_growth_bucket *b = &s->b[j];
        uint64_t m = b->used ? b->min : level;
        if (g->teardown && j == s->tail_idx)
            m = s->tail_min_pre != UINT64_MAX ? s->tail_min_pre : level;
        lv[j] = less && m != UINT64_MAX ? m - (less[j] < m ? less[j] : m) : m;
        if (b->used)
            level = b->last;
    }
    g->half = 0;
    if (gw_floors(g, lv, 0)) {
        gw_start(s, g, lv);
    } else {
        /* A warm-up that takes up to half of the work, its floors rising
         * and falling (JAX under cuda_async, tests/gpu/accuracy/
         * jax_train.py: the rule does not always hold over the whole
         * window): the rule over the second half, and the growth measured
         * from there. */
        uint32_t half = (g->end + 1) / 2;
        if (!gw_floors(g, lv, half))
            return 0;
        g->half = 1;
        g->start = half;
        g->t_plateau = s->b[cp_gwin_used_at(s, half - 1)].ts1;
        g->base = g->floor[0];
    }
    /* A warm-up that took the memory, then a plateau: what came after it
     * must be growth by itself. */
    return g->floor[CP_GROWTH_SEGS - 1] >= g->base + CP_GROWTH_MIN;
}
