/*
 * check_growth.c - memory-growth: device memory held keeps rising while
 * the process keeps working, with no plateau, up to the end of the run.
 *
 * The axis is work, not memory events: kernel launches, counted per
 * thread from ALLOC records (the thread's launches so far), COPY and SYNC
 * records (launches since the previous one) and LAUNCH_COUNT records.  A
 * caching allocator (PyTorch, JAX, CuPy) takes segments from the driver
 * and never gives them back during a run, so how many frees the driver
 * saw says nothing; what tells a warm-up from growth is whether memory
 * still arrives after most of the work is done.  A warm-up takes its
 * memory in the first steps and then runs hundreds of steps on it: on the
 * work axis that is a rise followed by a long flat line.
 *
 * The held total is kept per bucket of work; the 64 buckets double their
 * width whenever the run outgrows them, so the timeline costs the same for
 * ten launches or a billion.  Each allocation site keeps its live bytes at
 * every bucket boundary (merged the same way), which tells at the end
 * which sites' memory arrived during the growth and was still there when
 * it ended.  The teardown (frees after the last allocation followed by
 * almost no work) is not part of the window.
 *
 * Growth = over 8 equal eighths of the work, the floor (lowest held
 * total) rises from one eighth to the next at least 6 times of 7, still
 * rises in the last one, by CP_GROWTH_MIN or more in all.  Where the
 * PyTorch companion recorded its allocator, growth of the cache alone
 * (reserved rising while allocated does not, and no line that attribution
 * saw still adding live tensors in the growth's second half) is info: the
 * allocator gives that memory back before an allocation fails.  Memory
 * kept by a line to the end of the run is a warning however much the cache
 * grew around it: a longer run exhausts it.
 *
 * Launch counts written after the last memory event (a thread seen only
 * through them, at exit) are work done during the run: spread back over it
 * in proportion to time (cp_gwin_respread()) before the window is judged,
 * up to the companion's exit record when there is one (the program's code
 * had returned; the interpreter's teardown launches nothing of its).
 *
 * When the whole window fails that rule, its second half is tried: a
 * warm-up whose floors rise and fall (a JIT compiler's first steps) may
 * take up to half of the work; the growth is then measured from the
 * second half's start.
 *
 * The growth starts where the warm-up's plateau ends: the first rise after
 * the last stretch of more than an eighth of the work in which memory held
 * did not rise, when that stretch ends in the first half of the work (a
 * warm-up takes the first steps, never most of the run); without one, at
 * the window's start.  Amount, rate, "full at", sites and PyTorch's own
 * timeline are all measured from there: measured from the first
 * allocation, the warm-up's segments counted as growth and its plateau's
 * time diluted the rate.  PyTorch samples are kept per bucket (the first
 * of each, merged like the buckets), so that timeline starts at the first
 * sample of the growth, not the first of the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_advice.h"
#include "cp_backward.h"
#include "cp_checks.h"
#include "cp_fw.h"
#include "check_growth_pool.h"
#include "check_growth_attrib.h"
#include "check_growth_window.h"
#include "check_leak_owner.h"

extern const cp_check cp_check_growth;   /* defined at the end of this file */

#define CP_STEP_MIN 16              /* a read-back repeated this often marks steps */

static const cp_state_map gr_maps[] = {
    CP_STATE_MAP(cp_growth, sites, cp_growth_site),
    CP_STATE_MAP(cp_growth, threads, cp_growth_thread),
    CP_STATE_MAP(cp_growth, steps, cp_growth_site),
};

static void gr_done(void *st)
{
    cp_growth *s = st;
    if (s) {
        free(s->hist);
        cp_gpool_free(s->pool);
        cp_gattr_free(s->attr);
    }
}

/* Counts come from the trace: saturate rather than wrap. */
static uint64_t u64_sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* The work clock only moves forward. */
static void gr_clock(cp_growth *s)
{
    uint64_t w = s->w_thr > s->lc_total ? s->w_thr : s->lc_total;
    if (w > s->w)
        s->w = w;
}

/* bytes / secs as an integer, saturated: times and sizes come from the
 * trace, and a double beyond 2^64 does not convert (UBSan, found by
 * tests/fuzz/fuzz_report.c). */
static uint64_t cp_rate_u64(double bytes, double secs)
{
    double r = secs > 0 ? bytes / secs : 0;
    if (!(r > 0))
        return 0;
    return r >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)r;
}

