/*
 * check_growth_window.h - the state of memory-growth (check_growth.c) and its
 * timeline on the work axis (check_growth_window.c): buckets of kernel launches,
 * per-site live bytes at their boundaries, and the growth window.
 */
#ifndef CHECK_GROWTH_WINDOW_H
#define CHECK_GROWTH_WINDOW_H

#include <stdint.h>

#include "cp_map.h"

#define GB 64
#define GSEG 8
#define CP_GROWTH_MIN (16ull << 20)
/* A rise of memory held smaller than this is flat: a stream-ordered
 * allocator (cudaMallocAsync) shows every tensor, so a loop that keeps one
 * scalar a step (losses.append(loss.detach())) raised the floor of every
 * eighth by a few bytes, and a clean GPT-2 run of 20 steps read as growth
 * from its warm-up on (session 17). */
#define CP_GROWTH_STEP (CP_GROWTH_MIN / 64)
#define CP_GROWTH_MIN_WORK 64       /* launches in the window: the program works */
#define CP_TEARDOWN_DIV 50          /* a tail of frees followed by < 1/50 of the work */

typedef struct gbucket {
    uint64_t min, last, ts0, ts1;
    int used;
} gbucket;

/* A site's history at the bucket boundaries, apart from its entry: every
 * allocation and free updates the entry, a boundary's history only once
 * per site and bucket, and the entries of all sites then fit in a few
 * cache lines instead of 1 KiB each. */
typedef struct ghist {
    uint64_t at[GB];            /* live bytes at the end of bucket i */
    uint64_t n_at[GB];          /* allocations (count) by the end of bucket i: a
                                 * window's own count, like its bytes */
} ghist;

typedef struct gsite {
    uint64_t stack, live, count;
    uint32_t touched;           /* its history is valid below this bucket */
    uint32_t hist;              /* its history: cp_gr's hist[hist] */
} gsite;

typedef struct gthread {
    uint64_t known;             /* launches of this thread known so far */
    uint64_t copy_cum;          /* sum of its COPY/SYNC launch deltas */
} gthread;

typedef struct gtorch {
    uint64_t alloc, res, ts;
} gtorch;

typedef struct cp_gr {
    gbucket b[GB];
    gtorch tb[GB];              /* first PyTorch sample in bucket i (tn[i] > 0) */
    uint64_t tn[GB];            /* PyTorch samples in bucket i */
    unsigned width_log;         /* launches per bucket: 1 << width_log (a shift,
                                 * not a division, for every event) */
    int started;
    uint64_t w0;                /* work clock at the first allocation */
    uint64_t w_thr, lc_total, w;    /* work clock: max(per-thread sum, LAUNCH_COUNT sum) */
    uint64_t n_alloc;
    int in_tail;                /* frees since the last allocation */
    uint64_t tail_w, tail_ts, tail_min_pre;
    uint32_t tail_idx;
    cp_map sites;               /* stack -> gsite */
    cp_map threads;             /* tid -> gthread */
    /* The entry of the thread looked up last (NULL: none), valid until the
     * next put on `threads`, which only gr_work() makes: most records
     * come from one thread, and the lookup was a hash and a probe for
     * every COPY, SYNC and ALLOC. */
    gthread *last_thr;
    uint64_t last_tid;
    cp_map steps;               /* stack of a read-back or sync -> gsite (live: count) */
    ghist *hist;                /* the sites' and steps' histories */
    size_t n_hist, cap_hist;
    int torch_seen;
    uint64_t torch_n, torch_pre;    /* samples in all; before the first allocation */
    gtorch t0, t1;              /* first and last PyTorch allocator sample */
} cp_gr;

typedef struct gwin {
    uint32_t end;               /* last bucket of the window */
    uint32_t start;             /* bucket where the growth starts (0: no plateau) */
    uint64_t t_plateau;         /* when the plateau was reached (trace clock) */
    uint64_t base;              /* memory held before it: the plateau, or floor[0] */
    uint64_t floor[GSEG];
    int first_rise;
    int teardown;
    int half;                   /* 1: the floors are those of the window's second half */
} gwin;

/*! gw_index() : the bucket of work clock value w (>= s->w0), merging the
 *  buckets (and every site's and step's at[]) until it fits.
 *  @return : the bucket, < GB. */
uint32_t gw_index(cp_gr *s, uint64_t w);

/*! gw_slot() : the bucket of an event at the current work clock that is not
 *  a memory event (a PyTorch sample, a wait).  @return : the bucket, < GB. */
uint32_t gw_slot(cp_gr *s);

/*! gw_site_full() : gw_site() for a site not yet in m, or one whose
 *  history ends before bucket idx. */
void gw_site_full(cp_gr *s, cp_map *m, uint64_t stack, uint32_t idx, uint64_t bytes, int is_free);

/*! gw_site() : count bytes allocated (is_free 0) or freed (1) at `stack` in
 *  map m (of gsite: s's sites or steps) in bucket idx; nothing when out of
 *  memory.  Inline for a known site whose history is up to date (nearly
 *  every ALLOC, FREE and wait): gw_site_full()'s frame and call were a
 *  third of its instructions (BENCHMARKS.md 3p).  Unsigned on purpose:
 *  sizes come from the trace and may be anything up to 2^64-1, so no
 *  signed delta (and no negation of one) is ever formed. */
static inline __attribute__((always_inline)) void
gw_site(cp_gr *s, cp_map *m, uint64_t stack, uint32_t idx, uint64_t bytes, int is_free)
{
    size_t i = cp_map_find(m, stack);
    gsite *g = i != CP_MAP_NONE ? cp_map_at(m, i) : NULL;
    if (__builtin_expect(!g || idx > g->touched, 0)) {
        gw_site_full(s, m, stack, idx, bytes, is_free);
        return;
    }
    if (is_free) {
        g->live = bytes > g->live ? 0 : g->live - bytes;
    } else {
        g->live += bytes;
        g->count += bytes != 0;
    }
}

/*! gw_hist() : the history of site g (an entry of s's sites or steps).
 *  @return : it. */
static inline ghist *gw_hist(const cp_gr *s, const gsite *g)
{
    return &s->hist[g->hist];
}

/*! gw_event() : one device memory event at the current work clock; total
 *  is the held total after it.  @return : its bucket.  Inline (every ALLOC
 *  and FREE of device memory): its call and frame were a third of its
 *  instructions; gw_index() only when the clock left the last bucket. */
static inline __attribute__((always_inline)) uint32_t
gw_event(cp_gr *s, uint64_t total, uint64_t ts, int is_free)
{
    uint64_t at = (s->w - s->w0) >> s->width_log;
    uint32_t idx = at < GB ? (uint32_t)at : gw_index(s, s->w);
    gbucket *b = &s->b[idx];
    if (is_free && !s->in_tail) {
        s->in_tail = 1;
        s->tail_w = s->w;
        s->tail_ts = ts;
        s->tail_idx = idx;
        s->tail_min_pre = b->used ? b->min : UINT64_MAX;
    } else if (!is_free) {
        s->in_tail = 0;
    }
    if (!b->used) {
        b->used = 1;
        b->min = total;
        b->ts0 = ts;
    }
    b->min = total < b->min ? total : b->min;
    b->last = total;
    b->ts1 = ts;
    return idx;
}

/*! gw_window() : the window (up to the teardown), its eighths' floors and
 *  where the growth starts, into *g (may merge buckets).
 *  @return : 1 when the floors show growth, else 0. */
int gw_window(cp_gr *s, gwin *g);

#endif /* CHECK_GROWTH_WINDOW_H */
