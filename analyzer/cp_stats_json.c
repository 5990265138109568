/*
 * cp_stats_json.c - the "cuprobe-stats" document (docs/report.md): what
 * the tables of `cuprobe stats` hold, integers only, so that `cuprobe diff`
 * reads it back with the strict reader of summaries.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_stats.h"
#include "render.h"

#define CP_NF(f) (sizeof(f) / sizeof *(f))

static const cp_jfield cp_sj_api_f[] = {
    CP_JF(cp_st_api, "calls", calls), CP_JF(cp_st_api, "errors", errors),
    CP_JF(cp_st_api, "timed", timed), CP_JF(cp_st_api, "total_ns", total_ns),
    CP_JF(cp_st_api, "avg_ns", avg_ns), CP_JF(cp_st_api, "median_ns", median_ns),
    CP_JF(cp_st_api, "min_ns", min_ns), CP_JF(cp_st_api, "max_ns", max_ns),
};
static const cp_jfield cp_sj_row_f[] = {
    CP_JF(cp_lg_row, "bytes_at_peak", at_peak), CP_JF(cp_lg_row, "allocations", n_alloc),
    CP_JF(cp_lg_row, "allocated_bytes", alloc_bytes), CP_JF(cp_lg_row, "frees", n_free),
    CP_JF(cp_lg_row, "temporary", n_temp), CP_JF(cp_lg_row, "temporary_bytes", temp_bytes),
};
static const cp_jfield cp_sj_mem_f[] = {
    CP_JF(cp_devmem, "peak_bytes", peak_total), CP_JF(cp_devmem, "allocations", n_alloc),
    CP_JF(cp_devmem, "frees", n_free),
};
static const cp_jfield cp_sj_dev_f[] = {
    CP_JF(cp_lg_dev, "blocked_ns", blocked_ns), CP_JF(cp_lg_dev, "blocking_copies", n_blocking),
};
static const cp_jfield cp_sj_find_f[] = {
    CP_JF(cp_finding, "count", count), CP_JF(cp_finding, "bytes", bytes),
    CP_JF(cp_finding, "ns", ns),
};

static void cp_sj_apis(cp_jb *b, const cp_report *rep)
{
    cp_st_api *v;
    size_t n = cp_stats_apis(rep, &v);
    cp_jb_key(b, "apis");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < n; i++) {
        cp_jb_open(b, '{');
        cp_jb_ks(b, "name", v[i].name);
        cp_stats_fields(b, &v[i], cp_sj_api_f, CP_NF(cp_sj_api_f));
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    free(v);
}

static void cp_sj_row(cp_jb *b, const cp_lg_row *r)
{
    cp_jb_open(b, '{');
    cp_jb_ks(b, "site", r->label);
    cp_stats_fields(b, r, cp_sj_row_f, CP_NF(cp_sj_row_f));
    cp_jb_close(b, '}');
}

static void cp_sj_sites(cp_jb *b, cp_proc *p, int d, int top)
{
    static const char *const keys[3] = { "peak", "allocations", "temporary" };
    cp_jb_key(b, "sites");
    cp_jb_open(b, '{');
    for (int k = 0; k < 3; k++) {
        cp_lg_row *v;
        size_t n = cp_ledger_rows(p, d, k, (size_t)top, &v);
        cp_jb_key(b, keys[k]);
        cp_jb_open(b, '[');
        for (size_t i = 0; i < n; i++)
            cp_sj_row(b, &v[i]);
        cp_jb_close(b, ']');
        free(v);
    }
    cp_jb_close(b, '}');
}

static void cp_sj_device(cp_jb *b, cp_proc *p, int d, int top)
{
    const cp_devmem *m = &p->mem[d];
    const cp_lg_dev *v = p->ledger ? &p->ledger->dev[d] : NULL;
    cp_jb_open(b, '{');
    cp_jb_ki(b, "ordinal", d);
    cp_jb_ku(b, "total_bytes", p->dev[d].total_mem);
    cp_jb_ku(b, "peak_t_ns", m->peak_total && m->peak_ts > p->t0 ? m->peak_ts - p->t0 : 0);
    cp_stats_fields(b, m, cp_sj_mem_f, CP_NF(cp_sj_mem_f));
    if (v) {
        cp_stats_fields(b, v, cp_sj_dev_f, CP_NF(cp_sj_dev_f));
        cp_jb_key(b, "copies");
        cp_jb_open(b, '[');
        for (int dir = 0; dir < CP_LG_DIR_N; dir++)
            for (int c = 0; c < CP_LG_CLS_N; c++)
                if (v->copies[dir][c]) {
                    cp_jb_open(b, '{');
                    cp_jb_ks(b, "direction", cp_lg_dir_name(dir));
                    cp_jb_ks(b, "class", cp_lg_cls_name(c));
                    cp_jb_ku(b, "count", v->copies[dir][c]);
                    cp_jb_ku(b, "bytes", v->copy_bytes[dir][c]);
                    cp_jb_close(b, '}');
                }
        cp_jb_close(b, ']');
        cp_sj_sites(b, p, d, top);
    }
    cp_jb_close(b, '}');
}

static void cp_sj_ooms(cp_jb *b, cp_proc *p)
{
    const cp_ledger *lg = p->ledger;
    cp_jb_key(b, "ooms");
    cp_jb_open(b, '[');
    for (int i = 0; lg && i < lg->n_oom; i++) {
        const cp_lg_oom *o = &lg->oom[i];
        cp_jb_open(b, '{');
        cp_jb_ku(b, "t_ns", o->ts > p->t0 ? o->ts - p->t0 : 0);
        cp_jb_ki(b, "device", o->dev);
        cp_jb_ku(b, "request_bytes", o->request);
        cp_jb_key(b, "sites");
        cp_jb_open(b, '[');
        for (int k = 0; k < o->n_top; k++) {
            cp_jb_open(b, '{');
            cp_jb_ks(b, "site", cp_stats_label(p, o->top[k].stack));
            cp_jb_ku(b, "bytes", o->top[k].bytes);
            cp_jb_close(b, '}');
        }
        cp_jb_close(b, ']');
        cp_jb_ki(b, "segments", o->seg ? o->n_seg_all : -1);
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
}

static void cp_sj_findings(cp_jb *b, const cp_report *rep)
{
    cp_jb_key(b, "findings");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < rep->n; i++) {
        const cp_finding *f = rep->f[i];
        char key[256];
        cp_jb_open(b, '{');
        cp_jb_ks(b, "check", f->check->id);
        cp_jb_ks(b, "severity", cp_sev_name(f->sev));
        cp_jb_ks(b, "process", f->proc ? cp_stats_proc_key(rep, f->proc, key, sizeof key) : NULL);
        cp_jb_ks(b, "title", f->title);
        cp_jb_ks(b, "site", f->n_sites ? f->sites[0].label : NULL);
        cp_jb_ku(b, "site_bytes", f->n_sites ? f->sites[0].bytes : 0);
        cp_stats_fields(b, f, cp_sj_find_f, CP_NF(cp_sj_find_f));
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
}

void cp_stats_doc(cp_jb *b, cp_report *rep, int top, int findings)
{
    char lab[256], key[256];
    cp_jb_open(b, '{');
    cp_jb_ks(b, "schema", "cuprobe-stats");
    cp_jb_ki(b, "version", CP_STATS_VERSION);
    cp_window_json(b, rep);
    cp_sj_apis(b, rep);
    cp_jb_key(b, "processes");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < rep->n_procs; i++) {
        cp_proc *p = rep->procs[i];
        cp_jb_open(b, '{');
        cp_jb_ku(b, "pid", p->pid);
        cp_jb_ks(b, "key", cp_stats_proc_key(rep, p, key, sizeof key));
        cp_jb_ks(b, "label", cp_proc_label(p, lab, sizeof lab));
        cp_jb_ks(b, "file", p->file);
        cp_jb_kb(b, "complete", p->complete);
        cp_jb_key(b, "devices");
        cp_jb_open(b, '[');
        for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
            if (cp_stats_device_used(p, d))
                cp_sj_device(b, p, d, top);
        cp_jb_close(b, ']');
        cp_sj_ooms(b, p);
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    if (findings)
        cp_sj_findings(b, rep);
    cp_jb_close(b, '}');
}
