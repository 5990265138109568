/*
 * cp_series.c - the bucketed memory and copy timeline of one process (see
 * cp_series.h).  Every record costs one comparison unless it opens a new
 * bucket; memory records add a few additions and, when they set a bucket's
 * maximum, a copy of the few largest live allocations.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_series.h"
#include "cp_model.h"
#include "cp_fw.h"

_Static_assert(CP_MAX_DEV == 64, "cp_series.h sizes its device arrays for 64");

/* The first bucket width: fine enough for a run of a few milliseconds. */
#define CP_SER_W0 1000ull
/* The record types cp_series_feed() reads in a lean series (all below 64). */
#define CP_SER_TYPES_LEAN \
    (1ull << CP_REC_ALLOC | 1ull << CP_REC_CTX | 1ull << CP_REC_OOM | 1ull << CP_REC_FRAMEWORK)

cp_series *cp_series_new(void)
{
    cp_series *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cur = -1;
    s->width = CP_SER_W0;
    s->types = CP_SER_TYPES_LEAN | 1ull << CP_REC_FREE | 1ull << CP_REC_COPY;
    cp_map_init(&s->lib_stack, sizeof(uint8_t));
    return s;
}

void cp_series_free(cp_series *s)
{
    if (!s)
        return;
    for (int d = 0; d < CP_MAX_DEV; d++)
        free(s->dev[d]);
    cp_map_free(&s->lib_stack);
    free(s->b);
    free(s->now);
    free(s);
}

int cp_series_start(cp_series *s)
{
    if (!s->b)
        s->b = calloc(CP_SER_N, sizeof *s->b);
    if (!s->now)
        s->now = calloc(64, sizeof *s->now);
    return s->b && s->now ? 0 : -ENOMEM;
}

int cp_series_buckets(cp_series *s, size_t n)
{
    free(s->now);
    s->now = NULL;
    free(s->b);
    s->b = calloc(n ? n : 1, sizeof *s->b);
    return s->b ? 0 : -ENOMEM;
}

void cp_series_freeze(cp_series *s)
{
    if (!s || !s->now)
        return;
    free(s->now);
    s->now = NULL;
    cp_map_free(&s->lib_stack);
    size_t n = s->cur >= 0 ? (size_t)s->cur + 1 : 1;
    /* Shrinking never fails to keep what was there: on a NULL the larger
     * block stays. */
    cp_ser_bucket *b = realloc(s->b, n * sizeof *b);
    if (b)
        s->b = b;
    for (int d = 0; d < CP_MAX_DEV; d++) {
        cp_ser_dev *v = s->dev[d] ? realloc(s->dev[d], n * sizeof *v) : NULL;
        if (v)
            s->dev[d] = v;
    }
}

const char *cp_holder_name(int h)
{
    static const char *const n[CP_HD_N] = {
        "framework tensors", "framework cache", "CUDA libraries", "pools and VMM",
        "rest of the process", "other processes",
    };
    return h >= 0 && h < CP_HD_N ? n[h] : "?";
}

const char *cp_copy_class_name(int c)
{
    static const char *const n[CP_CC_N] = { "pinned", "pageable", "peer" };
    return c >= 0 && c < CP_CC_N ? n[c] : "?";
}

/* --- holders and the largest live allocations ---------------------------------------- */

static int cp_ser_is_lib(cp_series *s, cp_proc *p, uint64_t stack)
{
    if (!stack)
        return 0;
    uint8_t *v = cp_map_get(&s->lib_stack, stack);
    if (v)
        return *v == 1;
    /* Allocations from inside a CUDA library count as "CUDA libraries". */
    int lib = cp_stacks_has_lib(&p->stacks, stack, CP_LIB_HOLDS);
    v = cp_map_put(&s->lib_stack, stack, NULL);
    if (v)
        *v = lib ? 1 : 2;
    return lib;
}

static void cp_top_insert(cp_ser_now *n, uint64_t ptr, uint64_t size, uint64_t stack,
                          uint64_t ts)
{
    if (n->n_top == CP_SER_TOP && size <= n->top[CP_SER_TOP - 1].size)
        return;
    int i = n->n_top < CP_SER_TOP ? n->n_top++ : CP_SER_TOP - 1;
    for (; i > 0 && n->top[i - 1].size < size; i--) {
        n->top[i] = n->top[i - 1];
        n->top_ptr[i] = n->top_ptr[i - 1];
    }
    n->top[i] = (cp_ser_alloc){ size, stack, ts };
    n->top_ptr[i] = ptr;
}

