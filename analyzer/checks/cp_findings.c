/*
 * cp_findings.c - findings and site aggregation (see cp_findings.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_findings.h"
#include "cp_grow.h"
#include "cp_sym.h"

/* --- aggregation ------------------------------------------------------------------ */

cp_agg_val *cp_agg_add(cp_map *m, uint64_t key, uint64_t stack, uint64_t bytes, uint64_t ns,
                       uint64_t ts)
{
    int created;
    cp_agg_val *v = cp_map_put(m, key, &created);
    if (!v)
        return NULL;
    if (created) {
        v->stack = stack;
        v->first_ts = ts;
    }
    v->count++;
    v->bytes += bytes;
    v->ns += ns;
    return v;
}

/* --- findings ------------------------------------------------------------------------ */

const char *cp_sev_name(int sev)
{
    return sev == CP_SEV_ERROR ? "error" : sev == CP_SEV_WARNING ? "warning" : "info";
}

static char *cp_vfmt(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        return NULL;
    return s;
}

cp_finding *cp_finding_new(cp_report *rep, const cp_check *c, cp_proc *p, const char *fmt, ...)
{
    if (rep->n == rep->cap) {
        size_t cap = rep->cap ? 2 * rep->cap : 16;
        cp_finding **nf = realloc(rep->f, cap * sizeof *nf);
        if (!nf)
            return NULL;
        rep->f = nf;
        rep->cap = cap;
    }
    cp_finding *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    f->title = cp_vfmt(fmt, ap);
    va_end(ap);
    f->check = c;
    f->sev = c->sev;
    f->proc = p;
    rep->f[rep->n++] = f;
    return f;
}

void cp_finding_retitle(cp_finding *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = cp_vfmt(fmt, ap);
    va_end(ap);
    if (s) {
        free(f->title);
        f->title = s;
    }
}

void cp_finding_line(cp_finding *f, const char *fmt, ...)
{
    char **nl = realloc(f->lines, (f->n_lines + 1) * sizeof *nl);
    if (!nl)
        return;
    f->lines = nl;
    va_list ap;
    va_start(ap, fmt);
    char *s = cp_vfmt(fmt, ap);
    va_end(ap);
    if (s)
        f->lines[f->n_lines++] = s;
}

void cp_finding_site(cp_finding *f, cp_proc *p, uint64_t stack, uint64_t count, uint64_t bytes,
                     uint64_t ns, const char *note)
{
    if (cp_grow((void **)&f->sites, &f->cap_sites, f->n_sites + 1, sizeof *f->sites, 8))
        return;
    /* A finding outlives the check that made it (cp_checks_finish() frees the
     * check's state before the report is rendered), so the note is interned
     * here rather than trusted to point at static or interned text. */
    if (note)
        note = cp_sym_intern(note, strlen(note));
    f->sites[f->n_sites++] = (cp_site){ .proc = p, .stack = stack, .count = count,
                                        .bytes = bytes, .ns = ns, .note = note };
}

void cp_finding_sites_from(cp_finding *f, cp_proc *p, const cp_map *m)
{
    size_t it = 0;
    cp_agg_val *v;
    while ((v = cp_map_next(m, &it, NULL))) {
        cp_finding_site(f, p, v->stack, v->count, v->bytes, v->ns, v->note);
        f->count += v->count;
        f->bytes += v->bytes;
        f->ns += v->ns;
    }
}

cp_finding *cp_finding_of_map(cp_report *rep, const cp_check *c, cp_proc *p, const cp_map *m,
                              int sev, int sort)
{
    if (!m->n)
        return NULL;
    cp_finding *f = cp_finding_new(rep, c, p, "%s", "");
    if (!f)
        return NULL;
    if (sev != CP_SEV_OF_CHECK)
        f->sev = sev;
    f->sort = sort;
    cp_finding_sites_from(f, p, m);
    return f;
}

static uint64_t cp_site_weight(const cp_site *s, int mode)
{
    return mode == CP_SORT_NS ? s->ns : mode == CP_SORT_BYTES ? s->bytes : s->count;
}

/* Heaviest first by the finding's sort (*(const int *)mode, enum cp_sort);
 * ties by label so the order never depends on hashing. */
static int cp_site_cmp(const void *a, const void *b, void *mode)
{
    const cp_site *x = a, *y = b;
    int m = *(const int *)mode;
    uint64_t wx = cp_site_weight(x, m), wy = cp_site_weight(y, m);
    if (wx != wy)
        return wx > wy ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    int c = strcmp(x->label, y->label);
    if (c)
        return c;
    return (x->note ? strcmp(x->note, y->note ? y->note : "") : (y->note ? -1 : 0));
}