/* Thread tid is known to have made `total` launches so far. */
static void gr_work(cp_growth *s, uint64_t tid, uint64_t total, int delta)
{
    uint64_t was = s->w;
    cp_growth_thread *t = s->last_thr;
    if (!t || s->last_tid != tid) {
        t = cp_map_put(&s->threads, tid, NULL);
        if (!t)
            return;
        s->last_thr = t;
        s->last_tid = tid;
    }
    if (delta) {
        t->copy_cum = u64_sat_add(t->copy_cum, total);
        total = t->copy_cum;
    }
    if (total > t->known) {
        s->w_thr = u64_sat_add(s->w_thr, total - t->known);
        t->known = total;
    }
    gr_clock(s);
    if (s->w != was)
        s->lc_moved = 0;
}

/* The companion's records written as the interpreter exits ("torch.exit",
 * "jax.exit", "cupy.exit", companion.info's "exit" event): the program's
 * own code has returned. */
static int gr_is_exit_record(const cp_proc *p)
{
    const char *k = p->fw_ready_kind;
    size_t n = k ? strlen(k) : 0;
    if (n > 5 && strcmp(k + n - 5, ".exit") == 0)
        return 1;
    char ev[16];
    cp_jv v = { p->fw_ready_json, p->fw_ready_len };
    return n && strcmp(k, "companion.info") == 0 && cp_json_str(v, "event", ev, sizeof ev) == 0 &&
           strcmp(ev, "exit") == 0;
}

static void gr_framework(cp_proc *p, cp_growth *s, uint64_t ts)
{
    if (!s->py_exit_ts && gr_is_exit_record(p))
        s->py_exit_ts = ts;
    if (cp_gpool_add(&s->pool, p, s->w, ts))
        return;
    const cp_attrib_sample *as = cp_attrib_current(p);
    if (as) {
        /* Out of memory loses this sample; the others still span the growth. */
        (void)cp_gattr_add(&s->attr, as, s->started ? (int64_t)(s->w - s->w0) : -1, p->held_all);
        return;
    }
    if (!p->fw_ready_kind || strncmp(p->fw_ready_kind, "torch.", 6) != 0 ||
        strcmp(p->fw_ready_kind, "torch.oom") == 0)
        return;
    cp_jv v = { p->fw_ready_json, p->fw_ready_len }, devs, d;
    uint64_t a = 0, r = 0;
    size_t it = 0;
    if (cp_json_member(v, "devices", &devs))
        return;
    while (cp_json_next(devs, &it, &d) == 1) {
        cp_torch_dev td;
        if (cp_torch_dev_parse(d, &td) == 0) {
            a += td.allocated;
            r += td.reserved;
        }
    }
    cp_growth_torch t = { a, r, ts };
    if (!s->torch_seen) {
        s->torch_seen = 1;
        s->t0 = t;
    }
    s->t1 = t;
    if (!s->py_exit_ts)
        s->t_run = t;
    if (!s->in_tail)
        s->t_pre = t;
    s->torch_n++;
    if (!s->started) {
        s->torch_pre++;
        return;
    }
    uint32_t idx = cp_gwin_slot(s);
    if (!s->tn[idx]++)
        s->tb[idx] = t;
}

