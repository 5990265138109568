/*
 * check_growth_window.h - the state of memory-growth (check_growth.c) and its
 * timeline on the work axis (check_growth_window.c): buckets of kernel launches,
 * per-site live bytes at their boundaries, and the growth window.
 */
#ifndef CHECK_GROWTH_WINDOW_H
#define CHECK_GROWTH_WINDOW_H

#include <stdint.h>

#include "cp_map.h"

#define CP_GROWTH_BUCKETS 64
#define CP_GROWTH_SEGS 8
#define CP_GROWTH_MIN (16ull << 20)
/* A rise of memory held smaller than this is flat: a stream-ordered
 * allocator (cudaMallocAsync) shows every tensor, so a loop that keeps one
 * scalar a step (losses.append(loss.detach())) raised the floor of every
 * eighth by a few bytes, and a clean GPT-2 run of 20 steps read as growth
 * from its warm-up on. */
#define CP_GROWTH_STEP (CP_GROWTH_MIN / 64)
#define CP_GROWTH_MIN_WORK 64       /* launches in the window: the program works */
#define CP_TEARDOWN_DIV 50          /* a tail of frees followed by < 1/50 of the work */

typedef struct cp_growth_bucket {
    uint64_t min, last, ts0, ts1;
    int used;
} cp_growth_bucket;

/* A site's history at the bucket boundaries, apart from its entry: every
 * allocation and free updates the entry, a boundary's history only once
 * per site and bucket, and the entries of all sites then fit in a few
 * cache lines instead of 1 KiB each. */
typedef struct cp_growth_hist {
    uint64_t at[CP_GROWTH_BUCKETS];            /* live bytes at the end of bucket i */
    uint64_t n_at[CP_GROWTH_BUCKETS];          /* allocations (count) by the end of bucket i: a
                                 * window's own count, like its bytes */
} cp_growth_hist;

typedef struct cp_growth_site {
    uint64_t stack, live, count;
    uint32_t touched;           /* its history is valid below this bucket */
    uint32_t hist;              /* its history: cp_growth's hist[hist] */
} cp_growth_site;

typedef struct cp_growth_thread {
    uint64_t known;             /* launches of this thread known so far */
    uint64_t copy_cum;          /* sum of its COPY/SYNC launch deltas */
} cp_growth_thread;

typedef struct cp_growth_torch {
    uint64_t alloc, res, ts;
} cp_growth_torch;

typedef struct cp_growth {
    cp_growth_bucket b[CP_GROWTH_BUCKETS];
    cp_growth_torch tb[CP_GROWTH_BUCKETS];  /* first PyTorch sample in bucket i (tn[i] > 0) */
    uint64_t tn[CP_GROWTH_BUCKETS];            /* PyTorch samples in bucket i */
    unsigned width_log;         /* launches per bucket: 1 << width_log (a shift,
                                 * not a division, for every event) */
    int started;
    uint64_t w0;                /* work clock at the first allocation */
    uint64_t w_thr, lc_total, w;    /* work clock: max(per-thread sum, LAUNCH_COUNT sum) */
    /* The last launch counts that moved the clock, when nothing else moved
     * it and no memory event came since (lc_moved): the clock before them
     * and when they were written (cp_gwin_respread()). */
    int lc_moved;
    uint64_t lc_from, lc_ts;
    uint64_t py_exit_ts;        /* the companion's first exit record, 0: none */
    uint64_t n_alloc;
    int in_tail;                /* frees since the last allocation */
    uint64_t tail_w, tail_ts, tail_min_pre;
    uint32_t tail_idx;
    cp_map sites;               /* stack -> cp_growth_site */
    cp_map threads;             /* tid -> cp_growth_thread */
    /* The entry of the thread looked up last (NULL: none), valid until the
     * next put on `threads`, which only gr_work() makes: most records
     * come from one thread, and the lookup was a hash and a probe for
     * every COPY, SYNC and ALLOC. */
    cp_growth_thread *last_thr;
    uint64_t last_tid;
    cp_map steps;               /* stack of a read-back or sync -> cp_growth_site (live: count) */
    cp_growth_hist *hist;                /* the sites' and steps' histories */
    size_t n_hist, cap_hist;
    int torch_seen;
    uint64_t torch_n, torch_pre;    /* samples in all; before the first allocation */
    cp_growth_torch t0, t1;              /* first and last PyTorch allocator sample */
    cp_growth_torch t_run;      /* the last one before the companion's exit record */
    cp_growth_torch t_pre;      /* the last sample before the tail of frees, if
                                 * one is going on (ts 0: none) */
    uint64_t ts_alloc;          /* when the last allocation was made */
    struct cp_gpool *pool;      /* XLA's pool samples (check_growth_pool.h), NULL: none */
    struct cp_gattr *attr;      /* attribution samples (check_growth_attrib.h), NULL: none */
} cp_growth;

