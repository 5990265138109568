/*
 * check_oom.c - oom: every failed allocation, followed through what the
 * program did next (see check_oom_verdict.h for episodes; the post-mortem text is
 * in check_oom_verdict.c).
 *
 * The first OOM_FULL unrecovered episodes of a process get a full
 * post-mortem each; later ones are counted by call site in one finding.
 * Episodes that recovered (the retry after releasing cache succeeded) are
 * summed into one info finding: the program never saw them, the
 * fragmentation check explains their cost.
 *
 * A framework's out-of-memory error closes its episode: PyTorch frees its
 * cache and retries once inside the same request, then raises and records
 * torch.oom.  That record belongs to the failed allocation just before it
 * (same device), and the next failure is a new episode with its own
 * verdict, even when no allocation succeeded in between.  The user saw one
 * OOM per episode, however many attempts it took.
 *
 * XLA's out-of-memory error (the companion's jax.oom record) closes its
 * episode the same way.  Inside a preallocated pool it is the only sign of
 * the OOM: XLA took its memory at start-up and never asks the driver again,
 * so the episode starts at the record (check_oom_jax.h).
 */
#include <stdlib.h>
#include <string.h>

#include "check_oom_verdict.h"

extern const cp_check cp_check_oom;   /* defined at the end of this file */

#define OOM_FULL 8

typedef struct cp_oomst {
    cp_oom_ep cur;
    cp_oom_ep *full;
    size_t n_full;
    cp_map more;                /* unrecovered beyond OOM_FULL: stack -> agg */
    cp_map recovered;           /* stack -> agg (bytes = request, ns = released) */
    uint64_t rec_released;
} cp_oomst;

static const cp_state_map oom_maps[] = {
    CP_STATE_MAP(cp_oomst, more, cp_agg_val),
    CP_STATE_MAP(cp_oomst, recovered, cp_agg_val),
};

static void oom_top_insert(cp_oom_alloc *arr, int *n, int cap, cp_oom_alloc a)
{
    int at;
    if (*n < cap)
        at = (*n)++;
    else if (a.size > arr[cap - 1].size)
        at = cap - 1;
    else
        return;
    arr[at] = a;
    for (int i = at; i > 0 && arr[i].size > arr[i - 1].size; i--) {
        cp_oom_alloc t = arr[i];
        arr[i] = arr[i - 1];
        arr[i - 1] = t;
    }
}

/* What was live on the device at the failure: the largest allocations and
 * the sites holding the most. */
static void oom_snapshot(cp_proc *p, cp_oom_ep *e)
{
    if (e->dev >= 0 && e->dev < CP_MAX_DEV) {
        memcpy(e->held, p->mem[e->dev].held, sizeof e->held);
        e->held_total = p->mem[e->dev].held_total;
    }
    cp_map by_site;
    cp_map_init(&by_site, sizeof(cp_agg_val));
    cp_lives *maps[2] = { &p->live_dev, &p->live_vmm };
    for (int i = 0; i < 2; i++) {
        size_t it = 0;
        cp_live *l;
        while ((l = cp_lives_next(maps[i], &it))) {
            if (l->dev != e->dev || cp_hold_of_kind(l->kind) < 0)
                continue;
            oom_top_insert(e->top, &e->n_top, CP_OOM_TOP,
                           (cp_oom_alloc){ l->size, l->stack, l->kind });
            cp_agg_add(&by_site, l->stack, l->stack, l->size, 0, l->ts);
        }
    }
    size_t it = 0;
    cp_agg_val *v;
    while ((v = cp_map_next(&by_site, &it, NULL)))
        oom_top_insert(e->site, &e->n_site, 3, (cp_oom_alloc){ v->bytes, v->stack, 0 });
    /* Counts for the kept sites (a second pass keeps the insert simple). */
    for (int i = 0; i < e->n_site; i++) {
        cp_agg_val *sv = cp_map_get(&by_site, e->site[i].stack);
        e->site_count[i] = sv ? sv->count : 0;
    }
    cp_map_free(&by_site);
}

static void oom_close(cp_proc *p, cp_oomst *s)
{
    cp_oom_ep *e = &s->cur;
    if (!e->open)
        return;
    e->open = 0;
    if (e->recovered) {
        cp_agg_val *v = cp_agg_add(&s->recovered, e->stack, e->stack, e->request, 0, e->ts);
        (void)v;
        s->rec_released += e->released;
        return;
    }
    if (s->n_full < OOM_FULL) {
        cp_oom_ep *n = realloc(s->full, (s->n_full + 1) * sizeof *n);
        if (n) {
            s->full = n;
            s->full[s->n_full++] = *e;
            return;
        }
    }
    cp_agg_add(&s->more, e->stack, e->stack, e->request, 0, e->ts);
    (void)p;
}