/* The rest of memory-growth's records: inline too (cp_checks.h). */
static inline __attribute__((always_inline)) void
gr_rec_full(cp_proc *p, cp_growth *s, const cp_record *r)
{
    switch (r->type) {
    case CP_REC_FRAMEWORK:
        gr_framework(p, s, r->ts);
        return;
    case CP_REC_COPY:
    case CP_REC_SYNC: {
        uint64_t n = r->type == CP_REC_COPY ? r->u.copy.launches : r->u.sync.launches;
        if (n != CP_LAUNCHES_UNKNOWN)
            gr_work(s, r->tid, n, 1);
        /* A wait for the GPU repeated through the run marks its steps. */
        int wait = r->type == CP_REC_SYNC ? r->u.sync.op != CP_SYNC_GRAPH_LAUNCH
                                          : !(r->u.copy.flags & CP_CF_ASYNC) &&
                                                r->u.copy.dst_class != CP_MC_DEVICE;
        if (wait && r->ev.result == 0)
            cp_gwin_site(s, &s->steps, r->ev.stack, cp_gwin_slot(s), 1, 0);
        return;
    }
    default:
        break;
    }
    if (r->ev.result != 0)
        return;
    if (r->type == CP_REC_ALLOC) {        /* after the model: total includes it */
        if (r->u.alloc.launches != CP_LAUNCHES_UNKNOWN)
            gr_work(s, r->tid, r->u.alloc.launches, 0);
        if (cp_hold_of_kind(r->u.alloc.kind) < 0)
            return;
        if (!s->started) {
            s->started = 1;
            s->w0 = s->w;
        }
        s->lc_moved = 0;
        s->t_pre = s->t1;       /* a tail that ends was no teardown */
        s->ts_alloc = r->ts;
        uint32_t idx = cp_gwin_event(s, p->held_all, r->ts, 0);
        s->n_alloc++;
        cp_gwin_site(s, &s->sites, r->ev.stack, idx, r->u.alloc.size, 0);
        return;
    }
    /* FREE, before the model: the allocation is still in the live map. */
    const cp_live *l = cp_model_freeing(p, r);
    if (!s->started || !l || cp_hold_of_kind(l->kind) < 0)
        return;
    uint64_t total = p->held_all;
    uint64_t stack = l->stack, size = l->size;
    s->lc_moved = 0;
    uint32_t idx = cp_gwin_event(s, total >= size ? total - size : 0, r->ts, 1);
    cp_gwin_site(s, &s->sites, stack, idx, size, 1);
}

/* LAUNCH_COUNT, a sixth of a training run's records, before
 * gr_rec_full(): inlined into the checks' dispatch. */
__attribute__((always_inline)) inline void
cp_check_growth_rec(cp_proc *p, void *st, const cp_record *r)
{
    cp_growth *s = st;
    if (r->type == CP_REC_LAUNCH_COUNT) {
        uint64_t was = s->w;
        s->lc_total = u64_sat_add(s->lc_total, r->u.launch_count.count);
        gr_clock(s);
        if (s->w != was) {
            if (!s->lc_moved) {
                s->lc_moved = 1;
                s->lc_from = was;
            }
            s->lc_ts = r->ts;
        }
        return;
    }
    gr_rec_full(p, s, r);
}

/* Steps recognised from the read-back or sync repeated most often: those
 * after bucket sb (the growth's), or all of them when from_start. */
static uint64_t gr_steps(cp_growth *s, uint32_t sb, int from_start)
{
    cp_growth_site *g, *best = NULL;
    size_t it = 0;
    while ((g = cp_map_next(&s->steps, &it, NULL)))
        if (!best || g->live > best->live)
            best = g;
    if (!best || best->live < CP_STEP_MIN)
        return 0;
    if (from_start)
        return best->live;
    uint64_t before = sb < best->touched ? cp_gwin_hist(s, best)->at[sb] : best->live;
    return best->live - before;
}

/* The device that held the most at its peak: whose card fills first. */
static int gr_card(const cp_proc *p)
{
    int best = -1;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        if (p->dev[d].total_mem && (best < 0 || p->mem[d].peak_total > p->mem[best].peak_total))
            best = d;
    return best;
}

/* PyTorch's timeline over the growth: its first sample from the growth's
 * start bucket on (*t0), and how many samples from there to the end. */
static uint64_t gr_torch_from(const cp_growth *s, const cp_growth_win *g, cp_growth_torch *t0)
{
    if (!g->start) {
        *t0 = s->t0;
        return s->torch_n;
    }
    uint64_t before = s->torch_pre;
    for (uint32_t j = 0; j < g->start; j++)
        before += s->tn[j];
    *t0 = s->t1;
    for (uint32_t j = g->start; j < CP_GROWTH_BUCKETS; j++)
        if (s->tn[j]) {
            *t0 = s->tb[j];
            break;
        }
    return s->torch_n - before;
}

/* What PyTorch's own view says grew (details' torch_cause). */
enum gr_cause { GR_TENSORS, GR_KEPT, GR_CACHE, GR_OUTSIDE };
static const char *const gr_cause_names[] = { "tensors", "kept", "cache", "outside" };
static const char *const gr_cause_words[] = {
    "live tensors are growing (references are being kept)",
    "the cache grew more than the live tensors, but the lines below hold more live tensors at "
    "the end of the growth than at its start, and still added to them in its second half "
    "(attribution): memory kept, which a longer run keeps adding and PyTorch cannot release",
    "the cache grows while live tensors do not",
    "PyTorch's pool grew by less than half of it: what grew is held outside PyTorch's "
    "allocator, which does not release it",
};