static void cp_top_remove(cp_ser_now *n, uint64_t ptr)
{
    for (int i = 0; i < n->n_top; i++) {
        if (n->top_ptr[i] != ptr)
            continue;
        for (int j = i; j + 1 < n->n_top; j++) {
            n->top[j] = n->top[j + 1];
            n->top_ptr[j] = n->top_ptr[j + 1];
        }
        n->n_top--;
        /* Something smaller, not in the list, may now belong in it. */
        n->top_dirty = 1;
        return;
    }
}

/* Rebuild the largest-live lists of the dirty devices from the live maps.
 * Only when at least as many memory events passed since the last rebuild
 * as there are live allocations, so the cost stays O(1) per event. */
static void cp_top_rescan(cp_series *s, cp_proc *p)
{
    if (s->since_rescan < p->live_dev.n + p->live_vmm.n)
        return;
    s->since_rescan = 0;
    int any = 0;
    for (int d = 0; d < CP_MAX_DEV; d++)
        if (s->now[d].top_dirty) {
            s->now[d].n_top = 0;
            any = 1;
        }
    if (!any)
        return;
    const cp_lives *maps[2] = { &p->live_dev, &p->live_vmm };
    for (int i = 0; i < 2; i++) {
        size_t it = 0;
        const cp_live *l;
        while ((l = cp_lives_next(maps[i], &it))) {
            if (l->dev < 0 || l->dev >= CP_MAX_DEV || cp_hold_of_kind(l->kind) < 0)
                continue;
            cp_ser_now *n = &s->now[l->dev];
            if (n->top_dirty)
                cp_top_insert(n, l->ptr, l->size, l->stack, l->ts);
        }
    }
    for (int d = 0; d < CP_MAX_DEV; d++)
        s->now[d].top_dirty = 0;
}

static uint64_t cp_min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Split what p holds on d now among the holders. */
static void cp_ser_split(const cp_series *s, const cp_proc *p, int d, uint64_t *hold)
{
    const cp_devmem *m = &p->mem[d];
    const cp_ser_now *n = &s->now[d];
    uint64_t held = m->held_total, fa = 0, fc = 0;
    if (n->fw_seen) {
        fa = cp_min64(n->fw_alloc, held);
        uint64_t cache = n->fw_res > n->fw_alloc ? n->fw_res - n->fw_alloc : 0;
        fc = cp_min64(cache, held - fa);
    }
    uint64_t rest = held - fa - fc;
    uint64_t libs = cp_min64(n->lib_held, rest);
    rest -= libs;
    /* A framework with expandable segments takes its memory through VMM:
     * that part is already counted as the framework's. */
    uint64_t vmm = m->held[CP_HOLD_VMM];
    if (n->fw_seen && vmm > m->held[CP_HOLD_DEVICE])
        vmm -= cp_min64(fa + fc, vmm);
    uint64_t pv = cp_min64(m->held[CP_HOLD_POOL] + vmm, rest);
    rest -= pv;
    hold[CP_HD_FW_TENSORS] = fa;
    hold[CP_HD_FW_CACHE] = fc;
    hold[CP_HD_LIBS] = libs;
    hold[CP_HD_POOL_VMM] = pv;
    hold[CP_HD_OTHER] = rest;
    hold[CP_HD_OTHER_PROCS] = n->other_procs;
}

/* The bucket of device d being filled opens with the state it inherits. */
static void cp_ser_open(cp_series *s, const cp_proc *p, int d, cp_ser_dev *b, uint64_t ts)
{
    const cp_ser_now *n = &s->now[d];
    memset(b, 0, sizeof *b);
    b->used = 1;
    b->max_held = b->min_held = p->mem[d].held_total;
    b->max_ts = ts;
    cp_ser_split(s, p, d, b->hold);
    b->n_top = (uint8_t)n->n_top;
    memcpy(b->top, n->top, sizeof b->top);
    b->fw_seen = (uint8_t)n->fw_seen;
    b->fw_alloc = n->fw_alloc;
    b->fw_res = n->fw_res;
}

static int cp_ser_dev_start(cp_series *s, const cp_proc *p, int d, uint64_t ts)
{
    if (s->dev[d])
        return 0;
    s->dev[d] = calloc(CP_SER_N, sizeof *s->dev[d]);
    if (!s->dev[d])
        return -ENOMEM;
    /* Nothing was held here before: the buckets so far are empty ones. */
    (void)p;
    (void)ts;
    for (int i = 0; i <= s->cur; i++)
        s->dev[d][i].used = 1;
    if (d >= s->n_dev)
        s->n_dev = d + 1;
    return 0;
}