static int cp_site_label_cmp(const void *a, const void *b)
{
    const cp_site *x = a, *y = b;
    int c = (x->proc->index > y->proc->index) - (x->proc->index < y->proc->index);
    if (c)
        return c;
    c = strcmp(x->label, y->label);
    if (c)
        return c;
    return strcmp(x->note ? x->note : "", y->note ? y->note : "");
}

void cp_finding_sort_sites(cp_finding *f)
{
    if (f->n_sites)
        qsort_r(f->sites, f->n_sites, sizeof *f->sites, cp_site_cmp, &f->sort);
}

static void cp_finding_prepare(cp_finding *f)
{
    for (size_t i = 0; i < f->n_sites; i++)
        f->sites[i].label = cp_site_label(&f->sites[i].proc->stacks, f->sites[i].stack);
    /* Several stacks can end at the same user line: one site each. */
    if (!f->n_sites)
        return;
    qsort(f->sites, f->n_sites, sizeof *f->sites, cp_site_label_cmp);
    size_t w = 0;
    for (size_t i = 0; i < f->n_sites; i++) {
        if (w && f->sites[w - 1].proc == f->sites[i].proc &&
            strcmp(f->sites[w - 1].label, f->sites[i].label) == 0 &&
            strcmp(f->sites[w - 1].note ? f->sites[w - 1].note : "",
                   f->sites[i].note ? f->sites[i].note : "") == 0) {
            f->sites[w - 1].count += f->sites[i].count;
            f->sites[w - 1].bytes += f->sites[i].bytes;
            f->sites[w - 1].ns += f->sites[i].ns;
            continue;
        }
        f->sites[w++] = f->sites[i];
    }
    f->n_sites = w;
    cp_finding_sort_sites(f);
}

/* Where check c stands in the report's order (rep->order), after every
 * listed check when it is not listed. */
static size_t cp_order_pos(const cp_report *rep, const cp_check *c)
{
    for (size_t i = 0; i < rep->n_order; i++)
        if (rep->order[i] == c)
            return i;
    return rep->n_order;
}

/* Top statements first, then errors, warnings, infos; within one
 * severity by check order, process, then weight. */
static int cp_finding_cmp(const void *a, const void *b, void *report)
{
    const cp_finding *x = *(cp_finding *const *)a, *y = *(cp_finding *const *)b;
    const cp_report *rep = report;
    if (x->top != y->top)
        return y->top - x->top;
    if (x->sev != y->sev)
        return y->sev - x->sev;
    size_t rx = cp_order_pos(rep, x->check), ry = cp_order_pos(rep, y->check);
    if (rx != ry)
        return rx < ry ? -1 : 1;
    int px = x->proc ? x->proc->index : -1, py = y->proc ? y->proc->index : -1;
    if (px != py)
        return px < py ? -1 : 1;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return strcmp(x->title ? x->title : "", y->title ? y->title : "");
}

void cp_report_prepare(cp_report *rep, const cp_check *const *order, size_t n_order)
{
    for (size_t i = 0; i < rep->n; i++)
        cp_finding_prepare(rep->f[i]);
    rep->order = order;
    rep->n_order = n_order;
    cp_report_sort(rep);
}

void cp_report_sort(cp_report *rep)
{
    /* qsort is not stable; cp_finding_cmp ends with the title, and findings
     * with equal titles are interchangeable. */
    if (rep->n)
        qsort_r(rep->f, rep->n, sizeof *rep->f, cp_finding_cmp, rep);
}

static void cp_finding_free(cp_finding *f)
{
    free(f->title);
    for (size_t j = 0; j < f->n_lines; j++)
        free(f->lines[j]);
    free(f->lines);
    cp_jb_free(&f->details);
    free(f->sites);
    free(f->more);
    free(f->more_num);
    free(f);
}

void cp_report_drop(cp_report *rep, size_t i)
{
    cp_finding_free(rep->f[i]);
    memmove(rep->f + i, rep->f + i + 1, (rep->n - i - 1) * sizeof *rep->f);
    rep->n--;
}

void cp_report_drop_marked(cp_report *rep, const unsigned char *gone)
{
    size_t w = 0;
    for (size_t i = 0; i < rep->n; i++) {
        if (gone[i])
            cp_finding_free(rep->f[i]);
        else
            rep->f[w++] = rep->f[i];
    }
    rep->n = w;
}

void cp_report_free(cp_report *rep)
{
    for (size_t i = 0; i < rep->n; i++)
        cp_finding_free(rep->f[i]);
    free(rep->f);
    rep->f = NULL;
    rep->n = rep->cap = 0;
    cp_run_ix_free(&rep->run);
}

const char *cp_finding_fix(const cp_finding *f)
{
    return f->fix ? f->fix : f->check->fix;
}

const char *cp_finding_why(const cp_finding *f)
{
    return f->why ? f->why : f->check->explain;
}