static void oom_start(cp_proc *p, cp_oomst *s, int dev, uint64_t request, uint64_t kind,
                      uint64_t stack, uint64_t ts, uint64_t api)
{
    oom_close(p, s);
    cp_oom_ep *e = &s->cur;
    memset(e, 0, sizeof *e);
    e->open = 1;
    e->dev = dev;
    e->request = request;
    e->kind = kind;
    e->stack = stack;
    e->ts = ts;
    e->api = api;
    const char *n = p->dec ? cp_dec_api_name(p->dec, api) : NULL;
    e->api_name = n ? cp_sym_intern(n, strlen(n)) : NULL;
    e->failures = 1;
    oom_snapshot(p, e);
}

/* XLA raised RESOURCE_EXHAUSTED: the episode of a failed driver call on
 * that device just before (a pool that grows), else one of its own. */
static void oom_jax(cp_proc *p, cp_oomst *s)
{
    cp_jax_oom *j = malloc(sizeof *j);
    if (!j || cp_jax_oom_parse(p->fw_ready_json, p->fw_ready_len, j) != 0) {
        free(j);
        return;
    }
    int d = cp_jax_oom_device(j);
    int dev = d < 0 ? 0 : (int)(j->dev[d].hw >= 0 ? j->dev[d].hw : j->dev[d].id);
    cp_oom_ep *e = &s->cur;
    if (!e->open || e->dev != dev) {
        oom_start(p, s, dev, j->request, CP_MK_DEVICE, 0, p->t_last, 0);
        e->api_name = "XLA's allocator";
    }
    e->have_jax = 1;
    e->jax_dev = d;
    e->jax = *j;
    free(j);
    oom_close(p, s);
}

static void oom_framework(cp_proc *p, cp_oomst *s)
{
    if (p->fw_ready_kind && strcmp(p->fw_ready_kind, "jax.oom") == 0) {
        oom_jax(p, s);
        return;
    }
    if (!p->fw_ready_kind || strcmp(p->fw_ready_kind, "torch.oom") != 0)
        return;
    cp_torch_oom t;
    if (cp_torch_oom_parse(p->fw_ready_json, p->fw_ready_len, &t) != 0)
        return;
    cp_oom_ep *e = &s->cur;
    if (!e->open || e->dev != t.d.device) {
        /* PyTorch refused without a failed driver call (a memory fraction
         * limit): the episode starts here. */
        oom_start(p, s, t.d.device, t.request, CP_MK_DEVICE, 0, p->t_last, 0);
        e->api_name = "torch caching allocator";
    }
    e->have_torch = 1;
    e->torch = t;
    /* The program has seen the error: what it frees from now on is its
     * reaction, not the allocator's retry. */
    oom_close(p, s);
}

