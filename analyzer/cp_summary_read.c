/*
 * cp_summary_read.c - summaries back into parts (cp_summary.h): every value
 * checked for its type and count against the tables of cp_proc_fields.h,
 * call sites rebuilt with the symbols resolved where the summary was made
 * (no binary of the run is needed here).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_checks.h"
#include "cp_file.h"
#include "cp_grow.h"
#include "cp_jread.h"
#include "cp_proc_fields.h"
#include "cp_series.h"
#include "cp_summary.h"

typedef struct cp_sr {
    const char *file;
    char *err;
    size_t cap;
    int bad;                /* -EINVAL or -ENOMEM once something failed */
    int ledger;             /* read each process's ledger (else left in the text) */
} cp_sr;

static int cp_sr_fail(cp_sr *r, const cp_jn *at, const char *fmt, ...)
{
    if (r->bad)
        return -1;
    r->bad = -EINVAL;
    int k = snprintf(r->err, r->cap, "%s: offset %zu: ", r->file, at ? at->off : 0);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < r->cap)
        vsnprintf(r->err + k, r->cap - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static int cp_sr_oom(cp_sr *r)
{
    if (!r->bad) {
        r->bad = -ENOMEM;
        snprintf(r->err, r->cap, "%s: out of memory", r->file);
    }
    return -1;
}

/* Member key of o, of type t: NULL (and the error) when missing or not. */
static const cp_jn *cp_sr_get(cp_sr *r, const cp_jn *o, const char *key, int t)
{
    static const char *const names[] = { "null", "a boolean", "an integer", "a string",
                                         "an array", "an object" };
    const cp_jn *v = cp_jn_get(o, key);
    if (!v) {
        cp_sr_fail(r, o, "no member \"%s\" in this object", key);
        return NULL;
    }
    if (v->type != t) {
        cp_sr_fail(r, v, "\"%s\" should be %s", key, names[t]);
        return NULL;
    }
    return v;
}

/* Reading the elements of an array one by one, each checked. */
typedef struct cp_sr_it {
    cp_sr *r;
    const cp_jn *a;
    size_t i;
} cp_sr_it;

static int cp_sr_array(cp_sr *r, const cp_jn *a, size_t want, const char *what, cp_sr_it *it)
{
    *it = (cp_sr_it){ .r = r, .a = a };
    if (!a || a->type != CP_J_ARR)
        return cp_sr_fail(r, a, "%s should be an array", what);
    if (want && a->n != want)
        return cp_sr_fail(r, a, "%s should have %zu values, not %zu (another format "
                          "version?)", what, want, a->n);
    return 0;
}

static const cp_jn *cp_it_next(cp_sr_it *it, int t)
{
    if (it->r->bad || it->i >= it->a->n) {
        if (!it->r->bad)
            cp_sr_fail(it->r, it->a, "too few values in this array");
        return NULL;
    }
    const cp_jn *v = &it->a->kid[it->i++];
    if (v->type != t && !(v->type == CP_J_NULL && t == CP_J_STR)) {
        cp_sr_fail(it->r, v, "value %zu of this array has the wrong type", it->i - 1);
        return NULL;
    }
    return v;
}

static uint64_t cp_it_u(cp_sr_it *it)
{
    const cp_jn *v = cp_it_next(it, CP_J_INT);
    if (v && v->neg)
        cp_sr_fail(it->r, v, "a negative number where none can be");
    return v && !v->neg ? v->u : 0;
}

static int64_t cp_it_i(cp_sr_it *it)
{
    const cp_jn *v = cp_it_next(it, CP_J_INT);
    int64_t x = 0;
    if (v && cp_jn_i64(v, &x))
        cp_sr_fail(it->r, v, "a number out of range");
    return x;
}

/* A string or null; *len its length. */
static const cp_jn *cp_it_str(cp_sr_it *it)
{
    const cp_jn *v = cp_it_next(it, CP_J_STR);
    return v && v->type == CP_J_STR ? v : NULL;
}

static char *cp_it_dup(cp_sr_it *it)
{
    const cp_jn *v = cp_it_str(it);
    char *s = v ? strdup(v->s) : NULL;
    if (v && !s)
        cp_sr_oom(it->r);
    return s;
}

static const char *cp_it_intern(cp_sr_it *it)
{
    const cp_jn *v = cp_it_str(it);
    const char *s = v ? cp_sym_intern(v->s, v->len) : NULL;
    if (v && !s)
        cp_sr_oom(it->r);
    return s;
}

static void cp_it_hex(cp_sr_it *it, uint8_t *out, size_t n)
{
    const cp_jn *v = cp_it_str(it);
    memset(out, 0, n);
    if (!v)
        return;
    if (v->len != 2 * n || strspn(v->s, "0123456789abcdef") != v->len) {
        cp_sr_fail(it->r, v, "expected %zu hex digits", 2 * n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned x;
        sscanf(v->s + 2 * i, "%2x", &x);
        out[i] = (uint8_t)x;
    }
}

/* One struct x from a JSON array of the fields of a table. */
#define CNT(K, ...) CNT_##K(__VA_ARGS__)
#define CNT_U(f) +1
#define CNT_I(f) +1
#define CNT_S(f) +1
#define CNT_K(f) +1
#define CNT_H(f) +1
#define CNT_UA(f, n) +(n)
#define RD(K, ...) RD_##K(__VA_ARGS__)
#define RD_U(f) x->f = (__typeof__(x->f))cp_it_u(&it);
#define RD_I(f) x->f = (__typeof__(x->f))cp_it_i(&it);
#define RD_S(f) free(x->f); x->f = cp_it_dup(&it);
#define RD_K(f) x->f = cp_it_intern(&it);
#define RD_H(f) cp_it_hex(&it, x->f, sizeof x->f);
#define RD_UA(f, n) for (size_t k_ = 0; k_ < (n); k_++) x->f[k_] = cp_it_u(&it);

#define CP_SR_STRUCT(fn, T, TABLE, extra) \
    static int fn(cp_sr *r, const cp_jn *a, T *x) \
    { \
        cp_sr_it it; \
        if (cp_sr_array(r, a, (size_t)(0 TABLE(CNT)) + (extra), #T, &it)) \
            return -1; \
        TABLE(RD) \
        return r->bad ? -1 : 0; \
    }
CP_SR_STRUCT(cp_sr_proc, cp_proc, CP_PROC_FIELDS, 0)
CP_SR_STRUCT(cp_sr_devinfo, cp_devinfo, CP_DEVINFO_FIELDS, 0)
CP_SR_STRUCT(cp_sr_devmem, cp_devmem, CP_DEVMEM_FIELDS, 0)
CP_SR_STRUCT(cp_sr_last, cp_last_event, CP_LAST_FIELDS, 0)
CP_SR_STRUCT(cp_sr_series, cp_series, CP_SERIES_FIELDS, 0)
CP_SR_STRUCT(cp_sr_bucket, cp_ser_bucket, CP_SER_BUCKET_FIELDS, 0)
CP_SR_STRUCT(cp_sr_ser_oom, cp_ser_oom, CP_SER_OOM_FIELDS, 0)
CP_SR_STRUCT(cp_sr_finding, cp_finding, CP_FINDING_FIELDS, 0)

static int cp_sr_serdev(cp_sr *r, const cp_jn *a, cp_ser_dev *x)
{
    cp_sr_it it;
    if (cp_sr_array(r, a, (size_t)(0 CP_SER_DEV_FIELDS(CNT)) + 3 * CP_SER_TOP, "cp_ser_dev", &it))
        return -1;
    CP_SER_DEV_FIELDS(RD)
    for (int t = 0; t < CP_SER_TOP; t++) {
        x->top[t].size = cp_it_u(&it);
        x->top[t].stack = cp_it_u(&it);
        x->top[t].ts = cp_it_u(&it);
    }
    if (x->n_top > CP_SER_TOP)
        return cp_sr_fail(r, a, "more top allocations than %d", CP_SER_TOP);
    return r->bad ? -1 : 0;
}

static int cp_sr_same(const cp_jn *v)
{
    return v->type == CP_J_INT && !v->neg && v->u == 0;
}

/* --- the timeline -------------------------------------------------------------------- */

static int cp_sr_timeline(cp_sr *r, const cp_jn *o, cp_proc *p)
{
    const cp_jn *v = cp_jn_get(o, "series");
    if (v && v->type == CP_J_NULL) {
        cp_series_free(p->series);
        p->series = NULL;
        return 0;
    }
    if (!(v = cp_sr_get(r, o, "series", CP_J_OBJ)))
        return -1;
    cp_series *s = p->series;
    const cp_jn *sc = cp_sr_get(r, v, "s", CP_J_ARR), *b = cp_sr_get(r, v, "b", CP_J_ARR);
    const cp_jn *dv = cp_sr_get(r, v, "dev", CP_J_ARR), *om = cp_sr_get(r, v, "oom", CP_J_ARR);
    if (!sc || !b || !dv || !om || cp_sr_series(r, sc, s) != 0)
        return -1;
    if (s->cur < -1 || s->cur >= CP_SER_N || s->n_oom < 0 || s->n_oom > CP_SER_OOMS ||
        !s->width || b->n != (size_t)cp_series_n(s) || om->n != (size_t)s->n_oom)
        return cp_sr_fail(r, sc, "a timeline that does not add up (buckets, width or OOMs)");
    if (cp_series_buckets(s, b->n) != 0)
        return cp_sr_oom(r);
    /* 0: the same as the bucket before. */
    for (size_t i = 0; i < b->n; i++)
        if (i && cp_sr_same(&b->kid[i]))
            s->b[i] = s->b[i - 1];
        else if (cp_sr_bucket(r, &b->kid[i], &s->b[i]) != 0)
            return -1;
    for (size_t i = 0; i < om->n; i++)
        if (cp_sr_ser_oom(r, &om->kid[i], &s->oom[i]) != 0)
            return -1;
    for (size_t k = 0; k < dv->n; k++) {
        const cp_jn *e = &dv->kid[k];
        int64_t d;
        if (e->type != CP_J_ARR || e->n != b->n + 1 || cp_jn_i64(&e->kid[0], &d) || d < 0 ||
            d >= 64 || s->dev[d])
            return cp_sr_fail(r, e, "a device timeline should be [device 0..63 (once), then "
                              "%zu buckets]", b->n);
        /* Frozen below: the buckets in use are all it keeps. */
        s->dev[d] = calloc(b->n ? b->n : 1, sizeof *s->dev[d]);
        if (!s->dev[d])
            return cp_sr_oom(r);
        for (size_t i = 0; i < b->n; i++)
            if (i && cp_sr_same(&e->kid[i + 1]))
                s->dev[d][i] = s->dev[d][i - 1];
            else if (cp_sr_serdev(r, &e->kid[i + 1], &s->dev[d][i]) != 0)
                return -1;
    }
    cp_series_freeze(s);
    return 0;
}

/* --- call sites ------------------------------------------------------------------------ */

static int cp_sr_frames(cp_sr *r, const cp_jn *fr, cp_stacks *s, cp_stack *st)
{
    for (size_t k = 0; k < fr->n; k++) {
        cp_sr_it it;
        if (cp_sr_array(r, &fr->kid[k], 5, "a native frame", &it))
            return -1;
        uint64_t m = cp_it_u(&it), off = cp_it_u(&it);
        const char *func = cp_it_intern(&it), *file = cp_it_intern(&it);
        uint64_t line = cp_it_u(&it);
        if (r->bad)
            return -1;
        if (m > s->n_mods)
            return cp_sr_fail(r, &fr->kid[k], "module %llu of %zu", (unsigned long long)m,
                              s->n_mods);
        st->native[k] = (cp_frame){ .mod = (uint32_t)m, .ip = off };
        if (!m)
            continue;
        cp_symres *res = cp_map_put(s->presym, cp_presym_key((uint32_t)m, off), NULL);
        if (!res)
            return cp_sr_oom(r);
        *res = (cp_symres){ .func = func, .file = file, .line = (unsigned)line,
                            .module = s->mods[m - 1].path, .offset = off };
    }
    return 0;
}

static int cp_sr_sites(cp_sr *r, const cp_jn *o, cp_stacks *s)
{
    const cp_jn *mods = cp_sr_get(r, o, "mods", CP_J_ARR), *py = cp_sr_get(r, o, "py", CP_J_ARR);
    const cp_jn *sts = cp_sr_get(r, o, "st", CP_J_ARR);
    if (!mods || !py || !sts)
        return -1;
    s->presym = calloc(1, sizeof *s->presym);
    if (!s->presym)
        return cp_sr_oom(r);
    cp_map_init(s->presym, sizeof(cp_symres));
    /* Sized for what is read: a process has a few call sites. */
    size_t n_frames = 0;
    for (size_t i = 0; i < sts->n; i++)
        if (sts->kid[i].type == CP_J_ARR && sts->kid[i].n > 3)
            n_frames += sts->kid[i].kid[3].n;
    if (cp_map_reserve(&s->stacks, sts->n) || cp_map_reserve(s->presym, n_frames))
        return cp_sr_oom(r);
    for (size_t i = 0; i < mods->n; i++) {
        cp_sr_it it;
        if (cp_sr_array(r, &mods->kid[i], 3, "a module", &it))
            return -1;
        if (cp_grow((void **)&s->mods, &s->cap_mods, s->n_mods + 1, sizeof *s->mods, 16))
            return cp_sr_oom(r);
        cp_module *m = &s->mods[s->n_mods];
        memset(m, 0, sizeof *m);
        m->path = cp_it_intern(&it);
        m->build_id = cp_it_intern(&it);
        m->mclass = (int)cp_it_i(&it);
        m->size = UINT64_MAX;     /* frames carry file offsets: base 0, offset 0 */
        if (r->bad || !m->path || !m->build_id)
            return r->bad ? -1 : cp_sr_fail(r, &mods->kid[i], "a module needs a path");
        s->n_mods++;
    }
    for (size_t i = 0; i < py->n; i++) {
        cp_sr_it it;
        if (cp_sr_array(r, &py->kid[i], 4, "a Python frame", &it))
            return -1;
        uint64_t id = cp_it_u(&it);
        const cp_jn *file = cp_it_str(&it), *func = cp_it_str(&it);
        uint64_t line = cp_it_u(&it);
        if (r->bad || cp_stacks_pyframe(s, id, file ? file->s : NULL, func ? func->s : NULL,
                                        line) != 0)
            return r->bad ? -1 : cp_sr_oom(r);
    }
    for (size_t i = 0; i < sts->n; i++) {
        cp_sr_it it;
        if (cp_sr_array(r, &sts->kid[i], 5, "a stack", &it))
            return -1;
        uint64_t id = cp_it_u(&it);
        const char *label = cp_it_intern(&it), *label_all = cp_it_intern(&it);
        const cp_jn *fr = cp_it_next(&it, CP_J_ARR), *pys = cp_it_next(&it, CP_J_ARR);
        if (r->bad || !id || !label || !label_all)
            return r->bad ? -1 : cp_sr_fail(r, &sts->kid[i], "a stack needs an id and labels");
        cp_stack *st = cp_map_put(&s->stacks, id, NULL);
        if (!st)
            return cp_sr_oom(r);
        if (st->native)
            return cp_sr_fail(r, &sts->kid[i], "stack %llu twice", (unsigned long long)id);
        /* One block, native frames then Python frame ids, as cp_stacks_add. */
        st->native = malloc(fr->n * sizeof(cp_frame) + pys->n * sizeof(uint64_t) + 1);
        if (!st->native)
            return cp_sr_oom(r);
        st->py = (uint64_t *)(st->native + fr->n);
        st->n_native = (uint32_t)fr->n;
        st->n_py = (uint32_t)pys->n;
        st->label = label;
        st->label_all = label_all;
        cp_sr_it pi;
        cp_sr_array(r, pys, 0, "Python frame ids", &pi);
        for (size_t k = 0; k < pys->n; k++)
            st->py[k] = cp_it_u(&pi);
        if (r->bad || cp_sr_frames(r, fr, s, st) != 0)
            return -1;
    }
    return 0;
}

/* --- findings -------------------------------------------------------------------------- */

static int cp_sr_findings(cp_sr *r, const cp_jn *o, const unsigned char *selected, cp_part *pt)
{
    const cp_jn *fs = cp_sr_get(r, o, "findings", CP_J_ARR);
    size_t nc;
    const cp_check *const *all = cp_checks(&nc);
    for (size_t i = 0; fs && i < fs->n; i++) {
        const cp_jn *e = &fs->kid[i];
        const cp_jn *id = cp_sr_get(r, e, "check", CP_J_STR), *n = cp_sr_get(r, e, "n", CP_J_ARR);
        const cp_jn *title = cp_sr_get(r, e, "title", CP_J_STR);
        const cp_jn *lines = cp_sr_get(r, e, "lines", CP_J_ARR);
        const cp_jn *det = cp_sr_get(r, e, "details", CP_J_STR);
        const cp_jn *fix = cp_jn_get(e, "fix"), *sites = cp_sr_get(r, e, "sites", CP_J_ARR);
        const cp_jn *why = cp_jn_get(e, "why");
        if (r->bad)
            return -1;
        size_t k;
        for (k = 0; k < nc && strcmp(all[k]->id, id->s) != 0; k++)
            ;
        if (k == nc)
            return cp_sr_fail(r, id, "unknown check \"%s\"", id->s);
        if (!selected[k])
            continue;
        if (!fix || (fix->type != CP_J_STR && fix->type != CP_J_NULL))
            return cp_sr_fail(r, e, "\"fix\" should be a string or null");
        if (!why || (why->type != CP_J_STR && why->type != CP_J_NULL))
            return cp_sr_fail(r, e, "\"why\" should be a string or null");
        cp_finding *f = cp_finding_new(&pt->rep, all[k], pt->proc, "%s", title->s);
        if (!f || !f->title)
            return cp_sr_oom(r);
        if (cp_sr_finding(r, n, f) != 0)
            return -1;
        if (f->sev < CP_SEV_INFO || f->sev > CP_SEV_ERROR)
            return cp_sr_fail(r, n, "severity %d", f->sev);
        f->fix = fix->type == CP_J_STR ? cp_sym_intern(fix->s, fix->len) : NULL;
        f->why = why->type == CP_J_STR ? cp_sym_intern(why->s, why->len) : NULL;
        cp_sr_it it;
        cp_sr_array(r, lines, 0, "lines", &it);
        for (size_t j = 0; j < lines->n; j++) {
            const cp_jn *l = cp_it_str(&it);
            size_t before = f->n_lines;
            if (!l)
                return r->bad ? -1 : cp_sr_fail(r, lines, "a line should be a string");
            cp_finding_line(f, "%s", l->s);
            if (f->n_lines == before)
                return cp_sr_oom(r);
        }
        if (det->len) {
            cp_jb_raw(&f->details, det->s);
            f->details.need_comma = 1;
            if (f->details.oom)
                return cp_sr_oom(r);
        }
        for (size_t j = 0; j < sites->n; j++) {
            if (cp_sr_array(r, &sites->kid[j], 5, "a site", &it))
                return -1;
            uint64_t stack = cp_it_u(&it), cnt = cp_it_u(&it), by = cp_it_u(&it);
            uint64_t ns = cp_it_u(&it);
            const char *note = cp_it_intern(&it);
            size_t before = f->n_sites;
            if (!r->bad)
                cp_finding_site(f, pt->proc, stack, cnt, by, ns, note);
            if (!r->bad && f->n_sites == before)
                return cp_sr_oom(r);
        }
        if (r->bad)
            return -1;
    }
    return r->bad ? -1 : 0;
}

/* --- processes ------------------------------------------------------------------------- */

static int cp_sr_part(cp_sr *r, const cp_jn *o, const unsigned char *selected, cp_part *pt)
{
    const cp_jn *file = cp_sr_get(r, o, "file", CP_J_STR), *bad = cp_sr_get(r, o, "bad", CP_J_BOOL);
    const cp_jn *env = cp_sr_get(r, o, "env", CP_J_ARR), *last = cp_sr_get(r, o, "last", CP_J_ARR);
    const cp_jn *dev = cp_sr_get(r, o, "dev", CP_J_ARR), *mem = cp_sr_get(r, o, "mem", CP_J_ARR);
    const cp_jn *libs = cp_sr_get(r, o, "libs", CP_J_ARR);
    const cp_jn *forks = cp_sr_get(r, o, "forks", CP_J_ARR), *pv = cp_sr_get(r, o, "p", CP_J_ARR);
    if (r->bad)
        return -1;
    const char *path = cp_sym_intern(file->s, file->len);
    cp_proc *p = path ? cp_part_proc_new(path, 0) : NULL;
    if (!p)
        return cp_sr_oom(r);
    pt->proc = p;
    pt->bad = (int)bad->u;
    if (cp_sr_proc(r, pv, p) != 0)
        return -1;
    /* Devices past CP_MAX_DEV are counted but not kept (cp_model.c). */
    int nd = p->n_dev < CP_MAX_DEV ? p->n_dev : CP_MAX_DEV;
    if (p->n_dev < 0 || dev->n != (size_t)nd || mem->n != (size_t)nd ||
        last->n != CP_LAST_EVENTS)
        return cp_sr_fail(r, pv, "the device count does not match \"dev\" and \"mem\" (or "
                          "\"last\" does not hold %d events)", CP_LAST_EVENTS);
    for (int d = 0; d < nd; d++) {
        if (cp_sr_devinfo(r, &dev->kid[d], &p->dev[d]) || cp_sr_devmem(r, &mem->kid[d], &p->mem[d]))
            return -1;
        /* A device seen has a name to print, if an empty one. */
        if (p->dev[d].seen && !p->dev[d].name)
            p->dev[d].name = "";
    }
    for (int i = 0; i < CP_LAST_EVENTS; i++)
        if (cp_sr_last(r, &last->kid[i], &p->last[i]))
            return -1;
    p->env = calloc(env->n ? env->n : 1, sizeof *p->env);
    p->libs = calloc(libs->n ? libs->n : 1, sizeof *p->libs);
    p->forks = calloc(forks->n ? forks->n : 1, sizeof *p->forks);
    if (!p->env || !p->libs || !p->forks)
        return cp_sr_oom(r);
    p->cap_libs = libs->n ? libs->n : 1;
    cp_sr_it it;
    for (size_t i = 0; i < env->n; i++, p->n_env++) {
        if (cp_sr_array(r, &env->kid[i], 2, "an environment variable", &it))
            return -1;
        p->env[i].name = cp_it_dup(&it);
        p->env[i].value = cp_it_dup(&it);
        if (!r->bad && (!p->env[i].name || !p->env[i].value))
            return cp_sr_fail(r, &env->kid[i], "an environment variable needs a name and value");
    }
    for (size_t i = 0; i < libs->n; i++, p->n_libs++) {
        if (cp_sr_array(r, &libs->kid[i], 2, "a library", &it))
            return -1;
        p->libs[i].name = cp_it_intern(&it);
        p->libs[i].path = cp_it_intern(&it);
        if (!r->bad && (!p->libs[i].name || !p->libs[i].path))
            return cp_sr_fail(r, &libs->kid[i], "a library needs a name and path");
    }
    cp_sr_array(r, forks, 0, "forks", &it);
    for (size_t i = 0; i < forks->n; i++)
        p->forks[p->n_forks++] = cp_it_u(&it);
    const cp_jn *at = NULL;
    if (r->bad || cp_sr_timeline(r, o, p) || cp_sr_sites(r, o, &p->stacks))
        return -1;
    /* A ledger is the bulk of a process (its call-time histograms):
     * read only for a reader of it. */
    int lr = r->ledger ? cp_summary_ledger_read(p, o, &at) : 0;
    if (lr)
        return lr == -ENOMEM ? cp_sr_oom(r) : cp_sr_fail(r, at, "a ledger value is wrong");
    return cp_sr_findings(r, o, selected, pt);
}

/* The members before the processes: what the summary is, and who made it. */
static int cp_sr_head(cp_sr *r, const cp_jn *root)
{
    if (root->type != CP_J_OBJ)
        return cp_sr_fail(r, root, "not a cuprobe summary (not a JSON object)");
    const cp_jn *schema = cp_sr_get(r, root, "schema", CP_J_STR);
    if (!schema)
        return -1;
    if (strcmp(schema->s, "cuprobe-summary") != 0)
        return cp_sr_fail(r, schema, "not a cuprobe summary (schema \"%s\")", schema->s);
    const cp_jn *ver = cp_sr_get(r, root, "version", CP_J_INT);
    if (ver && (ver->neg || ver->u != CP_SUMMARY_VERSION))
        return cp_sr_fail(r, ver, "summary format version %s%llu; this analyzer reads version "
                          "%d (make the summaries and the report with one cuprobe)",
                          ver->neg ? "-" : "", (unsigned long long)ver->u, CP_SUMMARY_VERSION);
    const cp_jn *made = cp_sr_get(r, root, "cuprobe", CP_J_STR);
    if (r->bad)
        return -1;
    if (strcmp(made->s, CP_VERSION) != 0)
        fprintf(stderr, "report: %s: made by cuprobe %s, read by %s: its findings may be worded "
                "differently\n", r->file, made->s, CP_VERSION);
    return 0;
}

/* Where the processes of a summary go, one at a time as they are parsed. */
typedef struct cp_sr_into {
    cp_sr *r;
    const unsigned char *selected;
    cp_part **parts;
    size_t *n, *cap;
    int head_read;
} cp_sr_into;

static int cp_sr_process(void *ctx, const cp_jn *top, size_t i, const cp_jn *proc)
{
    cp_sr_into *in = ctx;
    cp_sr *r = in->r;
    (void)i;
    if (!in->head_read) {
        in->head_read = 1;
        if (cp_sr_head(r, top) != 0)
            return -1;
    }
    if (proc->type != CP_J_OBJ)
        return cp_sr_fail(r, proc, "a process should be an object");
    if (cp_grow((void **)in->parts, in->cap, *in->n + 1, sizeof **in->parts, 16))
        return cp_sr_oom(r);
    memset(&(*in->parts)[*in->n], 0, sizeof **in->parts);
    (*in->n)++;
    return cp_sr_part(r, proc, in->selected, &(*in->parts)[*in->n - 1]);
}

int cp_summary_is_head(const void *head, size_t n)
{
    const char *c = head;
    size_t i = 0;
    while (i < n && (c[i] == ' ' || c[i] == '\n' || c[i] == '\t' || c[i] == '\r'))
        i++;
    return i < n && c[i] == '{';
}

int cp_summary_is(const char *path)
{
    /* Not a regular file: not a summary; the trace reader says what it is. */
    int fd = cp_file_open_in(path, 0, NULL);
    if (fd < 0)
        return 0;
    char head[256];
    ssize_t r;
    size_t i = 0;
    do {
        r = read(fd, head, sizeof head);
        for (i = 0; r > 0 && i < (size_t)r && strchr(" \n\t\r", head[i]); i++)
            ;
    } while ((r > 0 && i == (size_t)r) || (r < 0 && errno == EINTR));
    close(fd);
    return r > 0 && cp_summary_is_head(head + i, (size_t)r - i);
}

int cp_summary_read_text(const char *name, const char *text, size_t len,
                         const unsigned char *selected, int ledger, cp_part **parts,
                         size_t *n, size_t *cap, char *err, size_t errcap)
{
    cp_sr r = { .file = name, .err = err, .cap = errcap, .ledger = ledger };
    cp_sr_into in = { .r = &r, .selected = selected, .parts = parts, .n = n, .cap = cap };
    size_t first = *n;
    char perr[512];
    /* Process by process: memory holds the nodes of one, not of all. */
    cp_jdoc *d = cp_jdoc_parse_each(text, len, "processes", cp_sr_process, &in, perr,
                                    sizeof perr);
    if (!d && !r.bad) {
        snprintf(err, errcap, "%s: %s", name, perr);
        r.bad = strcmp(perr, "out of memory") == 0 ? -ENOMEM : -EINVAL;
    }
    if (d && !in.head_read)
        cp_sr_head(&r, cp_jdoc_root(d));
    if (d && !r.bad)
        cp_sr_get(&r, cp_jdoc_root(d), "processes", CP_J_ARR);
    cp_jdoc_free(d);
    if (r.bad) {            /* all of this summary or nothing */
        for (size_t i = first; i < *n; i++)
            cp_part_free(&(*parts)[i]);
        *n = first;
    }
    return r.bad;
}

int cp_summary_read(const char *path, const unsigned char *selected, int ledger,
                    cp_part **parts, size_t *n, size_t *cap, char *err, size_t errcap)
{
    mode_t mode = 0;
    int fd = cp_file_open_in(path, 0, &mode);
    if (fd < 0) {
        if (fd == -EINVAL)
            snprintf(err, errcap, "%s: %s, not a regular file", path, cp_file_kind(mode));
        else
            snprintf(err, errcap, "%s: %s", path, strerror(-fd));
        return fd;
    }
    cp_fbuf text;
    int rc = cp_file_read_all(fd, NULL, 0, &text);
    close(fd);
    if (rc != 0) {
        snprintf(err, errcap, "%s: %s", path, rc == -ENOMEM ? "out of memory" : "read error");
        return rc;
    }
    rc = cp_summary_read_text(path, text.p, text.len, selected, ledger, parts, n, cap, err,
                              errcap);
    cp_fbuf_free(&text);
    return rc;
}