/* keeps: bytes attribution saw still rising at lines of the program in the
 * growth's second half (cp_gattr_out). */
static void gr_torch_lines(cp_finding *f, cp_growth *s, const cp_growth_win *g, uint64_t growth,
                           uint64_t keeps)
{
    char b1[32], b2[32], b3[32], b4[32];
    enum gr_cause cause;
    cp_growth_torch t0;
    uint64_t n = gr_torch_from(s, g, &t0);
    /* The end of the growth: the last sample, or after a teardown the last
     * one before it (the exit's comes after the program freed what grew and
     * emptied the cache: Lightning's teardown). */
    cp_growth_torch t1 = g->teardown && s->t_pre.ts ? s->t_pre : s->t1;
    /* The exit's sample comes after the program's code returned, which
     * may have let go of what grew (predictions gathered on the GPU, then
     * moved to the host): the last sample taken while it ran says what
     * grew, when it held more live tensors. */
    if (s->t_run.ts >= t0.ts && s->t_run.ts < t1.ts && s->t_run.alloc > t1.alloc)
        t1 = s->t_run;
    if (n < 2) {
        /* One record (at exit) has no trend: say what holds the memory. */
        cause = t1.alloc * 2 >= t1.res ? GR_TENSORS : GR_CACHE;
        cp_finding_line(f, "PyTorch at the end: %s allocated of %s reserved: %s",
                        cp_fmt_bytes(t1.alloc, b1, sizeof b1),
                        cp_fmt_bytes(t1.res, b2, sizeof b2),
                        cause == GR_TENSORS
                            ? "live tensors hold the memory (references are being kept)"
                            : "most of it is the allocator's cache, not live tensors");
    } else {
        /* Live tensors that grew by a quarter of it, or by a sixteenth
         * and 64 MiB or more: tensors gathered by concatenation (each
         * step a bigger copy) grow the cache many times faster than
         * themselves, and they are what cannot be released.  The sixteenth
         * is also of what the pool reserved between the same two samples:
         * the driver's growth runs on past the timeline's last one. */
        uint64_t live = t1.alloc > t0.alloc ? t1.alloc - t0.alloc : 0;
        uint64_t res = t1.res > t0.res ? t1.res - t0.res : 0;
        cause = live > growth / 4 ||
                        (live >= 4 * CP_GROWTH_MIN && (live >= growth / 16 || live >= res / 16))
                                                 ? GR_TENSORS
                : keeps >= CP_GROWTH_MIN          ? GR_KEPT
                : t1.res >= t0.res + growth / 2  ? GR_CACHE
                                                 : GR_OUTSIDE;
        cp_finding_line(f, "PyTorch's own timeline (%llu samples%s): allocated %s -> %s, "
                        "reserved %s -> %s: %s", (unsigned long long)n,
                        g->start ? " of the growth" : "",
                        cp_fmt_bytes(t0.alloc, b1, sizeof b1),
                        cp_fmt_bytes(t1.alloc, b2, sizeof b2),
                        cp_fmt_bytes(t0.res, b3, sizeof b3),
                        cp_fmt_bytes(t1.res, b4, sizeof b4), gr_cause_words[cause]);
        if (cause == GR_CACHE) {
            /* The allocator frees its cache and retries before an
             * allocation fails: memory at risk is not what it holds. */
            f->sev = CP_SEV_INFO;
            cp_finding_line(f, "Cache growth costs no failure: PyTorch releases cached "
                            "blocks before an allocation would fail (info).");
        }
    }
    cp_jb_ks(&f->details, "torch_cause", gr_cause_names[cause]);
}

/* enum cp_fw bits (cp_libs.h) of enum cp_attr_fw bits. */
static unsigned gr_attr_fws(unsigned attr)
{
    return ((attr >> CP_ATTR_TORCH) & 1 ? CP_FW_TORCH : 0) |
           ((attr >> CP_ATTR_CUPY) & 1 ? CP_FW_CUPY : 0);
}