static __attribute__((noinline)) void oom_rec_full(cp_proc *p, void *st, const cp_record *r)
{
    cp_oomst *s = st;
    cp_oom_ep *e = &s->cur;
    switch (r->type) {
    case CP_REC_ALLOC: {
        int dev = cp_hold_of_kind(r->u.alloc.kind) >= 0 ? (int)r->ev.dev : -1;
        if (r->ev.result == CUDA_ERROR_OUT_OF_MEMORY) {
            if (e->open && e->dev == dev) {
                e->failures++;
                break;
            }
            oom_start(p, s, dev, r->u.alloc.size, r->u.alloc.kind, r->ev.stack, r->ts,
                      r->ev.api);
        } else if (r->ev.result == 0 && e->open && e->dev == dev) {
            e->recovered = 1;
            oom_close(p, s);
        }
        break;
    }
    case CP_REC_FREE: {         /* before the model: the size is still known */
        if (!e->open || r->ev.result != 0)
            break;
        const cp_live *l = cp_model_freeing(p, r);
        if (l && l->dev == e->dev && cp_hold_of_kind(l->kind) >= 0)
            e->released += l->size;
        break;
    }
    case CP_REC_OOM:
        if (!e->open || e->have_oom)
            break;
        e->have_oom = 1;
        e->free_b = r->u.oom.free;
        e->total_b = r->u.oom.total;
        e->n_procs = 0;
        e->n_listed = r->u.oom.n_procs;
        for (uint64_t i = 0; i < r->u.oom.n_procs; i++) {
            if (r->u.oom.procs[i].pid == p->pid)
                continue;
            e->others_used += r->u.oom.procs[i].used_bytes;
            if (e->n_procs < CP_OOM_PROCS) {
                e->pid[e->n_procs] = r->u.oom.procs[i].pid;
                e->used[e->n_procs] = r->u.oom.procs[i].used_bytes;
            }
            e->n_procs++;
        }
        break;
    case CP_REC_POOL:
        if (!e->open || r->u.pool.op != CP_POOL_ATTR_AT_FAILURE)
            break;
        e->have_pool = 1;
        if (r->u.pool.attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
            e->pool_reserved = r->u.pool.value;
        else if (r->u.pool.attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
            e->pool_used = r->u.pool.value;
        break;
    case CP_REC_FRAMEWORK:
        oom_framework(p, s);
        break;
    default:
        break;
    }
}

/* A FREE, or an ALLOC that did not fail, outside an episode (nearly every
 * record this check reads) changes nothing: without oom_rec_full()'s
 * frame, inlined into the checks' dispatch. */
__attribute__((always_inline)) inline void
cp_check_oom_rec(cp_proc *p, void *st, const cp_record *r)
{
    const cp_oomst *s = st;
    if (!s->cur.open &&
        (r->type == CP_REC_FREE || (r->type == CP_REC_ALLOC && r->ev.result == 0)))
        return;
    oom_rec_full(p, st, r);
}

static void oom_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_oomst *s = st;
    char b1[32], b2[32];
    oom_close(p, s);
    for (size_t i = 0; i < s->n_full; i++)
        cp_oom_postmortem(&cp_check_oom, p, &s->full[i], rep);
    cp_finding *f = cp_finding_of_map(rep, &cp_check_oom, p, &s->more,
                                      CP_SEV_OF_CHECK, CP_SORT_COUNT);
    if (f) {
        cp_finding_retitle(f, "%llu more out-of-memory failure%s (only the first %d get a "
                           "post-mortem)", (unsigned long long)f->count,
                           f->count == 1 ? "" : "s", OOM_FULL);
    }
    f = cp_finding_of_map(rep, &cp_check_oom, p, &s->recovered, CP_SEV_INFO, CP_SORT_COUNT);
    if (f) {
        cp_finding_retitle(f, "%llu allocation%s failed, then succeeded after the program "
                           "released %s of cached memory (%s requested)",
                           (unsigned long long)f->count, f->count == 1 ? "" : "s",
                           cp_fmt_bytes(s->rec_released, b1, sizeof b1),
                           cp_fmt_bytes(f->bytes, b2, sizeof b2));
        cp_finding_line(f, "The caller recovered (a caching allocator freeing its cache and "
                        "retrying); see the fragmentation check for what this costs.");
        cp_jb_ku(&f->details, "released_bytes", s->rec_released);
    }
}

static void oom_done(void *st)
{
    cp_oomst *s = st;
    free(s->full);
}

const cp_check cp_check_oom = {
    .id = "oom",
    .sev = CP_SEV_ERROR,
    .name = "out of memory",
    .explain = "An allocation failed because the device had no room for it. The "
               "post-mortem shows what held the memory at that moment: this process by kind "
               "(device, pool, VMM, managed), other processes, the largest live allocations "
               "and their sites, and what the program did next; the verdict says whether the "
               "card was really full (capacity), had the room but not in one piece or kept "
               "it in a cache (fragmentation), or was filled by another process.",
    .fix = "Follow the advice that comes with the verdict: reduce what is live (smaller "
           "batch, free references, activation checkpointing) for capacity; "
           "expandable_segments:True or max_split_size_mb for fragmentation; move to a free "
           "GPU or stop the other process when another process holds the memory.",
    .types = CP_TYPE_BIT(CP_REC_ALLOC) | CP_TYPE_BIT(CP_REC_FREE) | CP_TYPE_BIT(CP_REC_OOM) |
             CP_TYPE_BIT(CP_REC_POOL) | CP_TYPE_BIT(CP_REC_FRAMEWORK),
    .pre_types = CP_TYPE_BIT(CP_REC_FREE),
    CP_CHECK_STATE(cp_oomst, oom_maps),
    .rec = cp_check_oom_rec,
    .finish = oom_finish,
    .done = oom_done,
};
