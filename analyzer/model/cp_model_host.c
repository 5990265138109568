/*
 * cp_model_host.c - the process's host memory as the shim's writer sampled
 * it (HOSTINFO: the limits; HOSTMEM: RSS, pinned, MemAvailable, the
 * cgroup's usage): the last sample, the peak RSS and a ring of the last
 * few samples for the trend before a kill.  O(1) in the run's length.
 */
#include <errno.h>
#include <stdlib.h>

#include "cp_model.h"

int cp__model_host(cp_proc *p, const cp_record *r)
{
    if (r->type == CP_REC_HOSTINFO) {
        p->hm_mem_total = r->u.hostinfo.mem_total;
        p->hm_swap_total = r->u.hostinfo.swap_total;
        p->hm_cg_limit = r->u.hostinfo.cg_limit;
        free(p->hm_cg_path);
        p->hm_cg_path = NULL;
        if (r->u.hostinfo.cg_path.n && !(p->hm_cg_path = cp_str_dup(r->u.hostinfo.cg_path)))
            return -ENOMEM;
        return 0;
    }
    const typeof(r->u.hostmem) *h = &r->u.hostmem;
    p->hm_ring_ts[p->hm_n % CP_HM_RING] = r->ts;
    p->hm_ring_rss[p->hm_n % CP_HM_RING] = h->rss;
    p->hm_n++;
    p->hm_ts = r->ts;
    p->hm_rss = h->rss;
    p->hm_rss_shared = h->rss_shared;
    p->hm_pinned = h->pinned;
    p->hm_avail = h->mem_available;
    p->hm_cg_usage = h->cg_usage;
    if (h->rss > p->hm_peak_rss) {
        p->hm_peak_rss = h->rss;
        p->hm_peak_ts = r->ts;
    }
    return 0;
}

int cp_model_host_trend(const cp_proc *p, uint64_t window_ns, int64_t *d_rss, uint64_t *d_ns)
{
    unsigned n = p->hm_n < CP_HM_RING ? (unsigned)p->hm_n : CP_HM_RING;
    if (n < 2)
        return 0;
    unsigned last = (unsigned)((p->hm_n - 1) % CP_HM_RING);
    /* The oldest kept sample inside the window. */
    unsigned from = last;
    for (unsigned k = 1; k < n; k++) {
        unsigned i = (unsigned)((p->hm_n - 1 - k) % CP_HM_RING);
        if (p->hm_ring_ts[last] - p->hm_ring_ts[i] > window_ns)
            break;
        from = i;
    }
    if (from == last || p->hm_ring_ts[last] <= p->hm_ring_ts[from])
        return 0;
    *d_rss = (int64_t)(p->hm_ring_rss[last] - p->hm_ring_rss[from]);
    *d_ns = p->hm_ring_ts[last] - p->hm_ring_ts[from];
    return 1;
}
