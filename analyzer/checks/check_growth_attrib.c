/*
 * check_growth_attrib.c - memory-growth's sites from attribution samples (see
 * check_growth_attrib.h).  A site's growth is its live bytes at the end
 * less those in the start sample; a site absent from a sample held nothing
 * then (or was among the smallest, beyond the record's cap).  The end is
 * the more of two samples: the exit's holds no step's temporaries, but a
 * program may free what grew before it exits (predictions gathered on the
 * GPU, then moved to the host), which the last sample of the growth still
 * shows.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check_growth_attrib.h"

int cp_gattr_add(cp_gattr **gp, const cp_attrib_sample *a, int64_t w, uint64_t held)
{
    if (a->fw < 0 || a->fw >= CP_ATTR_FW_N)
        return 0;
    if (!*gp && !(*gp = calloc(1, sizeof **gp)))
        return -ENOMEM;
    cp_gattr *g = *gp;
    cp_gattr_sample *s = g->s[a->fw];
    size_t *n = &g->n[a->fw];
    if (*n == CP_GATTR_SAMPLES) {
        /* Keep the even ones and the last. */
        size_t k = 0;
        for (size_t i = 0; i < *n; i++) {
            if (i % 2 == 0 || i == *n - 1)
                s[k++] = s[i];
            else
                free(s[i].rows);
        }
        *n = k;
    }
    cp_attrib_row *rows = malloc((a->n ? a->n : 1) * sizeof *rows);
    if (!rows)
        return -ENOMEM;
    if (a->n)
        memcpy(rows, a->rows, a->n * sizeof *rows);
    s[(*n)++] = (cp_gattr_sample){ w, a->ts, held, rows, a->n, a->unattributed_bytes };
    return 0;
}

static const cp_attrib_row *ga_find(const cp_gattr_sample *s, uint64_t stack)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->rows[i].stack == stack)
            return &s->rows[i];
    return NULL;
}

/* The bucket of sample s: -1 before the first allocation. */
static int64_t ga_bucket(const cp_gattr_sample *s, unsigned width_log)
{
    return s->w < 0 ? -1 : s->w >> width_log;
}

/* The samples of one framework that judge a window (see cp_gattr_sites()):
 * indexes into its samples, -1 for none. */
typedef struct ga_pick_out {
    ptrdiff_t a, b;             /* start; end (the exit's, or the window's last) */
    ptrdiff_t c;                /* the last taken by the growth's last memory event */
    ptrdiff_t m;                /* the last taken by the middle of the growth's work */
} ga_pick_out;

/* Framework fw's samples for the growth from bucket sb to bucket eb.
 * @return : 1 with *o set, else 0 (fewer than two samples span it). */
static int ga_pick(const cp_gattr *g, int fw, uint32_t sb, uint32_t eb, unsigned width_log,
                   uint64_t held_end, uint64_t t_grown, ga_pick_out *o)
{
    size_t n = g->n[fw], end = n, start = n;
    const cp_gattr_sample *s = g->s[fw];
    if (n < 2)
        return 0;
    if (!held_end)
        end = n - 1;
    else
        /* A sample taken while the process still held all but a sixteenth
         * of the growth's last level is part of it, even in the teardown's
         * bucket: the exit's sample of a pool that frees its segments only
         * as the interpreter ends, after a library's small buffer. */
        for (size_t i = n; i-- > 0;)
            if (s[i].held >= held_end - held_end / 16 ||
                ga_bucket(&s[i], width_log) <= (int64_t)eb) {
                end = i;
                break;
            }
    if (end == n || end == 0)
        return 0;
    for (size_t i = 0; i < end; i++)
        if (ga_bucket(&s[i], width_log) <= (int64_t)sb)
            start = i;
    if (start == n)
        start = 0;
    o->a = (ptrdiff_t)start;
    o->b = (ptrdiff_t)end;
    o->c = o->m = -1;
    int64_t mid = ((int64_t)sb + (int64_t)eb) / 2;
    for (size_t i = start + 1; i <= end; i++) {
        if (s[i].ts <= t_grown && ga_bucket(&s[i], width_log) <= (int64_t)eb)
            o->c = (ptrdiff_t)i;
        if (i < end && ga_bucket(&s[i], width_log) <= mid)
            o->m = (ptrdiff_t)i;
    }
    if (o->c == o->b)
        o->c = -1;
    return 1;
}

/* A site's live bytes and blocks in sample i (-1: none, 0 bytes). */
static cp_attrib_row ga_row(const cp_gattr_sample *s, ptrdiff_t i, uint64_t stack)
{
    const cp_attrib_row *r = i >= 0 ? ga_find(&s[i], stack) : NULL;
    return r ? *r : (cp_attrib_row){ stack, 0, 0 };
}

/* What site `stack` grew by, into *grow (bytes; blocks added, or those it
 * holds when it grew without more): from o->a to o->b, or to o->c when the
 * site held more there and rose to it through o->m (a step's temporaries
 * live in o->c do not).  @return : 1 when it still rose in the growth's
 * second half (o->m strictly between its start and end), else 0. */
