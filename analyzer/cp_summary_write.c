/*
 * cp_summary_write.c - a summary of analyzed traces (cp_summary.h): per
 * process its model (the tables of cp_proc_fields.h), the call sites a
 * report can print (symbolized here, where the binaries are, with both
 * labels), its timeline, and its findings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cp_checks.h"
#include "cp_grow.h"
#include "cp_ledger.h"
#include "cp_outfile.h"
#include "cp_proc_fields.h"
#include "cp_series.h"
#include "cp_summary.h"

/* One struct x as a JSON array of the fields of a table. */
#define WR(K, ...) WR_##K(__VA_ARGS__)
#define WR_U(f) cp_jb_elem(b); cp_jb_u64(b, (uint64_t)x->f);
#define WR_I(f) cp_jb_elem(b); cp_jb_i64(b, (int64_t)x->f);
#define WR_S(f) cp_jb_elem(b); cp_jb_str(b, x->f);
#define WR_K(f) WR_S(f)
#define WR_H(f) cp_jb_elem(b); cp_sw_hex(b, x->f, sizeof x->f);
#define WR_UA(f, n) for (size_t k_ = 0; k_ < (n); k_++) { cp_jb_elem(b); cp_jb_u64(b, x->f[k_]); }

static void cp_sw_hex(cp_jb *b, const uint8_t *v, size_t n)
{
    char h[2 * 64 + 1];
    for (size_t i = 0; i < n && i < 64; i++)
        snprintf(h + 2 * i, 3, "%02x", v[i]);
    h[2 * (n < 64 ? n : 64)] = 0;
    cp_jb_str(b, h);
}

#define CP_SW_STRUCT(fn, T, TABLE) \
    static void fn(cp_jb *b, const T *x) \
    { \
        cp_jb_open(b, '['); \
        TABLE(WR) \
        cp_jb_close(b, ']'); \
    }
CP_SW_STRUCT(cp_sw_proc, cp_proc, CP_PROC_FIELDS)
CP_SW_STRUCT(cp_sw_devinfo, cp_devinfo, CP_DEVINFO_FIELDS)
CP_SW_STRUCT(cp_sw_devmem, cp_devmem, CP_DEVMEM_FIELDS)
CP_SW_STRUCT(cp_sw_last, cp_last_event, CP_LAST_FIELDS)
CP_SW_STRUCT(cp_sw_series, cp_series, CP_SERIES_FIELDS)
CP_SW_STRUCT(cp_sw_bucket, cp_ser_bucket, CP_SER_BUCKET_FIELDS)
CP_SW_STRUCT(cp_sw_oom, cp_ser_oom, CP_SER_OOM_FIELDS)
CP_SW_STRUCT(cp_sw_finding, cp_finding, CP_FINDING_FIELDS)

/* A device bucket: its fields, then its largest live allocations as
 * (size, stack, ts) triples. */
static void cp_sw_serdev(cp_jb *b, const cp_ser_dev *x)
{
    cp_jb_open(b, '[');
    CP_SER_DEV_FIELDS(WR)
    for (int t = 0; t < CP_SER_TOP; t++) {
        const cp_ser_alloc *a = &x->top[t];
        cp_jb_vals(b, "uuu", (uint64_t)a->size, (uint64_t)a->stack, (uint64_t)a->ts);
    }
    cp_jb_close(b, ']');
}