/* The lines of a finding whose sites came from attribution. */
static void gr_attr_lines(cp_finding *f, const cp_proc *p, const cp_gattr_out *ga,
                          uint64_t growth)
{
    char b1[32], b2[32], t1[32], t2[32];
    int torch = (ga->fw >> CP_ATTR_TORCH) & 1, cupy = (ga->fw >> CP_ATTR_CUPY) & 1;
    cp_finding_line(f, "Attribution (%s%s%s) names the lines that allocated the memory still "
                    "held: the sites below are those whose live bytes grew, %s in all, from +%s "
                    "to +%s into the run; the driver saw the pool refilled wherever its cache "
                    "ran out, often another line of the same loop.",
                    torch ? "PyTorch's record of the stack of each live block" : "",
                    torch && cupy ? "; " : "",
                    cupy ? "a CuPy memory hook counting each live pool allocation by its line"
                         : "",
                    cp_fmt_bytes(ga->bytes, b1, sizeof b1),
                    cp_fmt_ns(ga->ts_from > p->t0 ? ga->ts_from - p->t0 : 0, t1, sizeof t1),
                    cp_fmt_ns(ga->ts_to > p->t0 ? ga->ts_to - p->t0 : 0, t2, sizeof t2));
    if (ga->unattributed * 8 >= growth)
        cp_finding_line(f, "%s more has no frame of the program's own code: allocated before "
                        "attribution began, by the framework's C++ code, or by PyTorch's "
                        "autograd threads in a backward pass.",
                        cp_fmt_bytes(ga->unattributed, b2, sizeof b2));
}

/* The end of the caching-allocator line when no attribution named the
 * sites: how to get it, or why it was not there. */
static const char *gr_attr_advice(const cp_proc *p, int fwk, const cp_gattr_out *ga)
{
    static _Thread_local char buf[400];
    const char *why;
    char b1[32];
    int fw = fwk == CP_FWK_TORCH ? CP_ATTR_TORCH : fwk == CP_FWK_CUPY ? CP_ATTR_CUPY : -1;
    if (fw < 0)
        return "";
    switch (cp_attrib_state(p, fw, &why)) {
    case CP_ATTR_OFF:
        snprintf(buf, sizeof buf, " Attribution was asked for but is off: %s.",
                 why ? why : "it stopped");
        return buf;
    case CP_ATTR_ON:
        if (!((ga->spanned >> fw) & 1))
            return " Attribution was on, but too few of its samples fell in the growth to "
                   "tell which lines kept it.";
        snprintf(buf, sizeof buf, " Attribution was on and no line of the program holds more "
                 "live memory at the end than at the start: what grew is the allocator's "
                 "cache%s%s%s.", ga->unattributed ? ", or memory with no frame of the program's "
                 "own (" : "", ga->unattributed ? cp_fmt_bytes(ga->unattributed, b1, sizeof b1)
                                                : "", ga->unattributed ? " more)" : "");
        return buf;
    default:
        return " Run again with --attribute (cuprobe run --attribute ...) to name the line "
               "that keeps it.";
    }
}

/* Every site's history up to the last bucket (its live bytes since its
 * last event). */
static void gr_hist_fill(cp_growth *s)
{
    size_t it = 0;
    cp_growth_site *gs;
    while ((gs = cp_map_next(&s->sites, &it, NULL))) {
        cp_growth_hist *h = cp_gwin_hist(s, gs);
        for (uint32_t j = gs->touched; j < CP_GROWTH_BUCKETS; j++) {
            h->at[j] = gs->live;
            h->n_at[j] = gs->count;
        }
        gs->touched = CP_GROWTH_BUCKETS;
    }
}

/* Is site stack one of the sites of the leak findings lost[0..n)? */
static int gr_lost_site(cp_finding *const *lost, size_t n, uint64_t stack)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < lost[i]->n_sites; k++)
            if (lost[i]->sites[k].stack == stack)
                return 1;
    return 0;
}

/* Growth that a small leak explains is that leak's: memory lost every
 * step raises the floor of every eighth, and a warm-up in the first steps
 * then has no plateau and adds its own memory to the amount.  When the
 * leak's sites rose by less than CP_GROWTH_MIN over the window (too little
 * to be growth by itself) and the window, judged again with their memory
 * taken out of each bucket (what they held at its start), no longer shows
 * growth, the leak finding (a warning: it cost something) gets the growth
 * as a line and no memory-growth finding is made for the same memory.  A
 * leak that is growth by itself keeps both: memory-growth's rate, time to
 * a full card and sites (the backward pass, attribution) say more.  The
 * leak check finishes first (the registry's order).
 * @return : 1 when folded. */
