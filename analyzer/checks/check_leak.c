/*
 * check_leak.c - leak: memory still allocated when its context was
 * destroyed or when the process exited, grouped by allocation site.
 *
 * Every live allocation is classified by who made it (check_leak_owner.h):
 *   - a caching allocator (PyTorch's c10/libtorch, JAX/XLA, CuPy): "held by
 *     allocator", not a leak: the cache keeps its segments until exit;
 *   - a CUDA library (NCCL, cuBLAS, cuDNN, ...): held by that library;
 *   - a framework's arrays the program still held (numba): held by it;
 *   - otherwise the program's own allocation: a leak.
 * Without a stack, PyTorch's own list of its segments decides, then (one
 * caching allocator loaded and no other framework that allocates from
 * Python) its segment sizes (multiples of 2 MiB); else it is held by other
 * code (info); a plain driver program's memory is a leak.
 *
 * A leak is a warning only when it cost something in this run (a share of
 * the card, a site leaking every iteration, memory held at an OOM), else
 * info: check_leak_cost.h has the rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_leak_owner.h"
#include "check_leak_cost.h"
#include "cp_attrib.h"
#include "cp_items.h"

extern const cp_check cp_check_leak;   /* defined at the end of this file */

typedef struct cp_lk_cls {
    int cls;                    /* enum CL_*, -1: the site does not decide */
    const char *who;
} cp_lk_cls;

typedef struct cp_lk {
    cp_map cls_cache;           /* stack -> cp_lk_cls (stacks with frames only) */
    cp_map at_ctx;              /* stack -> cp_agg_val (alive at context destruction) */
    cp_map cls[CL_N];           /* stack -> cp_agg_val (alive at exit) */
    cp_map work;                /* stack -> cp_leak_work: kernels launched between its allocations */
    const char *names[CL_N][4]; /* who holds each class's memory, distinct */
    int n_names[CL_N];
    int unnamed_other;          /* some CL_OTHER memory has no owner to name */
    cp_leak_oom oom[CP_MAX_DEV];     /* each device's last out-of-memory failure */
    cp_leak_cost ctx_cost;           /* what at_ctx's allocations held, by device */
    lo_state owner;             /* PyTorch's own list of its segments */
} cp_lk;

static const cp_state_map lk_maps[] = {
    CP_STATE_MAP(cp_lk, at_ctx, cp_agg_val),
    CP_STATE_MAP(cp_lk, cls_cache, cp_lk_cls),
    CP_STATE_MAP(cp_lk, work, cp_leak_work),
    CP_STATE_MAPS(cp_lk, cls, cp_agg_val, CL_N),
};

/* enum CL_* of allocation l at ptr; *who names the allocator, library or
 * framework that holds it (check_leak_owner.h).  What the call site says
 * depends on the stack only and is cached by stack. */
static int cp_classify(cp_proc *p, cp_lk *s, uint64_t ptr, const cp_live *l, const char **who)
{
    const cp_stack *st = cp_stacks_get(&p->stacks, l->stack);
    int framed = st && (st->n_native || st->n_py), created;
    cp_lk_cls *c = framed ? cp_map_put(&s->cls_cache, l->stack, &created) : NULL;
    int cls;
    if (c && !created) {
        cls = c->cls;
        *who = c->who;
    } else {
        cls = framed ? lo_by_stack(p, l->stack, who) : -1;
        if (c) {
            c->cls = cls;
            c->who = *who;
        }
    }
    if (cls >= 0)
        return cls;
    *who = NULL;
    if (!p->fw)
        return CL_LEAK;
    /* A framework process: its own code's allocations are leaks only when
     * the site is the user's (lo_by_stack() said so). */
    if (framed)
        return CL_OTHER;
    return lo_by_pointer(p, &s->owner, ptr, l, who);
}

