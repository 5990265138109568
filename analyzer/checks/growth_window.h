/*
 * growth_window.h - the state of memory-growth (check_growth.c) and its
 * timeline on the work axis (growth_window.c): buckets of kernel launches,
 * per-site live bytes at their boundaries, and the growth window.
 */
#ifndef GROWTH_WINDOW_H
#define GROWTH_WINDOW_H

#include <stdint.h>

#include "cp_map.h"

#define GB 64
#define GSEG 8
#define CP_GROWTH_MIN (16ull << 20)
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
} gwin;

/*! gw_index() : the bucket of work clock value w (>= s->w0), merging the
 *  buckets (and every site's and step's at[]) until it fits.
 *  @return : the bucket, < GB. */
uint32_t gw_index(cp_gr *s, uint64_t w);

/*! gw_slot() : the bucket of an event at the current work clock that is not
 *  a memory event (a PyTorch sample, a wait).  @return : the bucket, < GB. */
uint32_t gw_slot(cp_gr *s);

/*! gw_site() : count bytes allocated (is_free 0) or freed (1) at `stack` in
 *  map m (of gsite: s's sites or steps) in bucket idx; nothing when out of
 *  memory. */
void gw_site(cp_gr *s, cp_map *m, uint64_t stack, uint32_t idx, uint64_t bytes, int is_free);

/*! gw_hist() : the history of site g (an entry of s's sites or steps).
 *  @return : it. */
static inline ghist *gw_hist(const cp_gr *s, const gsite *g)
{
    return &s->hist[g->hist];
}

/*! gw_event() : one device memory event at the current work clock; total
 *  is the held total after it.  @return : its bucket. */
uint32_t gw_event(cp_gr *s, uint64_t total, uint64_t ts, int is_free);

/*! gw_window() : the window (up to the teardown), its eighths' floors and
 *  where the growth starts, into *g (may merge buckets).
 *  @return : 1 when the floors show growth, else 0. */
int gw_window(cp_gr *s, gwin *g);

#endif /* GROWTH_WINDOW_H */
