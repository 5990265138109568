/*
 * check_growth_attrib.c - memory-growth's sites from attribution samples (see
 * check_growth_attrib.h).  A site's growth is its live bytes in the end
 * sample less those in the start sample; a site absent from a sample held
 * nothing then (or was among the smallest, beyond the record's cap).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_growth_attrib.h"

int cp_gattr_add(cp_gattr **gp, const cp_attrib_sample *a, int64_t w)
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
    s[(*n)++] = (cp_gattr_sample){ w, a->ts, rows, a->n, a->unattributed_bytes };
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

/* Framework fw's start and end samples (see cp_gattr_sites()).
 * @return : 1 with *a and *b set, else 0. */
static int ga_pick(const cp_gattr *g, int fw, uint32_t sb, uint32_t eb, unsigned width_log,
                   int teardown, const cp_gattr_sample **a, const cp_gattr_sample **b)
{
    size_t n = g->n[fw], end = n, start = n;
    const cp_gattr_sample *s = g->s[fw];
    if (n < 2)
        return 0;
    if (!teardown)
        end = n - 1;
    else
        for (size_t i = n; i-- > 0;)
            if (ga_bucket(&s[i], width_log) <= (int64_t)eb) {
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
    *a = &s[start];
    *b = &s[end];
    return 1;
}

void cp_gattr_sites(const cp_gattr *g, cp_finding *f, cp_proc *p, uint32_t sb, uint32_t eb,
                    unsigned width_log, int teardown, cp_gattr_out *out)
{
    memset(out, 0, sizeof *out);
    if (!g)
        return;
    for (int fw = 0; fw < CP_ATTR_FW_N; fw++) {
        const cp_gattr_sample *a, *b;
        if (!ga_pick(g, fw, sb, eb, width_log, teardown, &a, &b))
            continue;
        out->spanned |= 1u << fw;
        if (b->unattributed_bytes > a->unattributed_bytes)
            out->unattributed += b->unattributed_bytes - a->unattributed_bytes;
        uint64_t grew = 0;
        for (size_t i = 0; i < b->n; i++) {
            const cp_attrib_row *r = ga_find(a, b->rows[i].stack);
            uint64_t before = r ? r->bytes : 0;
            if (b->rows[i].bytes > before)
                grew += b->rows[i].bytes - before;
        }
        if (!grew)
            continue;
        for (size_t i = 0; i < b->n; i++) {
            const cp_attrib_row *e = &b->rows[i], *r = ga_find(a, e->stack);
            uint64_t before = r ? r->bytes : 0, n_before = r ? r->blocks : 0;
            if (e->bytes <= before || (e->bytes - before) * 64 < grew)
                continue;
            uint64_t n = e->blocks > n_before ? e->blocks - n_before : 0;
            cp_finding_site(f, p, e->stack, n, e->bytes - before, 0, NULL);
            f->count += n;
            out->sites++;
            out->bytes += e->bytes - before;
        }
        out->fw |= 1u << fw;
        if (!out->ts_from || a->ts < out->ts_from)
            out->ts_from = a->ts;
        out->ts_to = b->ts > out->ts_to ? b->ts : out->ts_to;
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