/* A CTX record (the ALLOCs go to cp_leak_cost_alloc() from cp_check_leak_rec()). */
static __attribute__((noinline)) void lk_rec_ctx(cp_proc *p, cp_lk *s, const cp_record *r)
{
    uint64_t ctx;
    int dev;
    if (!cp_model_ctx_ending(p, r, &ctx, &dev))
        return;
    cp_lives *maps[2] = { &p->live_dev, &p->live_vmm };
    for (int i = 0; i < 2; i++) {
        size_t it = 0;
        cp_live *l;
        while ((l = cp_lives_next(maps[i], &it))) {
            uint64_t key = l->ptr;
            /* Memory a window started with is not its leak (cp_window.h). */
            if (l->ctx != ctx || l->ts < p->win_from)
                continue;
            const char *who;
            if (cp_classify(p, s, key, l, &who) != CL_LEAK)
                continue;
            cp_leak_cost_add(&s->ctx_cost, l, s->oom);
            cp_agg_val *v = cp_agg_add(&s->at_ctx, l->stack, l->stack, l->size, 0, l->ts);
            if (v && !v->note) {
                char buf[96];
                snprintf(buf, sizeof buf, "alive when the context of GPU %d was destroyed", dev);
                v->note = cp_sym_intern(buf, strlen(buf));
            }
        }
    }
}

/* ALLOC (nearly every record this check reads) straight to
 * cp_leak_cost_alloc(), without a frame of this check's own: inlined into the
 * checks' dispatch. */
__attribute__((always_inline)) inline void
cp_check_leak_rec(cp_proc *p, void *st, const cp_record *r)
{
    cp_lk *s = st;
    if (r->type == CP_REC_ALLOC)
        cp_leak_cost_alloc(&s->work, s->oom, r);
    else if (r->type == CP_REC_FRAMEWORK)
        lo_rec(p, &s->owner, r);
    else
        lk_rec_ctx(p, s, r);
}

typedef struct cp_leak_item {
    uint64_t ptr, size;
    int kind, dev;
} cp_leak_item;

static int cp_item_cmp(const void *a, const void *b)
{
    const cp_leak_item *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->ptr < y->ptr ? -1 : x->ptr > y->ptr;
}

#define CP_LEAK_LIST 20
#define CP_LEAK_ATTRIB 5       /* lines named per pool at exit */

static void lk_name(cp_lk *s, int c, const char *who)
{
    int i;
    if (!who) {
        s->unnamed_other |= c == CL_OTHER;
        return;
    }
    for (i = 0; i < s->n_names[c] && s->names[c][i] != who; i++)
        ;
    if (i == s->n_names[c] && i < 4)
        s->names[c][s->n_names[c]++] = who;
}

/* "A, B and C" of class c's names. */
static const char *lk_names(const cp_lk *s, int c, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n_names[c]; i++) {
        int w = snprintf(buf + o, cap - o, "%s%s", i == 0 ? ""
                         : i == s->n_names[c] - 1 ? " and " : ", ", s->names[c][i]);
        if (w < 0 || (size_t)w >= cap - o)
            break;
        o += (size_t)w;
    }
    return buf;
}

/* Sites name who holds them only where a class has several holders. */
static void lk_site_notes(cp_lk *s, int c)
{
    size_t it = 0;
    cp_agg_val *v;
    if (s->n_names[c] > 1)
        return;
    while ((v = cp_map_next(&s->cls[c], &it, NULL)))
        v->note = NULL;
}

static uint64_t lk_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Allocations made past the live bound (cp_model_max_live) were counted by
 * call site only and are in none of the lists: say so in the exit leak
 * finding f (one of their own when there is none), with what may still be
 * live of them and the sites that made the most. */