static void cp_sw_timeline(cp_jb *b, const cp_series *s)
{
    cp_jb_key(b, "series");
    if (!s) {
        cp_jb_raw(b, "null");
        return;
    }
    int n = cp_series_n(s);
    cp_jb_open(b, '{');
    cp_jb_key(b, "s");
    cp_sw_series(b, s);
    cp_jb_key(b, "b");
    cp_jb_open(b, '[');
    /* A bucket equal to the one before it (nothing happened) is a 0. */
    for (int i = 0; i < n; i++) {
        if (i && memcmp(&s->b[i], &s->b[i - 1], sizeof s->b[i]) == 0) {
            cp_jb_elem(b);
            cp_jb_raw(b, "0");
        } else {
            cp_sw_bucket(b, &s->b[i]);
        }
    }
    cp_jb_close(b, ']');
    cp_jb_key(b, "dev");
    cp_jb_open(b, '[');
    for (int d = 0; d < 64; d++) {
        if (!s->dev[d])
            continue;
        cp_jb_open(b, '[');
        cp_jb_elem(b);
        cp_jb_i64(b, d);
        for (int i = 0; i < n; i++) {
            if (i && memcmp(&s->dev[d][i], &s->dev[d][i - 1], sizeof s->dev[d][i]) == 0) {
                cp_jb_elem(b);
                cp_jb_raw(b, "0");
            } else {
                cp_sw_serdev(b, &s->dev[d][i]);
            }
        }
        cp_jb_close(b, ']');
    }
    cp_jb_close(b, ']');
    cp_jb_key(b, "oom");
    cp_jb_open(b, '[');
    for (int i = 0; i < s->n_oom && i < CP_SER_OOMS; i++)
        cp_sw_oom(b, &s->oom[i]);
    cp_jb_close(b, ']');
    cp_jb_close(b, '}');
}

/* --- call sites ------------------------------------------------------------------------- */

typedef struct cp_sw_ids {
    uint64_t *v;
    size_t n, cap;
} cp_sw_ids;

static int cp_sw_add(cp_sw_ids *ids, uint64_t id)
{
    if (!id)
        return 0;
    for (size_t i = 0; i < ids->n; i++)
        if (ids->v[i] == id)
            return 0;
    if (cp_grow((void **)&ids->v, &ids->cap, ids->n + 1, sizeof *ids->v, 64))
        return -1;
    ids->v[ids->n++] = id;
    return 0;
}

static int cp_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Every stack a report of this process can print: its findings' sites, the
 * places the run checks name (contexts, first allocations, first CUDA
 * call), the largest allocations of its timeline. */
static int cp_sw_stack_ids(const cp_part *pt, cp_sw_ids *ids)
{
    const cp_proc *p = pt->proc;
    int rc = cp_sw_add(ids, p->first_cuda_stack);
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        rc |= cp_sw_add(ids, p->mem[d].ctx_stack) | cp_sw_add(ids, p->mem[d].first_alloc_stack);
    for (size_t i = 0; i < pt->rep.n; i++)
        for (size_t j = 0; j < pt->rep.f[i]->n_sites; j++)
            rc |= cp_sw_add(ids, pt->rep.f[i]->sites[j].stack);
    const cp_series *s = p->series;
    for (int d = 0; s && d < 64; d++)
        for (int i = 0; s->dev[d] && i < cp_series_n(s); i++)
            for (int t = 0; t < s->dev[d][i].n_top && t < CP_SER_TOP; t++)
                rc |= cp_sw_add(ids, s->dev[d][i].top[t].stack);
    const cp_ledger *lg = p->ledger;
    for (size_t i = 0; lg && i < lg->n_site; i++)
        rc |= cp_sw_add(ids, lg->site[i].stack);
    for (int i = 0; lg && i < lg->n_oom; i++)
        for (int t = 0; t < lg->oom[i].n_top; t++)
            rc |= cp_sw_add(ids, lg->oom[i].top[t].stack);
    if (ids->n)
        qsort(ids->v, ids->n, sizeof *ids->v, cp_u64_cmp);
    return rc;
}

/* "mods": the modules the kept stacks use, renumbered from 1 in order of
 * first use; "py": their Python frames; "st": the stacks. */