static int ga_growth(const cp_gattr_sample *s, const ga_pick_out *o, uint64_t stack,
                     cp_attrib_row *grow)
{
    cp_attrib_row a = ga_row(s, o->a, stack), e = ga_row(s, o->b, stack);
    cp_attrib_row c = ga_row(s, o->c, stack), m = ga_row(s, o->m, stack);
    int mid = o->m >= 0 && m.bytes > a.bytes;
    if (mid && c.bytes > m.bytes && c.bytes > e.bytes)
        e = c;
    grow->stack = stack;
    grow->bytes = e.bytes > a.bytes ? e.bytes - a.bytes : 0;
    grow->blocks = e.blocks > a.blocks ? e.blocks - a.blocks : e.blocks;
    return mid && e.bytes > m.bytes;
}

/* Calls fn(s, o, stack, arg) for each site listed at either end of o, once. */
static void ga_each(const cp_gattr_sample *s, const ga_pick_out *o,
                    void (*fn)(const cp_gattr_sample *, const ga_pick_out *, uint64_t, void *),
                    void *arg)
{
    for (size_t i = 0; i < s[o->b].n; i++)
        fn(s, o, s[o->b].rows[i].stack, arg);
    if (o->c >= 0)
        for (size_t i = 0; i < s[o->c].n; i++)
            if (!ga_find(&s[o->b], s[o->c].rows[i].stack))
                fn(s, o, s[o->c].rows[i].stack, arg);
}

static void ga_sum(const cp_gattr_sample *s, const ga_pick_out *o, uint64_t stack, void *arg)
{
    cp_attrib_row g;
    (void)ga_growth(s, o, stack, &g);
    *(uint64_t *)arg += g.bytes;
}

typedef struct ga_add_ctx {
    cp_finding *f;
    cp_proc *p;
    uint64_t grew;
    cp_gattr_out *out;
} ga_add_ctx;

static void ga_add(const cp_gattr_sample *s, const ga_pick_out *o, uint64_t stack, void *arg)
{
    ga_add_ctx *x = arg;
    cp_attrib_row g;
    int rising = ga_growth(s, o, stack, &g);
    if (!g.bytes || g.bytes * 64 < x->grew)
        return;
    cp_finding_site(x->f, x->p, stack, g.blocks, g.bytes, 0, NULL);
    x->f->count += g.blocks;
    x->out->sites++;
    x->out->bytes += g.bytes;
    if (rising)
        x->out->keeps += g.bytes;
}

void cp_gattr_sites(const cp_gattr *g, cp_finding *f, cp_proc *p, uint32_t sb, uint32_t eb,
                    unsigned width_log, uint64_t held_end, uint64_t t_grown,
                    cp_gattr_out *out)
{
    memset(out, 0, sizeof *out);
    if (!g)
        return;
    for (int fw = 0; fw < CP_ATTR_FW_N; fw++) {
        const cp_gattr_sample *s = g->s[fw];
        ga_pick_out o;
        if (!ga_pick(g, fw, sb, eb, width_log, held_end, t_grown, &o))
            continue;
        out->spanned |= 1u << fw;
        if (s[o.b].unattributed_bytes > s[o.a].unattributed_bytes)
            out->unattributed += s[o.b].unattributed_bytes - s[o.a].unattributed_bytes;
        ga_add_ctx x = { f, p, 0, out };
        ga_each(s, &o, ga_sum, &x.grew);
        if (!x.grew)
            continue;
        ga_each(s, &o, ga_add, &x);
        out->fw |= 1u << fw;
        if (!out->ts_from || s[o.a].ts < out->ts_from)
            out->ts_from = s[o.a].ts;
        uint64_t to = o.c >= 0 && s[o.c].ts > s[o.b].ts ? s[o.c].ts : s[o.b].ts;
        out->ts_to = to > out->ts_to ? to : out->ts_to;
    }
}

void cp_gattr_remap(cp_gattr *g, const uint32_t *map, uint32_t n, unsigned width_log)
{
    if (!g)
        return;
    int64_t mask = ((int64_t)1 << width_log) - 1;
    for (int fw = 0; fw < CP_ATTR_FW_N; fw++)
        for (size_t i = 0; i < g->n[fw]; i++) {
            cp_gattr_sample *s = &g->s[fw][i];
            int64_t b = ga_bucket(s, width_log);
            if (b >= 0 && b < (int64_t)n)
                s->w = ((int64_t)map[b] << width_log) | (s->w & mask);
        }
}

void cp_gattr_free(cp_gattr *g)
{
    if (!g)
        return;
    for (int fw = 0; fw < CP_ATTR_FW_N; fw++)
        for (size_t i = 0; i < g->n[fw]; i++)
            free(g->s[fw][i].rows);
    free(g);
}