static void lk_untracked(cp_proc *p, cp_report *rep, cp_finding *f)
{
    if (!p->over_n)
        return;
    uint64_t freed = lk_min(p->over_freed, p->over_n), live = p->over_n - freed;
    uint64_t fbytes = lk_min(p->over_freed_bytes, p->over_bytes);
    uint64_t lbytes = p->over_bytes - fbytes;
    char b1[32], b2[32], b3[32];
    if (!f) {
        f = cp_finding_new(rep, &cp_check_leak, p, "%s in up to %llu allocation%s may be "
                           "live at exit, counted by call site only",
                           cp_fmt_bytes(lbytes, b1, sizeof b1), (unsigned long long)live,
                           live == 1 ? "" : "s");
        if (!f)
            return;
        f->sev = live ? CP_SEV_WARNING : CP_SEV_INFO;
        f->sort = CP_SORT_BYTES;
        f->count = live;
        f->bytes = lbytes;
        cp_jb_ks(&f->details, "when", "exit");
    }
    /* The three sites that made the most past the bound (ties: the lower
     * stack id, so the line is the same whatever the map's order). */
    uint64_t top[3] = { 0 }, top_b[3] = { 0 };
    size_t it = 0;
    uint64_t stack;
    const cp_over *o;
    while ((o = cp_map_next(&p->live_over, &it, &stack))) {
        for (int k = 0; k < 3; k++) {
            if (top[k] && (o->bytes < top_b[k] || (o->bytes == top_b[k] && stack > top[k])))
                continue;
            for (int j = 2; j > k; j--) {
                top[j] = top[j - 1];
                top_b[j] = top_b[j - 1];
            }
            top[k] = stack;
            top_b[k] = o->bytes;
            break;
        }
    }
    char sites[600] = "";
    size_t at = 0;
    for (int k = 0; k < 3 && top[k] && at < sizeof sites; k++)
        at += (size_t)snprintf(sites + at, sizeof sites - at, "%s%s (%s)", k ? "; " : "",
                               cp_site_label(&p->stacks, top[k]),
                               cp_fmt_bytes(top_b[k], b1, sizeof b1));
    cp_finding_line(f, "More than %llu allocations were live at once: the %llu made past "
                    "that bound (%s; --max-live, CUPROBE_MAX_LIVE) were counted by call "
                    "site only, %llu of them (%s) freed by exit, so up to %llu (%s) more "
                    "than listed may be live at exit. The most came from: %s.",
                    (unsigned long long)cp_model_max_live_get(), (unsigned long long)p->over_n,
                    cp_fmt_bytes(p->over_bytes, b1, sizeof b1), (unsigned long long)freed,
                    cp_fmt_bytes(fbytes, b2, sizeof b2), (unsigned long long)live,
                    cp_fmt_bytes(lbytes, b3, sizeof b3), sites);
    cp_jb_key(&f->details, "untracked");
    cp_jb_open(&f->details, '{');
    cp_jb_ku(&f->details, "bound", cp_model_max_live_get());
    cp_jb_ku(&f->details, "allocations", p->over_n);
    cp_jb_ku(&f->details, "bytes", p->over_bytes);
    cp_jb_ku(&f->details, "freed", freed);
    cp_jb_ku(&f->details, "freed_bytes", fbytes);
    cp_jb_close(&f->details, '}');
}

/* What a pool's attribution (cp_attrib.h) saw live in it at exit: the
 * lines that allocated it, largest first. */
static void lk_attrib_lines(cp_finding *f, cp_proc *p)
{
    static const char *const pool[CP_ATTR_FW_N] = { "PyTorch's pool", "CuPy's pool" };
    for (int fw = 0; fw < CP_ATTR_FW_N; fw++) {
        const cp_attrib_sample *a = cp_attrib_last(p, fw);
        if (!a || !a->at_exit || !a->n)
            continue;
        char line[1024], b1[32];
        size_t o = 0, shown = a->n < CP_LEAK_ATTRIB ? a->n : CP_LEAK_ATTRIB;
        uint64_t rest = a->other_bytes + a->unattributed_bytes;
        for (size_t i = shown; i < a->n; i++)
            rest += a->rows[i].bytes;
        for (size_t i = 0; i < shown && o < sizeof line; i++) {
            const cp_attrib_row *r = &a->rows[i];
            int w = snprintf(line + o, sizeof line - o, "%s%s at %s, %llu block%s",
                             i ? "; " : "", cp_fmt_bytes(r->bytes, b1, sizeof b1),
                             cp_site_label(&p->stacks, r->stack), (unsigned long long)r->blocks,
                             r->blocks == 1 ? "" : "s");
            o += w > 0 ? (size_t)w : 0;
        }
        cp_finding_line(f, "Live in %s at exit, by the line that allocated it (attribution): "
                        "%s%s%s.", pool[fw], line, rest ? "; elsewhere " : "",
                        rest ? cp_fmt_bytes(rest, b1, sizeof b1) : "");
    }
}