/* Device d's held total changed (or its split did): update the bucket. */
static void cp_ser_sample(cp_series *s, cp_proc *p, int d, uint64_t ts)
{
    if (d < 0 || d >= CP_MAX_DEV || s->cur < 0 || cp_ser_dev_start(s, p, d, ts) != 0)
        return;
    cp_ser_dev *b = &s->dev[d][s->cur];
    const cp_ser_now *n = &s->now[d];
    uint64_t held = p->mem[d].held_total;
    if (held < b->min_held)
        b->min_held = held;
    b->fw_seen = (uint8_t)n->fw_seen;
    b->fw_alloc = n->fw_alloc;
    b->fw_res = n->fw_res;
    if (held < b->max_held)
        return;
    b->max_held = held;
    b->max_ts = ts;
    if (s->lean)
        return;
    cp_ser_split(s, p, d, b->hold);
    if (n->top_dirty)
        cp_top_rescan(s, p);
    b->n_top = (uint8_t)n->n_top;
    memcpy(b->top, n->top, sizeof b->top);
}

/* --- time ------------------------------------------------------------------------------ */

static void cp_ser_merge_dev(cp_ser_dev *out, const cp_ser_dev *a, const cp_ser_dev *c)
{
    if (!c->used) {
        *out = *a;
        return;
    }
    cp_ser_dev m = c->max_held > a->max_held ? *c : *a;
    m.min_held = cp_min64(a->min_held, c->min_held);
    if (!c->fw_seen && a->fw_seen) {
        m.fw_seen = 1;
        m.fw_alloc = a->fw_alloc;
        m.fw_res = a->fw_res;
    } else {
        m.fw_seen = c->fw_seen;
        m.fw_alloc = c->fw_alloc;
        m.fw_res = c->fw_res;
    }
    m.oom = a->oom | c->oom;
    *out = m;
}

static void cp_ser_merge(cp_series *s)
{
    for (int i = 0; i < CP_SER_N / 2; i++) {
        cp_ser_bucket m = s->b[2 * i];
        const cp_ser_bucket *c = &s->b[2 * i + 1];
        for (int k = 0; k < CP_CC_N; k++) {
            m.copies[k] += c->copies[k];
            m.copy_bytes[k] += c->copy_bytes[k];
        }
        m.blocked_ns += c->blocked_ns;
        s->b[i] = m;
    }
    memset(&s->b[CP_SER_N / 2], 0, sizeof s->b[0] * (CP_SER_N / 2));
    for (int d = 0; d < s->n_dev; d++) {
        cp_ser_dev *v = s->dev[d];
        if (!v)
            continue;
        for (int i = 0; i < CP_SER_N / 2; i++) {
            cp_ser_dev m;
            cp_ser_merge_dev(&m, &v[2 * i], &v[2 * i + 1]);
            v[i] = m;
        }
        memset(&v[CP_SER_N / 2], 0, sizeof v[0] * (CP_SER_N / 2));
    }
    s->cur /= 2;
    s->width *= 2;
    s->span = s->width * (uint64_t)(s->cur + 1);
}

/* Make the bucket of time ts the current one. */
static void cp_ser_advance(cp_series *s, const cp_proc *p, uint64_t ts)
{
    /* Bounded: a bucket width near 2^56 would make width * CP_SER_N wrap
     * (and later width itself) and this loop spin forever on a trace whose
     * time jumps to near 2^64
     * (found by the report fuzzer); the last bucket then takes the rest. */
    while (s->width <= UINT64_MAX / (2 * CP_SER_N) && ts - s->t0 >= s->width * CP_SER_N)
        cp_ser_merge(s);
    uint64_t at = (ts - s->t0) / s->width;
    int idx = at >= CP_SER_N ? CP_SER_N - 1 : (int)at;
    while (s->cur < idx) {
        s->cur++;
        for (int d = 0; d < s->n_dev; d++)
            if (s->dev[d])
                cp_ser_open(s, p, d, &s->dev[d][s->cur], ts);
    }
    s->span = s->width * (uint64_t)(s->cur + 1);
}

/* A record at ts past the current bucket (s->span), or the first: start
 * the series, or move to ts's bucket.  width * (cur + 1) does not wrap:
 * width stays at most UINT64_MAX / CP_SER_N (cp_ser_advance()).
 * @return : ts, or t0 for a record before it (never: records are in
 * time order). */
