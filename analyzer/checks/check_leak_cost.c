/*
 * check_leak_cost.c - what a leak cost in this run: its share of the card, a
 * site that leaks every iteration, memory held at an out-of-memory failure
 * (see check_leak_cost.h for the rule).
 */
#include <stdio.h>

#include "check_leak_cost.h"

void cp_leak_cost_alloc(cp_map *work, cp_leak_oom *oom, const cp_record *r)
{
    if (r->ev.result == CUDA_ERROR_OUT_OF_MEMORY) {
        uint64_t dev = (uint64_t)r->ev.dev;     /* -1 (none) is out of range too */
        if (cp_hold_of_kind(r->u.alloc.kind) >= 0 && dev < CP_MAX_DEV) {
            oom[dev].ts = r->ts;
            oom[dev].size = r->u.alloc.size;
        }
        return;
    }
    if (r->ev.result != 0 || r->u.alloc.launches == CP_LAUNCHES_UNKNOWN)
        return;
    int created;
    cp_leak_work *w = cp_map_put(work, r->ev.stack, &created);
    if (!w)
        return;
    if (created)
        w->first = r->u.alloc.launches;
    else if (r->u.alloc.launches != w->first)
        w->worked = 1;
}

void cp_leak_cost_add(cp_leak_cost *c, const cp_live *l, const cp_leak_oom *oom)
{
    int dev = l->dev >= 0 && l->dev < CP_MAX_DEV && cp_hold_of_kind(l->kind) >= 0 ? l->dev
                                                                                  : CP_LEAK_HOST;
    c->bytes[dev] += l->size;
    if (dev != CP_LEAK_HOST && oom[dev].ts && l->ts < oom[dev].ts)
        c->at_oom[dev] += l->size;
}

/* The card's (or the host's) capacity, 0 when the trace does not say. */
static uint64_t lk_capacity(const cp_proc *p, int dev)
{
    return dev == CP_LEAK_HOST ? p->hm_mem_total : p->dev[dev].total_mem;
}

/* The bytes from which a leak on dev is a meaningful share. */
static uint64_t lk_bar(const cp_proc *p, int dev)
{
    uint64_t cap = lk_capacity(p, dev);
    return cap && cap / CP_LEAK_SHARE_DIV < CP_LEAK_FLOOR ? cap / CP_LEAK_SHARE_DIV : CP_LEAK_FLOOR;
}

/* "GPU 1" or "host memory" into buf. */
static const char *lk_where(int dev, char *buf, size_t cap)
{
    if (dev == CP_LEAK_HOST)
        snprintf(buf, cap, "host memory");
    else
        snprintf(buf, cap, "GPU %d", dev);
    return buf;
}

/* "1.37% of GPU 0's 1.00 GiB" (or without a share when the capacity is
 * unknown) into buf. */
static const char *lk_share(const cp_proc *p, int dev, uint64_t bytes, char *buf, size_t cap)
{
    char w[32], b[32];
    uint64_t c = lk_capacity(p, dev);
    double pct = c ? 100.0 * (double)bytes / (double)c : 0;
    if (!c)
        snprintf(buf, cap, "of %s (capacity unknown)", lk_where(dev, w, sizeof w));
    else if (pct < 0.01)
        snprintf(buf, cap, "less than 0.01%% of %s's %s", lk_where(dev, w, sizeof w),
                 cp_fmt_bytes(c, b, sizeof b));
    else
        snprintf(buf, cap, "%.2f%% of %s's %s", pct, lk_where(dev, w, sizeof w),
                 cp_fmt_bytes(c, b, sizeof b));
    return buf;
}

/* The site that leaks every iteration: CP_LEAK_REPEAT or more allocations left
 * with kernels launched between them (the one with the most bytes).
 * @return : it, or NULL. */