static void lk_exit_list(cp_proc *p, cp_lk *s, cp_report *rep)
{
    cp_leak_item top[CP_LEAK_LIST];
    size_t n_top = 0;
    cp_leak_cost cost = { { 0 }, { 0 } };
    cp_lives *maps[3] = { &p->live_dev, &p->live_vmm, &p->live_host };
    for (int i = 0; i < 3; i++) {
        size_t it = 0;
        cp_live *l;
        while ((l = cp_lives_next(maps[i], &it))) {
            uint64_t key = l->ptr;
            if (l->ts < p->win_from)
                continue;
            const char *who;
            int c = cp_classify(p, s, key, l, &who);
            if (c != CL_LEAK)
                lk_name(s, c, who);
            cp_agg_val *v = cp_agg_add(&s->cls[c], l->stack, l->stack, l->size, 0, l->ts);
            if (v && !v->note && c != CL_LEAK)
                v->note = who;
            if (c != CL_LEAK)
                continue;
            cp_leak_cost_add(&cost, l, s->oom);
            cp_leak_item it_ = { key, l->size, l->kind, l->dev };
            if (n_top < CP_LEAK_LIST) {
                top[n_top++] = it_;
                continue;
            }
            /* Replace the smallest kept one (ties: the higher address). */
            size_t lo = 0;
            for (size_t k = 1; k < n_top; k++)
                if (cp_item_cmp(&top[k], &top[lo]) > 0)
                    lo = k;
            if (cp_item_cmp(&it_, &top[lo]) < 0)
                top[lo] = it_;
        }
    }
    qsort(top, n_top, sizeof *top, cp_item_cmp);
    lk_site_notes(s, CL_ALLOC);
    lk_site_notes(s, CL_OTHER);
    char b1[32], who[256];
    cp_finding *f = cp_finding_of_map(rep, &cp_check_leak, p, &s->cls[CL_LEAK],
                                      CP_SEV_OF_CHECK, CP_SORT_BYTES);
    if (f) {
        f->tag = CP_LEAK_TAG_LOST;
        for (size_t i = 0; i < n_top; i++)
            cp_finding_line(f, CP_ITEM_LEAKED,
                            (unsigned long long)top[i].size,
                            (unsigned long long)top[i].ptr, cp_mem_kind_name(top[i].kind),
                            top[i].dev >= 0 ? ", GPU " : "", top[i].dev >= 0 ? top[i].dev : 0);
        if (f->count > n_top)
            cp_finding_line(f, CP_ITEM_MORE, (unsigned long long)(f->count - n_top));
        cp_finding_line(f, "LEAK SUMMARY: %llu bytes leaked in %llu allocations",
                        (unsigned long long)f->bytes, (unsigned long long)f->count);
        int costly = cp_leak_cost_judge(f, p, &cost, &s->cls[CL_LEAK], &s->work, s->oom, 1);
        cp_finding_retitle(f, "%s leaked in %llu allocation%s at exit%s",
                           cp_fmt_bytes(f->bytes, b1, sizeof b1),
                           (unsigned long long)f->count, f->count == 1 ? "" : "s",
                           costly ? "" : ": it cost nothing in this run");
        cp_jb_ks(&f->details, "when", "exit");
    }
    lk_untracked(p, rep, f);
    f = cp_finding_of_map(rep, &cp_check_leak, p, &s->cls[CL_ALLOC], CP_SEV_INFO, CP_SORT_BYTES);
    if (f) {
        cp_finding_retitle(f, "held by allocator (%s): %s in %llu segment%s at exit, "
                           "not a leak", s->n_names[CL_ALLOC] ? lk_names(s, CL_ALLOC, who,
                                                                         sizeof who)
                                                              : "caching allocator",
                           cp_fmt_bytes(f->bytes, b1, sizeof b1),
                           (unsigned long long)f->count, f->count == 1 ? "" : "s");
        cp_finding_line(f, "A caching allocator keeps the segments it took from the "
                        "driver until the process ends; this memory is its cache.");
        lk_attrib_lines(f, p);
        cp_jb_ks(&f->details, "when", "exit");
        cp_jb_ks(&f->details, "held_by", s->n_names[CL_ALLOC] ? who : "allocator");
    }
    f = cp_finding_of_map(rep, &cp_check_leak, p, &s->cls[CL_LIB], CP_SEV_INFO, CP_SORT_BYTES);
    if (f) {
        cp_finding_retitle(f, "held by CUDA libraries (%s...): %s in %llu allocation%s at "
                           "exit", s->n_names[CL_LIB] ? s->names[CL_LIB][0] : "?",
                           cp_fmt_bytes(f->bytes, b1, sizeof b1),
                           (unsigned long long)f->count, f->count == 1 ? "" : "s");
        cp_jb_ks(&f->details, "when", "exit");
        cp_jb_ks(&f->details, "held_by", "library");
    }
    f = cp_finding_of_map(rep, &cp_check_leak, p, &s->cls[CL_OTHER], CP_SEV_INFO, CP_SORT_BYTES);
    if (f) {
        if (s->n_names[CL_OTHER])
            cp_finding_retitle(f, "held at exit by %s%s, not by a caching allocator: %s in "
                               "%llu allocation%s", lk_names(s, CL_OTHER, who, sizeof who),
                               s->unnamed_other ? " and other code" : "",
                               cp_fmt_bytes(f->bytes, b1, sizeof b1),
                               (unsigned long long)f->count, f->count == 1 ? "" : "s");
        else
            cp_finding_retitle(f, "held at exit outside the caching allocator: %s in %llu "
                               "allocation%s", cp_fmt_bytes(f->bytes, b1, sizeof b1),
                               (unsigned long long)f->count, f->count == 1 ? "" : "s");
        cp_jb_ks(&f->details, "when", "exit");
        cp_jb_ks(&f->details, "held_by", "other");
        cp_jb_ks(&f->details, "owners", s->n_names[CL_OTHER] ? who : NULL);
    }
}