static int gr_leak_fold(cp_proc *p, cp_growth *s, cp_report *rep, const cp_growth_win *w,
                        uint64_t growth, uint64_t ns)
{
    cp_finding *lost[2], *into = NULL;
    size_t n = 0;
    for (size_t i = 0; i < rep->n && n < 2; i++) {
        cp_finding *o = rep->f[i];
        if (o->check != &cp_check_leak || o->proc != p || o->tag != CP_LEAK_TAG_LOST)
            continue;
        lost[n++] = o;
        if (o->sev >= CP_SEV_WARNING && (!into || o->bytes > into->bytes))
            into = o;
    }
    if (!into)
        return 0;
    uint64_t less[CP_GROWTH_BUCKETS] = { 0 }, rise = 0;
    size_t it = 0;
    cp_growth_site *gs;
    gr_hist_fill(s);
    while ((gs = cp_map_next(&s->sites, &it, NULL))) {
        if (!gr_lost_site(lost, n, gs->stack))
            continue;
        const cp_growth_hist *h = cp_gwin_hist(s, gs);
        for (uint32_t j = 1; j < CP_GROWTH_BUCKETS; j++)
            less[j] += h->at[j - 1];
        rise += h->at[w->end] > h->at[0] ? h->at[w->end] - h->at[0] : 0;
    }
    cp_growth_win g;
    if (rise >= CP_GROWTH_MIN || cp_gwin_window(s, &g, less))
        return 0;
    char b1[32], tb[32];
    cp_finding_line(into, "Memory held rose with it to the end of the run, with no plateau "
                    "(by %s over %s, a warm-up's memory included). Without the memory this "
                    "leak lost nothing grows: the leak is that growth, and memory-growth "
                    "does not report it again.", cp_fmt_bytes(growth, b1, sizeof b1),
                    cp_fmt_ns(ns, tb, sizeof tb));
    cp_jb_ku(&into->details, "growth_bytes", growth);
    return 1;
}