static const cp_agg_val *lk_repeating(const cp_map *sites, const cp_map *work)
{
    const cp_agg_val *best = NULL, *v;
    size_t it = 0;
    while ((v = cp_map_next((cp_map *)sites, &it, NULL))) {
        if (v->count < CP_LEAK_REPEAT)
            continue;
        /* No entry: the trace has no launch counter, the count decides. */
        const cp_leak_work *w = cp_map_get(work, v->stack);
        if (w && !w->worked)
            continue;
        if (!best || v->bytes > best->bytes)
            best = v;
    }
    return best;
}

int cp_leak_cost_judge(cp_finding *f, const cp_proc *p, const cp_leak_cost *c, const cp_map *sites,
                  const cp_map *work, const cp_leak_oom *oom, int at_exit)
{
    const char *until = at_exit ? "exit" : "its context was destroyed";
    const char *freed = at_exit ? "at exit" : "with its context";
    char b1[32], b2[32], b3[32], sh[96], w[32];
    int most = 0, share = -1, hit = -1;
    for (int d = 0; d <= CP_LEAK_HOST; d++) {
        if (c->bytes[d] > c->bytes[most])
            most = d;
        if (c->bytes[d] && c->bytes[d] >= lk_bar(p, d) &&
            (share < 0 || c->bytes[d] > c->bytes[share]))
            share = d;
        if (d < CP_LEAK_HOST && c->at_oom[d] && c->at_oom[d] >= oom[d].size &&
            (hit < 0 || c->at_oom[d] > c->at_oom[hit]))
            hit = d;
    }
    const cp_agg_val *rep = lk_repeating(sites, work);
    cp_jb_key(&f->details, "at_risk");
    cp_jb_open(&f->details, '[');
    if (share >= 0) {
        cp_jb_vals(&f->details, "s", "share");
        cp_finding_line(f, "Cost: %s held for nothing until %s: %s (the bar: 1%% of the "
                        "card, at most %s)", cp_fmt_bytes(c->bytes[share], b1, sizeof b1),
                        until, lk_share(p, share, c->bytes[share], sh, sizeof sh),
                        cp_fmt_bytes(CP_LEAK_FLOOR, b2, sizeof b2));
    }
    if (rep) {
        cp_jb_vals(&f->details, "s", "repeats");
        cp_finding_line(f, "Cost: one call site left %llu allocations behind (%s each on "
                        "average, %s in all)%s: it leaks every iteration, and the longer "
                        "the run the more memory it takes",
                        (unsigned long long)rep->count,
                        cp_fmt_bytes(rep->bytes / rep->count, b1, sizeof b1),
                        cp_fmt_bytes(rep->bytes, b2, sizeof b2),
                        cp_map_get(work, rep->stack) ? " with kernels launched between them"
                                                     : "");
    }
    if (hit >= 0) {
        cp_jb_vals(&f->details, "s", "oom");
        cp_finding_line(f, "Cost: %s of it was held on %s when an allocation of %s failed "
                        "there out of memory: freed, it could have served that request",
                        cp_fmt_bytes(c->at_oom[hit], b1, sizeof b1),
                        lk_where(hit, w, sizeof w), cp_fmt_bytes(oom[hit].size, b2, sizeof b2));
    }
    cp_jb_close(&f->details, ']');
    cp_jb_ku(&f->details, "repeat_count", rep ? rep->count : 0);
    cp_jb_ku(&f->details, "repeat_bytes", rep ? rep->bytes : 0);
    if (share >= 0 || rep || hit >= 0) {
        f->sev = CP_SEV_WARNING;
        return 1;
    }
    f->sev = CP_SEV_INFO;
    cp_finding_line(f, "Cost: nothing material in this run: %s is %s, below the bar of %s "
                    "(1%% of the card, at most %s); no call site left %d or more allocations "
                    "with kernels launched between them; no allocation ran out of memory "
                    "while it was held. The driver freed it %s.",
                    cp_fmt_bytes(c->bytes[most], b1, sizeof b1),
                    lk_share(p, most, c->bytes[most], sh, sizeof sh),
                    cp_fmt_bytes(lk_bar(p, most), b2, sizeof b2),
                    cp_fmt_bytes(CP_LEAK_FLOOR, b3, sizeof b3), CP_LEAK_REPEAT, freed);
    return 0;
}