static void lk_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_lk *s = st;
    char b1[32];
    cp_finding *f = cp_finding_of_map(rep, &cp_check_leak, p, &s->at_ctx,
                                      CP_SEV_OF_CHECK, CP_SORT_BYTES);
    if (f) {
        f->tag = CP_LEAK_TAG_LOST;
        cp_finding_line(f, "LEAK SUMMARY: %llu bytes leaked in %llu allocations",
                        (unsigned long long)f->bytes, (unsigned long long)f->count);
        int costly = cp_leak_cost_judge(f, p, &s->ctx_cost, &s->at_ctx, &s->work, s->oom, 0);
        cp_finding_retitle(f, "%s in %llu allocation%s still allocated when their "
                           "context was destroyed%s",
                           cp_fmt_bytes(f->bytes, b1, sizeof b1),
                           (unsigned long long)f->count, f->count == 1 ? "" : "s",
                           costly ? "" : ": it cost nothing in this run");
        cp_jb_ks(&f->details, "when", "context destroyed");
    }
    /* After a crash or a cut trace, what was live is not a leak. */
    if (!p->complete || p->end_reason == CP_END_SIGNAL)
        return;
    lk_exit_list(p, s, rep);
}

static void lk_done(void *st)
{
    lo_free(&((cp_lk *)st)->owner);
}

const cp_check cp_check_leak = {
    .id = "leak",
    .sev = CP_SEV_WARNING,
    .name = "memory never freed",
    .explain = "Device or pinned host memory was still allocated when its context was "
               "destroyed or when the process exited, and no caching allocator or CUDA "
               "library owns it: the program lost track of it. Memory a caching allocator "
               "(PyTorch, JAX, CuPy) keeps at exit is its cache and is listed separately "
               "as held by allocator. A leak is a warning when it cost something in this "
               "run: at least 1% of a card (or 64 MiB), a call site that leaks every "
               "iteration (8 or more allocations left, kernels launched between them), or "
               "memory held when an allocation ran out of memory; otherwise the driver "
               "frees it at exit and it is info.",
    .fix = "Free every allocation on every path (cuMemFree/cudaFree, cuMemFreeHost, "
           "cuMemRelease for VMM handles), before destroying the context; in long-running "
           "programs release buffers when they are done, e.g. with an RAII owner or a "
           "cleanup ladder, and drop references (del tensor) in framework code.",
    .types = CP_TYPE_BIT(CP_REC_CTX) | CP_TYPE_BIT(CP_REC_ALLOC) | LO_TYPES,
    .pre_types = CP_TYPE_BIT(CP_REC_CTX),
    CP_CHECK_STATE(cp_lk, lk_maps),
    .rec = cp_check_leak_rec,
    .finish = lk_finish,
    .done = lk_done,
    .sites_first = 1,
};