static void gr_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_growth *s = st;
    cp_growth_win g;
    uint32_t map[CP_GROWTH_BUCKETS];
    if (s->started && cp_gwin_respread(s, map))
        cp_gattr_remap(s->attr, map, CP_GROWTH_BUCKETS, s->width_log);
    if (!s->started || s->n_alloc < CP_GROWTH_SEGS || !cp_gwin_window(s, &g, NULL)) {
        /* The driver saw no growth: inside XLA's pool, its own samples may. */
        cp_gpool_finish(s->pool, p, rep, &cp_check_growth, s->w);
        return;
    }
    uint64_t growth = g.floor[CP_GROWTH_SEGS - 1] - g.base;
    uint64_t t_start = s->b[cp_gwin_used_from(s, g.start, g.end)].ts0;
    uint64_t t_end = g.teardown ? s->tail_ts : p->t_last;
    double secs = t_end > t_start ? (double)(t_end - t_start) / 1e9 : 0;
    double rate = secs > 0 ? (double)growth / secs : 0;
    char b1[32], b2[32], b3[32], tb[32];
    if (gr_leak_fold(p, s, rep, &g, growth, t_end - t_start))
        return;
    cp_finding *f = cp_finding_new(rep, &cp_check_growth, p, "g");
    if (!f)
        return;
    f->sort = CP_SORT_BYTES;
    cp_advice_fix(f, p, CP_ADV_GROWTH);
    /* Sites: live bytes at the window's end minus at the growth's start
     * (the plateau's last bucket; without one, the end of the first eighth
     * that rose) and before the teardown's bucket when there is one; their
     * count is the allocations between the same two points, not the run's. */
    uint32_t sb = (uint32_t)((uint64_t)(g.first_rise + 1) * (g.end + 1) / CP_GROWTH_SEGS);
    sb = g.start ? g.start - 1 : sb ? sb - 1 : 0;
    uint32_t eb = g.teardown && g.end == s->tail_idx && g.end > sb ? g.end - 1 : g.end;
    /* Where a framework recorded which lines hold its pool's memory, those
     * lines are the sites, and its segments' sites (where the pool was
     * refilled) are left out. */
    cp_gattr_out ga;
    cp_gattr_sites(s->attr, f, p, sb, eb, s->width_log,
                   g.teardown ? s->b[cp_gwin_used_at(s, eb)].last : 0, s->ts_alloc, &ga);
    unsigned drop = ga.sites ? gr_attr_fws(ga.fw) : 0;
    size_t it = 0;
    cp_growth_site *gs;
    int backward = 0;
    gr_hist_fill(s);
    while ((gs = cp_map_next(&s->sites, &it, NULL))) {
        const cp_growth_hist *h = cp_gwin_hist(s, gs);
        if (h->at[eb] > h->at[sb] && !(drop & lo_alloc_fw(p, gs->stack))) {
            uint64_t n = h->n_at[eb] - h->n_at[sb];
            cp_finding_site(f, p, gs->stack, n, h->at[eb] - h->at[sb], 0,
                            cp_bw_note(p, gs->stack));
            f->count += n;
            backward |= cp_bw_kind(p, gs->stack);
        }
    }
    f->bytes = growth;
    f->t_from = t_start;
    f->t_to = t_end;
    cp_finding_retitle(f, "device memory held grew by %s while the program kept working, "
                       "%s (%s/s over %s)", cp_fmt_bytes(growth, b1, sizeof b1),
                       g.half    ? "after its warm-up (the first half of the work), to the end"
                       : g.start ? "after its warm-up plateau, to the end"
                                 : "with no plateau",
                       cp_fmt_bytes(cp_rate_u64(rate, 1.0), b2, sizeof b2),
                       cp_fmt_ns(t_end - t_start, tb, sizeof tb));
    int fwk = cp_advice_fw(p);
    if (g.half)
        cp_finding_line(f, "Lowest memory held in each eighth of the second half of the work "
                        "(kernel launches; the first half was its warm-up): from %s to %s, "
                        "rising to the end; the sites below are where the memory added since "
                        "was allocated and stayed.",
                        cp_fmt_bytes(g.floor[0], b1, sizeof b1),
                        cp_fmt_bytes(g.floor[CP_GROWTH_SEGS - 1], b3, sizeof b3));
    else if (g.start)
        cp_finding_line(f, "After the warm-up, memory held stayed at %s for %s, then rose "
                        "again %s into the run and did not stop: lowest in the last eighth of "
                        "the work (kernel launches) %s; the sites below are where the memory "
                        "added since was allocated and stayed.",
                        cp_fmt_bytes(g.base, b1, sizeof b1),
                        cp_fmt_ns(t_start > g.t_plateau ? t_start - g.t_plateau : 0, tb, sizeof tb),
                        cp_fmt_ns(t_start - s->b[0].ts0, b2, sizeof b2),
                        cp_fmt_bytes(g.floor[CP_GROWTH_SEGS - 1], b3, sizeof b3));
    else
        cp_finding_line(f, "Lowest memory held in each eighth of the work (kernel launches): "
                        "from %s to %s, rising to the end; the sites below are where the "
                        "added memory was allocated and stayed.",
                        cp_fmt_bytes(g.floor[0], b1, sizeof b1),
                        cp_fmt_bytes(g.floor[CP_GROWTH_SEGS - 1], b3, sizeof b3));
    if (ga.sites)
        gr_attr_lines(f, p, &ga, growth);
    else if (fwk == CP_FWK_TORCH && cp_attrib_torch_async(p))
        /* Stream-ordered: each tensor is a cuMemAllocAsync of its own. */
        cp_finding_line(f, "Under backend:cudaMallocAsync every PyTorch tensor is a driver "
                        "allocation of its own: the sites are the lines that allocated the "
                        "memory still held.");
    else if (fwk != CP_FWK_CUDA)
        /* The driver sees a caching allocator's segments, not its tensors:
         * a segment is taken by whichever request found the cache empty,
         * which on the H200 (accuracy.md) was a line next to the one that
         * keeps the references, in the same loop. */
        cp_finding_line(f, "%s's allocator takes memory from the driver where its cache runs "
                        "out: the sites are where that happened, often a line next to the "
                        "one that keeps the references, in the same loop.%s",
                        cp_advice_fw_name(fwk), gr_attr_advice(p, fwk, &ga));
    cp_jb_ks(&f->details, "sites_from", ga.sites ? "attribution" : "driver");
    if (backward)
        /* The autograd engine's threads run no Python: such a site is the
         * line that called backward() (cp_backward.h), when it is known. */
        cp_finding_line(f, "Some of it was allocated in the backward pass, on PyTorch's "
                        "autograd threads, which run no Python: %s; the tensors that stay are "
                        "made in the forward pass of that step (a list of outputs, losses or "
                        "activations kept across steps).", backward & CP_BW_NAMED
                        ? "their sites are the line that called backward()"
                        : "the line that called backward() was not recorded (the framework "
                          "companion was off, CUPROBE_FRAMEWORK=0)");
    uint64_t steps = gr_steps(s, sb, !g.start);
    if (steps)
        cp_finding_line(f, "About %s per step (%llu steps, counted from the read-back "
                        "repeated every step).", cp_fmt_bytes(growth / steps, b1, sizeof b1),
                        (unsigned long long)steps);
    int card = gr_card(p);
    if (card >= 0 && rate > 0) {
        uint64_t tot = p->dev[card].total_mem, peak = p->mem[card].peak_total;
        uint64_t left = tot > peak ? tot - peak : 0;
        double to_full = (double)left / rate;
        cp_finding_line(f, "Cost: at this rate GPU %d (%s, %s free at the peak) would be full "
                        "%s after the point this run reached.", card,
                        cp_fmt_bytes(tot, b1, sizeof b1), cp_fmt_bytes(left, b2, sizeof b2),
                        cp_fmt_ns(cp_rate_u64(to_full * 1e9, 1.0), tb, sizeof tb));
        cp_jb_kd(&f->details, "seconds_to_full", to_full);
        cp_jb_ki(&f->details, "card", card);
    }
    if (s->torch_seen)
        gr_torch_lines(f, s, &g, growth, ga.keeps);
    cp_jb_ku(&f->details, "growth_bytes", growth);
    cp_jb_ku(&f->details, "start_ns", t_start);    /* trace clock (CLOCK_MONOTONIC) */
    cp_jb_ku(&f->details, "plateau_bytes", g.start ? g.base : 0);
    cp_jb_kd(&f->details, "rate_bytes_per_s", rate);
    cp_jb_kd(&f->details, "duration_s", secs);
    cp_jb_ku(&f->details, "steps", steps);
    cp_jb_ku(&f->details, "bytes_per_step", steps ? growth / steps : 0);
    cp_jb_ku(&f->details, "launches_in_window", (uint64_t)(g.end + 1) << s->width_log);
    cp_jb_key(&f->details, "floor_bytes");
    cp_jb_open(&f->details, '[');
    for (int i = 0; i < CP_GROWTH_SEGS; i++) {
        cp_jb_elem(&f->details);
        cp_jb_u64(&f->details, g.floor[i]);
    }
    cp_jb_close(&f->details, ']');
}

