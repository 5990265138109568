/*
 * cp_stats_tables.c - the tables of `cuprobe stats` (cp_stats.h), each
 * built once for its text and CSV forms.  The site tables list, per process
 * and device, the top sites by what the table ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_stats.h"
#include "render.h"

typedef struct cp_st_def {
    const char *id, *title, *align;
    int ncol;
    const char *head[9];
} cp_st_def;

static const cp_st_def cp_st_defs[CP_ST_N] = {
    [CP_ST_API] = { "api", "Driver calls by API (time in the driver; launches and frees are "
                    "counted, not timed)", "lrrrrrrrr", 9,
                    { "API", "Calls", "Errors", "Timed", "Total", "Average", "Median", "Min",
                      "Max" } },
    [CP_ST_DEVICES] = { "devices", "Device memory and blocking copies by process and GPU",
                        "llrrrrrr", 8,
                        { "Process", "GPU", "Peak held", "Peak at", "Allocations", "Frees",
                          "Blocked in sync copies", "Sync copies" } },
    [CP_ST_COPIES] = { "copies", "Copies by direction and class", "llllrr", 6,
                       { "Process", "GPU", "Direction", "Class", "Copies", "Bytes" } },
    [CP_ST_PEAK] = { "peak", "Peak consumers: device memory held at each device's peak, by "
                     "call site", "llrrrl", 6,
                     { "Process", "GPU", "Held at peak", "Share", "Allocations", "Site" } },
    [CP_ST_ALLOCS] = { "allocations", "Most allocations, by call site", "llrrrl", 6,
                       { "Process", "GPU", "Allocations", "Allocated", "Temporary", "Site" } },
    [CP_ST_TEMP] = { "temporary", "Temporary allocations (freed with no other allocation or "
                     "free in between), by call site", "llrrrl", 6,
                     { "Process", "GPU", "Temporary", "Of its allocations", "Bytes", "Site" } },
    [CP_ST_OOM] = { "oom", "Device memory held at each out-of-memory error, by call site",
                    "llrrrl", 6,
                    { "Process", "GPU", "OOM at", "Requested", "Held", "Site" } },
};

const char *cp_stats_table_id(int t)
{
    return t >= 0 && t < CP_ST_N ? cp_st_defs[t].id : "?";
}

static void cp_st_secs(cp_tab *tab, uint64_t ts, uint64_t t0)
{
    char b[32], r[32];
    uint64_t d = ts > t0 ? ts - t0 : 0;
    snprintf(b, sizeof b, "%.3f s", (double)d / 1e9);
    snprintf(r, sizeof r, "%llu", (unsigned long long)d);
    cp_tab_cell(tab, b, r);
}

static void cp_st_pct(cp_tab *tab, uint64_t part, uint64_t whole)
{
    char b[32];
    if (!whole) {
        cp_tab_cell(tab, "-", "");
        return;
    }
    snprintf(b, sizeof b, "%.1f%%", 100.0 * (double)part / (double)whole);
    cp_tab_cell(tab, b, NULL);
}

/* The two cells every per-process row starts with. */
static void cp_st_who(cp_tab *tab, const cp_proc *p, int d)
{
    char lab[256], g[16];
    cp_tab_row(tab);
    cp_tab_cell(tab, cp_proc_label(p, lab, sizeof lab), NULL);
    snprintf(g, sizeof g, "%d", d);
    cp_tab_cell(tab, g, NULL);
}

static void cp_st_apis(cp_tab *tab, const cp_report *rep)
{
    cp_st_api *v;
    size_t n = cp_stats_apis(rep, &v);
    for (size_t i = 0; i < n; i++) {
        const cp_st_api *a = &v[i];
        int none = !a->timed;
        cp_tab_row(tab);
        cp_tab_cell(tab, a->name, NULL);
        cp_tab_u(tab, a->calls);
        cp_tab_u(tab, a->errors);
        cp_tab_u(tab, a->timed);
        cp_tab_ns(tab, a->total_ns, none);
        cp_tab_ns(tab, a->timed ? a->total_ns / a->timed : 0, none);
        cp_tab_ns(tab, a->median_ns, none);
        cp_tab_ns(tab, a->min_ns, none);
        cp_tab_ns(tab, a->max_ns, none);
    }
    free(v);
}