static int cp_sw_sites(cp_jb *b, const cp_part *pt)
{
    cp_proc *p = pt->proc;
    cp_stacks *s = &p->stacks;
    cp_sw_ids ids = { 0 }, pys = { 0 };
    uint32_t *renum = calloc(s->n_mods + 1, sizeof *renum);
    uint32_t *order = calloc(s->n_mods + 1, sizeof *order);
    uint32_t n_used = 0;
    int rc = -1;
    if (!renum || !order || cp_sw_stack_ids(pt, &ids) != 0)
        goto out_free;
    for (size_t i = 0; i < ids.n; i++) {
        const cp_stack *st = cp_stacks_get(s, ids.v[i]);
        for (uint32_t k = 0; st && k < st->n_native; k++) {
            uint32_t m = st->native[k].mod;
            if (m && m <= s->n_mods && !renum[m]) {
                renum[m] = ++n_used;
                order[n_used] = m;
            }
        }
        for (uint32_t k = 0; st && k < st->n_py; k++)
            if (cp_sw_add(&pys, st->py[k]) != 0)
                goto out_free;
    }
    cp_jb_key(b, "mods");
    cp_jb_open(b, '[');
    for (uint32_t i = 1; i <= n_used; i++) {
        const cp_module *m = &s->mods[order[i] - 1];
        cp_jb_row(b, "ssi", m->path, m->build_id, (int64_t)m->mclass);
    }
    cp_jb_close(b, ']');
    cp_jb_key(b, "py");
    cp_jb_open(b, '[');
    if (pys.n)
        qsort(pys.v, pys.n, sizeof *pys.v, cp_u64_cmp);
    for (size_t i = 0; i < pys.n; i++) {
        const cp_pyframe *f = cp_map_get(&s->pyframes, pys.v[i]);
        if (!f)
            continue;
        cp_jb_row(b, "ussu", (uint64_t)pys.v[i], f->file, f->func, (uint64_t)f->line);
    }
    cp_jb_close(b, ']');
    cp_jb_key(b, "st");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < ids.n; i++) {
        const cp_stack *st = cp_stacks_get(s, ids.v[i]);
        if (!st)
            continue;
        cp_jb_open(b, '[');
        cp_jb_vals(b, "uss", (uint64_t)ids.v[i], cp_site_label_as(s, ids.v[i], 0),
                   cp_site_label_as(s, ids.v[i], 1));
        cp_jb_open(b, '[');
        for (uint32_t k = 0; k < st->n_native; k++) {
            const cp_frame *fr = &st->native[k];
            cp_symres r;
            cp_sym_native(s, fr, &r);
            uint32_t m = fr->mod && fr->mod <= s->n_mods ? renum[fr->mod] : 0;
            cp_jb_row(b, "uussu", (uint64_t)m, (uint64_t)(m ? r.offset : fr->ip), r.func,
                      r.file, (uint64_t)r.line);
        }
        cp_jb_close(b, ']');
        cp_jb_open(b, '[');
        for (uint32_t k = 0; k < st->n_py; k++) {
            cp_jb_elem(b);
            cp_jb_u64(b, st->py[k]);
        }
        cp_jb_close(b, ']');
        cp_jb_close(b, ']');
    }
    cp_jb_close(b, ']');
    rc = 0;
out_free:
    free(ids.v);
    free(pys.v);
    free(renum);
    free(order);
    return rc;
}

/* --- findings and processes ---------------------------------------------------------- */

static void cp_sw_findings(cp_jb *b, const cp_part *pt)
{
    cp_jb_key(b, "findings");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < pt->rep.n; i++) {
        const cp_finding *x = pt->rep.f[i];
        cp_jb_open(b, '{');
        cp_jb_ks(b, "check", x->check->id);
        cp_jb_key(b, "n");
        cp_sw_finding(b, x);
        cp_jb_ks(b, "title", x->title);
        cp_jb_key(b, "lines");
        cp_jb_open(b, '[');
        for (size_t k = 0; k < x->n_lines; k++) {
            cp_jb_elem(b);
            cp_jb_str(b, x->lines[k]);
        }
        cp_jb_close(b, ']');
        /* The members of its "details" object, as the checks wrote them. */
        cp_jb_ks(b, "details", x->details.s ? x->details.s : "");
        cp_jb_ks(b, "fix", x->fix);
        cp_jb_ks(b, "why", x->why);
        cp_jb_key(b, "sites");
        cp_jb_open(b, '[');
        for (size_t k = 0; k < x->n_sites; k++) {
            const cp_site *s = &x->sites[k];
            cp_jb_row(b, "uuuus", (uint64_t)s->stack, (uint64_t)s->count, (uint64_t)s->bytes,
                      (uint64_t)s->ns, s->note);
        }
        cp_jb_close(b, ']');
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
}

