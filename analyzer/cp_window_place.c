/*
 * cp_window_place.c - a window's place in each trace (cp_window_place.h):
 * one HEADER read per trace before any is analyzed, since the run's start
 * is known only once every trace's start is.
 */
#include <stdlib.h>

#include "cp_window_place.h"
#include "cp_decode.h"

typedef struct cp_start {
    uint64_t mono, wall;        /* the HEADER's time, and the wall clock then (0: none) */
    int ok;
} cp_start;

static cp_start cp_trace_start(const char *path)
{
    cp_start st = { 0, 0, 0 };
    const char *err;
    cp_dec *d = cp_dec_open(path, &err);
    if (!d)
        return st;
    cp_record r;
    if (cp_dec_next(d, &r) == 1 && r.type == CP_REC_HEADER)
        st = (cp_start){ r.ts, r.u.header.wall_ns, 1 };
    cp_dec_close(d);
    return st;
}

/* a + b, or the end of time: a trace's clock may start anywhere. */
static uint64_t cp_add_sat(uint64_t a, uint64_t b)
{
    return a > CP_WINDOW_END - b ? CP_WINDOW_END : a + b;
}

void cp_window_place(const cp_filter *f, char *const *files, size_t n, cp_wspan *span,
                     cp_window *w)
{
    cp_start *st = calloc(n ? n : 1, sizeof *st);
    size_t first = n;
    int wall = 1;
    for (size_t i = 0; st && i < n; i++) {
        st[i] = cp_trace_start(files[i]);
        wall &= !st[i].ok || st[i].wall != 0;
    }
    for (size_t i = 0; st && i < n; i++)
        if (st[i].ok && (first == n || (wall ? st[i].wall < st[first].wall
                                             : st[i].mono < st[first].mono)))
            first = i;
    *w = (cp_window){ .since = f->since, .until = f->until,
                      .origin = first < n ? st[first].mono : 0 };
    for (size_t i = 0; i < n; i++) {
        span[i] = (cp_wspan){ 0, CP_WINDOW_END, 0 };
        if (!st || !st[i].ok || first == n)
            continue;
        const cp_start *a = &st[i], *z = &st[first];
        uint64_t off = wall ? a->wall - z->wall : a->mono - z->mono;
        span[i].off = off;
        if (f->since > off)
            span[i].lo = cp_add_sat(a->mono, f->since - off);
        /* A process started at or after the window's end has none of it:
         * its first record is already past hi. */
        if (f->until != CP_FILTER_END)
            span[i].hi = cp_add_sat(a->mono, f->until > off ? f->until - off : 0);
    }
    free(st);
}