typedef struct cp_growth_win {
    uint32_t end;               /* last bucket of the window */
    uint32_t start;             /* bucket where the growth starts (0: no plateau) */
    uint64_t t_plateau;         /* when the plateau was reached (trace clock) */
    uint64_t base;              /* memory held before it: the plateau, or floor[0] */
    uint64_t floor[CP_GROWTH_SEGS];
    int first_rise;
    int teardown;
    int half;                   /* 1: the floors are those of the window's second half */
} cp_growth_win;

/*! cp_gwin_used_at() : the last bucket at or before j with a memory event
 *  (bucket 0 has one once s->started). */
uint32_t cp_gwin_used_at(const cp_growth *s, uint32_t j);

/*! cp_gwin_used_from() : the first bucket from j up to end with a memory
 *  event, else end: the growth's first event when its start bucket (half
 *  the work, after a warm-up) holds none, and an unused bucket no time. */
uint32_t cp_gwin_used_from(const cp_growth *s, uint32_t j, uint32_t end);

/*! cp_gwin_index() : the bucket of work clock value w (>= s->w0), merging the
 *  buckets (and every site's and step's at[]) until it fits.
 *  @return : the bucket, < CP_GROWTH_BUCKETS. */
uint32_t cp_gwin_index(cp_growth *s, uint64_t w);

/*! cp_gwin_slot() : the bucket of an event at the current work clock that is not
 *  a memory event (a PyTorch sample, a wait).  @return : the bucket, < CP_GROWTH_BUCKETS. */
uint32_t cp_gwin_slot(cp_growth *s);

/*! cp_gwin_site_full() : cp_gwin_site() for a site not yet in m, or one whose
 *  history ends before bucket idx. */
void cp_gwin_site_full(cp_growth *s, cp_map *m, uint64_t stack, uint32_t idx, uint64_t bytes,
                       int is_free);

/*! cp_gwin_site() : count bytes allocated (is_free 0) or freed (1) at `stack` in
 *  map m (of cp_growth_site: s's sites or steps) in bucket idx; nothing when out of
 *  memory.  Inline for a known site whose history is up to date (nearly
 *  every ALLOC, FREE and wait): a call and frame would cost more than the
 *  update itself.  Unsigned on purpose:
 *  sizes come from the trace and may be anything up to 2^64-1, so no
 *  signed delta (and no negation of one) is ever formed. */
static inline __attribute__((always_inline)) void
cp_gwin_site(cp_growth *s, cp_map *m, uint64_t stack, uint32_t idx, uint64_t bytes, int is_free)
{
    size_t i = cp_map_find(m, stack);
    cp_growth_site *g = i != CP_MAP_NONE ? cp_map_at(m, i) : NULL;
    if (__builtin_expect(!g || idx > g->touched, 0)) {
        cp_gwin_site_full(s, m, stack, idx, bytes, is_free);
        return;
    }
    if (is_free) {
        g->live = bytes > g->live ? 0 : g->live - bytes;
    } else {
        g->live += bytes;
        g->count += bytes != 0;
    }
}

/*! cp_gwin_hist() : the history of site g (an entry of s's sites or steps).
 *  @return : it. */
static inline cp_growth_hist *cp_gwin_hist(const cp_growth *s, const cp_growth_site *g)
{
    return &s->hist[g->hist];
}

/*! cp_gwin_event() : one device memory event at the current work clock; total
 *  is the held total after it.  @return : its bucket.  Inline (every ALLOC
 *  and FREE of device memory): a call and frame would cost more than the
 *  work; cp_gwin_index() only when the clock left the last bucket. */
static inline __attribute__((always_inline)) uint32_t
cp_gwin_event(cp_growth *s, uint64_t total, uint64_t ts, int is_free)
{
    uint64_t at = (s->w - s->w0) >> s->width_log;
    uint32_t idx = at < CP_GROWTH_BUCKETS ? (uint32_t)at : cp_gwin_index(s, s->w);
    cp_growth_bucket *b = &s->b[idx];
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

/*! cp_gwin_respread() : when launch counts written after the last memory
 *  event moved the clock by more than an eighth of the work, spread that
 *  work back over the run in proportion to time (see the file's top), by
 *  moving the buckets (and every site's, step's and PyTorch sample's) to
 *  the right; map[j] is then the new bucket of old bucket j (the identity
 *  when nothing moved), for samples kept elsewhere.  May merge buckets.
 *  @return : 1 when it moved them, else 0. */
int cp_gwin_respread(cp_growth *s, uint32_t map[CP_GROWTH_BUCKETS]);

/*! cp_gwin_window() : the window (up to the teardown), its eighths' floors and
 *  where the growth starts, into *g (may merge buckets).  less (NULL: none)
 *  is, per bucket, memory to take out of its level first (what a leak held
 *  then): it must come from buckets already merged as this call leaves them,
 *  i.e. from after a call without it.
 *  @return : 1 when the floors show growth, else 0. */
int cp_gwin_window(cp_growth *s, cp_growth_win *g, const uint64_t *less);

#endif /* CHECK_GROWTH_WINDOW_H */