static int cp_sw_part(cp_jb *b, const cp_part *pt)
{
    const cp_proc *x = pt->proc;
    cp_jb_open(b, '{');
    cp_jb_ks(b, "file", x->file);
    cp_jb_kb(b, "bad", pt->bad);
    cp_jb_key(b, "p");
    cp_sw_proc(b, x);
    cp_jb_key(b, "env");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < x->n_env; i++)
        cp_jb_row(b, "ss", x->env[i].name, x->env[i].value);
    cp_jb_close(b, ']');
    cp_jb_key(b, "last");
    cp_jb_open(b, '[');
    for (int i = 0; i < CP_LAST_EVENTS; i++)
        cp_sw_last(b, &x->last[i]);
    cp_jb_close(b, ']');
    int nd = x->n_dev < CP_MAX_DEV ? x->n_dev : CP_MAX_DEV;
    cp_jb_key(b, "dev");
    cp_jb_open(b, '[');
    for (int d = 0; d < nd; d++)
        cp_sw_devinfo(b, &x->dev[d]);
    cp_jb_close(b, ']');
    cp_jb_key(b, "mem");
    cp_jb_open(b, '[');
    for (int d = 0; d < nd; d++)
        cp_sw_devmem(b, &x->mem[d]);
    cp_jb_close(b, ']');
    cp_jb_key(b, "libs");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < x->n_libs; i++)
        cp_jb_row(b, "ss", x->libs[i].name, x->libs[i].path);
    cp_jb_close(b, ']');
    cp_jb_key(b, "forks");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < x->n_forks; i++) {
        cp_jb_elem(b);
        cp_jb_u64(b, x->forks[i]);
    }
    cp_jb_close(b, ']');
    cp_sw_timeline(b, x->series);
    cp_summary_ledger_write(b, pt);
    if (cp_sw_sites(b, pt) != 0)
        return -1;
    cp_sw_findings(b, pt);
    cp_jb_close(b, '}');
    return b->oom ? -1 : 0;
}

int cp_summary_write(const char *path, const cp_part *parts, size_t n,
                     const unsigned char *selected)
{
    size_t nc;
    const cp_check *const *all = cp_checks(&nc);
    char *tmp;
    cp_jb b = { 0 };
    int rc;
    FILE *f = cp_outfile_open(path, &tmp);
    if (!f) {
        fprintf(stderr, "report: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* The head, then one process at a time: memory stays that of one. */
    cp_jb_open(&b, '{');
    cp_jb_ks(&b, "schema", "cuprobe-summary");
    cp_jb_ku(&b, "version", CP_SUMMARY_VERSION);
    cp_jb_ks(&b, "cuprobe", CP_VERSION);
    cp_jb_key(&b, "checks");
    cp_jb_open(&b, '[');
    for (size_t k = 0; k < nc; k++)
        if (selected[k]) {
            cp_jb_elem(&b);
            cp_jb_str(&b, all[k]->id);
        }
    cp_jb_close(&b, ']');
    cp_jb_key(&b, "processes");
    cp_jb_open(&b, '[');
    for (size_t i = 0; i < n && !b.oom; i++) {
        if (i)
            cp_jb_raw(&b, ",");     /* the text before it went to the file */
        if (b.oom || cp_sw_part(&b, &parts[i]) != 0) {
            b.oom = 1;   /* its only failure */
            break;
        }
        fputs(b.s, f);
        fputc('\n', f);
        b.n = 0;
        b.s[0] = 0;
        b.need_comma = 0;
    }
    cp_jb_close(&b, ']');
    cp_jb_close(&b, '}');
    if (!b.oom)
        fprintf(f, "%s\n", b.s);
    rc = cp_outfile_commit(f, tmp, path, b.oom ? -ENOMEM : 0);
    if (rc == -ENOMEM)
        fprintf(stderr, "report: out of memory while writing %s\n", path);
    else if (rc != 0)
        fprintf(stderr, "report: cannot write %s: %s\n", path, strerror(-rc));
    cp_jb_free(&b);
    return rc ? -1 : 0;
}