const cp_check cp_check_growth = {
    .id = "memory-growth",
    .sev = CP_SEV_WARNING,
    .name = "memory keeps growing",
    .explain = "The device memory this process holds rose steadily while it kept launching "
               "kernels, and had not levelled off when the run ended. A training or serving "
               "loop reaches a plateau after its first steps (a caching allocator takes its "
               "segments then and reuses them); steady growth means something allocated "
               "every iteration is kept: a list of tensors that still reference the graph "
               "(losses.append(loss) instead of loss.item()), a cache keyed by step, or "
               "buffers allocated per request and never freed. It ends in an out-of-memory "
               "error when the run is long enough.",
    .fix = "Look at the sites below: keep only what each step needs, free per-iteration "
           "buffers, and check that no reference outlives the step.",
    .types = CP_TYPE_BIT(CP_REC_ALLOC) | CP_TYPE_BIT(CP_REC_FREE) |
             CP_TYPE_BIT(CP_REC_FRAMEWORK) | CP_TYPE_BIT(CP_REC_COPY) |
             CP_TYPE_BIT(CP_REC_SYNC) | CP_TYPE_BIT(CP_REC_LAUNCH_COUNT),
    .pre_types = CP_TYPE_BIT(CP_REC_FREE),
    CP_CHECK_STATE(cp_growth, gr_maps),
    .done = gr_done,
    .rec = cp_check_growth_rec,
    .finish = gr_finish,
};
