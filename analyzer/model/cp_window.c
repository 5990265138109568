/*
 * cp_window.c - a process's model at the opening of a window (cp_window.h).
 */
#include <stdio.h>

#include "cp_window.h"
#include "cp_ledger.h"
#include "cp_opts.h"
#include "cp_series.h"

void cp_window_open(cp_proc *p, uint64_t ts)
{
    p->win_from = ts;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        cp_devmem *m = &p->mem[d];
        /* Whether the process used a GPU is a fact of its life so far
         * (cp_proc_used_gpu()), not of the window's. */
        p->n_alloc_before += m->n_alloc;
        m->n_alloc = m->alloc_bytes = m->n_free = m->max_request = 0;
        m->peak_total = m->held_total;
        m->peak_ts = ts;
    }
    p->hm_peak_rss = p->hm_rss;
    p->hm_peak_ts = p->hm_rss ? ts : 0;
    /* The timeline first: the tables' per-site timelines follow its buckets. */
    if (p->series)
        cp_series_restart(p->series, p, ts);
    if (p->ledger)
        cp_ledger_seed(p->ledger, p);
}

void cp_window_close(cp_proc *p, uint64_t ts)
{
    if (p->series)
        cp_series_reach(p->series, p, ts);
}

const char *cp_window_say(const cp_window *w, char *buf, size_t cap)
{
    char a[32], b[32];
    cp_opt_secs_str(w->since, a, sizeof a);
    if (w->until == CP_WINDOW_END)
        snprintf(buf, cap, "%s s \u2013 the end of the run", a);
    else
        snprintf(buf, cap, "%s s \u2013 %s s of the run", a,
                 cp_opt_secs_str(w->until, b, sizeof b));
    return buf;
}
