/*
 * cp_stats_data.c - what the stats tables and document share (cp_stats.h):
 * APIs merged over processes, the names that match processes across runs.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_path.h"
#include "cp_stats.h"
#include "cp_grow.h"

static int cp_st_api_cmp(const void *a, const void *b)
{
    const cp_st_api *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    if (x->calls != y->calls)
        return x->calls > y->calls ? -1 : 1;
    return strcmp(x->name, y->name);
}

size_t cp_stats_apis(const cp_report *rep, cp_st_api **out)
{
    cp_st_api *v = NULL;
    uint32_t **hist = NULL;
    size_t n = 0, cap = 0, hcap = 0;
    *out = NULL;
    for (size_t i = 0; i < rep->n_procs; i++) {
        const cp_ledger *lg = rep->procs[i]->ledger;
        for (size_t k = 0; lg && k < lg->n_api; k++) {
            const cp_lg_api *a = &lg->api[k];
            if (!a->calls || !a->name)
                continue;
            size_t j;
            for (j = 0; j < n && strcmp(v[j].name, a->name) != 0; j++)
                ;
            if (j == n) {
                if (cp_grow((void **)&v, &cap, n + 1, sizeof *v, 32) != 0 ||
                    cp_grow((void **)&hist, &hcap, n + 1, sizeof *hist, 32) != 0)
                    goto fail;
                memset(&v[n], 0, sizeof v[n]);
                v[n].name = a->name;
                hist[n] = calloc(CP_LG_HIST, sizeof **hist);
                if (!hist[n])
                    goto fail;
                n++;
            }
            cp_st_api *m = &v[j];
            m->calls += a->calls;
            m->errors += a->errors;
            if (a->timed) {
                if (!m->timed || a->min_ns < m->min_ns)
                    m->min_ns = a->min_ns;
                if (a->max_ns > m->max_ns)
                    m->max_ns = a->max_ns;
                m->timed += a->timed;
                m->total_ns += a->total_ns;
                cp_ledger_hist_add(hist[j], a->hist);
            }
        }
    }
    for (size_t j = 0; j < n; j++) {
        cp_lg_api t = { .timed = v[j].timed, .min_ns = v[j].min_ns, .max_ns = v[j].max_ns,
                        .hist = hist[j] };
        v[j].median_ns = cp_ledger_median(&t);
        v[j].avg_ns = v[j].timed ? v[j].total_ns / v[j].timed : 0;
        free(hist[j]);
    }
    free(hist);
    qsort(v, n, sizeof *v, cp_st_api_cmp);
    *out = v;
    return n;
fail:
    for (size_t j = 0; j < n; j++)
        free(hist[j]);
    free(hist);
    free(v);
    return 0;
}

/* The program p ran: the script of a Python process ("train.py"), which
 * names it better than "python3", else the executable's file name. */
static const char *cp_st_prog(const cp_proc *p, char *buf, size_t cap)
{
    const char *name = p->exe ? cp_base_name(p->exe) : "?";
    const char *sp = p->cmdline ? strchr(p->cmdline, ' ') : NULL;
    if (strncmp(name, "python", 6) == 0 && sp && sp[1] && sp[1] != '-') {
        const char *arg = sp + 1, *end = strchr(arg, ' ');
        size_t l = end ? (size_t)(end - arg) : strlen(arg);
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%.*s", (int)(l < 255 ? l : 255), arg);
        name = cp_base_name(tmp);
        snprintf(buf, cap, "%s", name);
        return buf;
    }
    snprintf(buf, cap, "%s", name);
    return buf;
}

const char *cp_stats_proc_key(const cp_report *rep, const cp_proc *p, char *buf, size_t cap)
{
    if (p->id.rank >= 0) {
        snprintf(buf, cap, "rank %ld", p->id.rank);
        return buf;
    }
    char name[256], other[256];
    cp_st_prog(p, name, sizeof name);
    int k = 1;
    for (size_t i = 0; i < rep->n_procs && rep->procs[i] != p; i++)
        if (rep->procs[i]->id.rank < 0 &&
            strcmp(cp_st_prog(rep->procs[i], other, sizeof other), name) == 0)
            k++;
    snprintf(buf, cap, "%s#%d", name, k);
    return buf;
}

void cp_stats_fields(cp_jb *b, const void *base, const cp_jfield *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, (const char *)base + f[i].off, sizeof v);
        cp_jb_ku(b, f[i].key, v);
    }
}

const char *cp_stats_label(cp_proc *p, uint64_t stack)
{
    return cp_site_label(&p->stacks, stack);
}

int cp_stats_device_used(const cp_proc *p, int d)
{
    if (d < 0 || d >= CP_MAX_DEV)
        return 0;
    if (p->mem[d].n_alloc || p->mem[d].peak_total)
        return 1;
    return p->ledger && p->ledger->dev[d].seen;
}