static void cp_st_device(cp_tab *tab, const cp_proc *p, int d)
{
    const cp_lg_dev *v = p->ledger ? &p->ledger->dev[d] : NULL;
    const cp_devmem *m = &p->mem[d];
    cp_st_who(tab, p, d);
    cp_tab_bytes(tab, m->peak_total, 0);
    if (m->peak_total)
        cp_st_secs(tab, m->peak_ts, p->t0);
    else
        cp_tab_cell(tab, "-", "");
    cp_tab_u(tab, m->n_alloc);
    cp_tab_u(tab, m->n_free);
    cp_tab_ns(tab, v ? v->blocked_ns : 0, !v);
    if (v)
        cp_tab_u(tab, v->n_blocking);
    else
        cp_tab_cell(tab, "-", "");
}

static void cp_st_copies(cp_tab *tab, const cp_proc *p, int d)
{
    const cp_lg_dev *v = &p->ledger->dev[d];
    for (int dir = 0; dir < CP_LG_DIR_N; dir++)
        for (int c = 0; c < CP_LG_CLS_N; c++) {
            if (!v->copies[dir][c])
                continue;
            cp_st_who(tab, p, d);
            cp_tab_cell(tab, cp_lg_dir_name(dir), NULL);
            cp_tab_cell(tab, cp_lg_cls_name(c), NULL);
            cp_tab_u(tab, v->copies[dir][c]);
            cp_tab_bytes(tab, v->copy_bytes[dir][c], 0);
        }
}

/* The top sites of p's device d by key (cp_ledger_rows). */
static void cp_st_sites(cp_tab *tab, cp_proc *p, int d, int key, int top)
{
    cp_lg_row *v;
    size_t n = cp_ledger_rows(p, d, key, (size_t)top, &v);
    for (size_t i = 0; i < n; i++) {
        const cp_lg_row *r = &v[i];
        cp_st_who(tab, p, d);
        if (key == 0) {
            cp_tab_bytes(tab, r->at_peak, 0);
            cp_st_pct(tab, r->at_peak, p->ledger->dev[d].peak);
            cp_tab_u(tab, r->n_alloc);
        } else if (key == 1) {
            cp_tab_u(tab, r->n_alloc);
            cp_tab_bytes(tab, r->alloc_bytes, 0);
            cp_tab_u(tab, r->n_temp);
        } else {
            cp_tab_u(tab, r->n_temp);
            cp_st_pct(tab, r->n_temp, r->n_alloc);
            cp_tab_bytes(tab, r->temp_bytes, 0);
        }
        cp_tab_cell(tab, r->label, NULL);
    }
    free(v);
}

static void cp_st_ooms(cp_tab *tab, cp_proc *p, int top)
{
    const cp_ledger *lg = p->ledger;
    for (int i = 0; i < lg->n_oom; i++) {
        const cp_lg_oom *o = &lg->oom[i];
        for (int k = 0; k < o->n_top && k < top; k++) {
            cp_st_who(tab, p, o->dev);
            cp_st_secs(tab, o->ts, p->t0);
            cp_tab_bytes(tab, o->request, !o->request);
            cp_tab_bytes(tab, o->top[k].bytes, 0);
            cp_tab_cell(tab, cp_stats_label(p, o->top[k].stack), NULL);
        }
    }
}

void cp_stats_table(cp_tab *tab, int t, cp_report *rep, int top)
{
    const cp_st_def *def = &cp_st_defs[t];
    cp_tab_init(tab, def->id, def->title, def->ncol, def->head, def->align);
    if (t == CP_ST_API) {
        cp_st_apis(tab, rep);
        return;
    }
    for (size_t i = 0; i < rep->n_procs; i++) {
        cp_proc *p = rep->procs[i];
        if (t == CP_ST_OOM) {
            if (p->ledger)
                cp_st_ooms(tab, p, top);
            continue;
        }
        for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
            if (!cp_stats_device_used(p, d))
                continue;
            if (t == CP_ST_DEVICES)
                cp_st_device(tab, p, d);
            else if (!p->ledger)
                continue;
            else if (t == CP_ST_COPIES)
                cp_st_copies(tab, p, d);
            else
                cp_st_sites(tab, p, d, t == CP_ST_PEAK ? 0 : t == CP_ST_ALLOCS ? 1 : 2, top);
        }
    }
}