static uint64_t cp_ser_move(cp_series *s, const cp_proc *p, uint64_t ts)
{
    if (s->cur < 0) {
        s->t0 = ts;
        s->cur = 0;
        s->span = s->width;
    }
    if (ts < s->t0)
        return s->t0;
    if (ts - s->t0 >= s->span)
        cp_ser_advance(s, p, ts);
    return ts;
}

void cp_series_restart(cp_series *s, cp_proc *p, uint64_t ts)
{
    memset(s->b, 0, CP_SER_N * sizeof *s->b);
    for (int d = 0; d < s->n_dev; d++)
        if (s->dev[d])
            memset(s->dev[d], 0, CP_SER_N * sizeof *s->dev[d]);
    s->n_oom = 0;
    s->n_oom_all = 0;
    s->cur = -1;
    s->width = CP_SER_W0;
    cp_ser_move(s, p, ts);
    s->t_end = ts;
    for (int d = 0; d < s->n_dev; d++)
        if (s->dev[d])
            cp_ser_open(s, p, d, &s->dev[d][0], ts);
}

void cp_series_reach(cp_series *s, cp_proc *p, uint64_t ts)
{
    if (s->cur < 0 || ts < s->t_end)
        return;
    if (ts - s->t0 >= s->span)
        cp_ser_move(s, p, ts);
    s->t_end = ts;
}

/* --- records ------------------------------------------------------------------------- */

void cp_series_lean(cp_series *s)
{
    /* The rest is work on every record for outputs that a text or JSON
     * report never shows. */
    s->lean = 1;
    s->types = CP_SER_TYPES_LEAN;
}

void cp_series_pre(cp_series *s, const cp_record *r, const cp_live *l)
{
    if (r->type != CP_REC_FREE || s->lean)
        return;
    if (!l || l->dev < 0 || l->dev >= CP_MAX_DEV || cp_hold_of_kind(l->kind) < 0)
        return;
    cp_ser_now *n = &s->now[l->dev];
    /* Set at its ALLOC, which passed the same tests (same device, kind). */
    if (l->lib)
        n->lib_held -= cp_min64(l->size, n->lib_held);
    cp_top_remove(n, r->u.free.ptr);
}

int cp_series_copy_class(const cp_record *r)
{
    uint64_t sc = r->u.copy.src_class, dc = r->u.copy.dst_class;
    if ((r->u.copy.flags & CP_CF_PEER) ||
        (sc == CP_MC_DEVICE && dc == CP_MC_DEVICE && r->u.copy.src_dev != r->u.copy.dst_dev &&
         r->u.copy.src_dev >= 0 && r->u.copy.dst_dev >= 0))
        return CP_CC_PEER;
    if (sc == CP_MC_PAGEABLE || dc == CP_MC_PAGEABLE)
        return CP_CC_PAGEABLE;
    if (sc == CP_MC_PINNED || dc == CP_MC_PINNED || sc == CP_MC_REGISTERED ||
        dc == CP_MC_REGISTERED)
        return CP_CC_PINNED;
    return -1;
}

int cp_series_copy_blocks(const cp_record *r)
{
    return !(r->u.copy.flags & CP_CF_ASYNC) || r->u.copy.src_class == CP_MC_PAGEABLE ||
           r->u.copy.dst_class == CP_MC_PAGEABLE;
}

static void cp_ser_copy(cp_series *s, const cp_record *r)
{
    int c = cp_series_copy_class(r);
    cp_ser_bucket *b = &s->b[s->cur];
    if (c >= 0) {
        b->copies[c]++;
        b->copy_bytes[c] += r->u.copy.bytes;
    }
    if (cp_series_copy_blocks(r))
        b->blocked_ns += r->ev.dur_ns;
}

static void cp_ser_on_oom(cp_series *s, cp_proc *p, const cp_record *r)
{
    int d = (int)r->ev.dev;
    if (s->n_oom < CP_SER_OOMS)
        s->oom[s->n_oom++] = (cp_ser_oom){ r->ts, r->u.oom.requested, d };
    s->n_oom_all++;
    if (d < 0 || d >= CP_MAX_DEV)
        return;
    uint64_t others = 0;
    for (uint64_t i = 0; i < r->u.oom.n_procs; i++)
        if (r->u.oom.procs[i].pid != p->pid)
            others += r->u.oom.procs[i].used_bytes;
    s->now[d].other_procs = others;
    cp_ser_sample(s, p, d, r->ts);
    if (s->dev[d])
        s->dev[d][s->cur].oom = 1;
}

static void cp_ser_fw_dev(cp_series *s, cp_proc *p, const cp_torch_dev *td, uint64_t ts)
{
    if (td->device < 0 || td->device >= CP_MAX_DEV)
        return;
    cp_ser_now *n = &s->now[td->device];
    n->fw_seen = 1;
    n->fw_alloc = td->allocated;
    n->fw_res = td->reserved;
    cp_ser_sample(s, p, td->device, ts);
}

static void cp_ser_framework(cp_series *s, cp_proc *p, uint64_t ts)
{
    const char *k = p->fw_ready_kind;
    if (!k || strncmp(k, "torch.", 6) != 0)
        return;
    if (strcmp(k, "torch.oom") == 0) {
        cp_torch_oom o;
        if (cp_torch_oom_parse(p->fw_ready_json, p->fw_ready_len, &o) == 0)
            cp_ser_fw_dev(s, p, &o.d, ts);
        return;
    }
    cp_jv v = { p->fw_ready_json, p->fw_ready_len }, devs, d;
    size_t it = 0;
    if (cp_json_member(v, "devices", &devs))
        return;
    while (cp_json_next(devs, &it, &d) == 1) {
        cp_torch_dev td;
        if (cp_torch_dev_parse(d, &td) == 0)
            cp_ser_fw_dev(s, p, &td, ts);
    }
}

int cp_series_feed(cp_series *s, cp_proc *p, const cp_record *r, cp_live *made)
{
    uint64_t ts = r->ts;
    if (__builtin_expect(ts - s->t0 >= s->span, 0))
        ts = cp_ser_move(s, p, ts);
    s->t_end = ts;
    /* The types the series reads, a fourth of a run's records in a lean
     * one: one test for the rest instead of the switch's jump. */
    if (r->type >= 64 || !(s->types >> r->type & 1))
        return 0;
    switch (r->type) {
    case CP_REC_ALLOC: {
        if (r->ev.result != 0 || cp_hold_of_kind(r->u.alloc.kind) < 0)
            return 0;
        int d = (int)r->ev.dev;
        if (d < 0 || d >= CP_MAX_DEV)
            return 0;
        if (!s->lean) {
            cp_ser_now *n = &s->now[d];
            int lib = cp_ser_is_lib(s, p, r->ev.stack);
            if (made)
                made->lib = (uint8_t)lib;
            if (lib)
                n->lib_held += r->u.alloc.size;
            cp_top_insert(n, r->u.alloc.ptr, r->u.alloc.size, r->ev.stack, ts);
            s->since_rescan++;
        }
        cp_ser_sample(s, p, d, ts);
        return s->dev[d] ? 0 : -ENOMEM;
    }
    case CP_REC_FREE: {
        if (s->lean)
            return 0;
        s->since_rescan++;
        /* The model dropped the allocation: its device is gone with it, so
         * sample every device that has a timeline (usually one or two). */
        for (int d = 0; d < s->n_dev; d++)
            if (s->dev[d] && p->mem[d].held_total < s->dev[d][s->cur].min_held)
                s->dev[d][s->cur].min_held = p->mem[d].held_total;
        return 0;
    }
    case CP_REC_CTX:
        for (int d = 0; d < s->n_dev; d++)
            if (s->dev[d])
                cp_ser_sample(s, p, d, ts);
        return 0;
    case CP_REC_COPY:
        if (r->ev.result == 0 && !s->lean)
            cp_ser_copy(s, r);
        return 0;
    case CP_REC_OOM:
        cp_ser_on_oom(s, p, r);
        return 0;
    case CP_REC_FRAMEWORK:
        cp_ser_framework(s, p, ts);
        return 0;
    default:
        return 0;
    }
}

/* --- reading ------------------------------------------------------------------------- */

int cp_series_n(const cp_series *s)
{
    return s->cur + 1;
}

const cp_ser_dev *cp_series_dev(const cp_series *s, int d)
{
    return d >= 0 && d < CP_MAX_DEV ? s->dev[d] : NULL;
}

uint64_t cp_series_max_in(const cp_series *s, int d, double f0, double f1)
{
    const cp_ser_dev *v = cp_series_dev(s, d);
    if (!v || s->cur < 0)
        return 0;
    double span = (double)(s->t_end - s->t0);
    double w = (double)s->width;
    int a = (int)(f0 * span / w), e = (int)(f1 * span / w + 0.999999) - 1;
    if (e < a)
        e = a;
    if (a > s->cur)
        a = s->cur;
    if (e > s->cur)
        e = s->cur;
    uint64_t m = 0;
    for (int i = a; i <= e; i++)
        if (v[i].used && v[i].max_held > m)
            m = v[i].max_held;
    return m;
}
