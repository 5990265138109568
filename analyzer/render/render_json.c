/*
 * render_json.c - the report as JSON, schema "cuprobe-report" version 1
 * (docs/report.md).  Deterministic for a given trace: no wall-clock times,
 * no addresses of the analyzer, sorted findings and sites.
 */
#include <stdio.h>
#include <string.h>

#include "cp_path.h"
#include "cp_run.h"
#include "render.h"

#define CP_JSON_SCHEMA_VERSION 1

void cp_frames_json(cp_jb *b, cp_proc *p, uint64_t stack)
{
    const cp_stack *st = cp_stacks_get(&p->stacks, stack);
    cp_jb_key(b, "python");
    cp_jb_open(b, '[');
    for (uint32_t i = 0; st && i < st->n_py; i++) {
        const cp_pyframe *f = cp_map_get(&p->stacks.pyframes, st->py[i]);
        if (!f)
            continue;
        cp_jb_open(b, '{');
        cp_jb_ks(b, "file", f->file);
        cp_jb_ku(b, "line", f->line);
        cp_jb_ks(b, "function", f->func);
        cp_jb_kb(b, "user", f->user);
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    cp_jb_key(b, "native");
    cp_jb_open(b, '[');
    for (uint32_t i = 0; st && i < st->n_native; i++) {
        cp_symres r;
        cp_sym_native(&p->stacks, &st->native[i], &r);
        cp_jb_open(b, '{');
        cp_jb_ks(b, "function", r.func);
        cp_jb_ks(b, "file", r.file);
        if (r.file)
            cp_jb_ku(b, "line", r.line);
        else
            cp_jb_ks(b, "line", NULL);
        cp_jb_ks(b, "module", r.module ? cp_base_name(r.module) : NULL);
        cp_jb_ku(b, "offset", r.offset);
        cp_jb_kb(b, "internal", st->native[i].mod &&
                                    p->stacks.mods[st->native[i].mod - 1].mclass ==
                                        CP_MODC_INTERNAL);
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
}

static void cp_proc_json(cp_jb *b, const cp_proc *p)
{
    cp_jb_open(b, '{');
    cp_jb_ki(b, "index", p->index);
    cp_jb_ks(b, "trace", cp_base_name(p->file));
    cp_jb_ku(b, "pid", p->pid);
    cp_jb_ku(b, "ppid", p->ppid);
    cp_jb_ks(b, "exe", p->exe);
    cp_jb_ks(b, "cmdline", p->cmdline);
    cp_jb_ks(b, "host", p->host);
    cp_jb_key(b, "run");
    cp_jb_open(b, '{');
    cp_jb_ki(b, "rank", p->id.rank);
    cp_jb_ki(b, "local_rank", p->id.local_rank);
    cp_jb_ki(b, "world_size", p->id.world_size);
    cp_jb_ki(b, "local_world_size", p->id.local_world_size);
    cp_jb_ki(b, "group_rank", p->id.group_rank);
    cp_jb_ks(b, "rank_variable", p->id.rank_var);
    cp_jb_kb(b, "root", p->root);
    cp_jb_ki(b, "forked_image", p->forked_image);
    cp_jb_ki(b, "parent", p->parent ? p->parent->index : -1);
    cp_jb_ki(b, "exec_into", p->next_image ? p->next_image->index : -1);
    cp_jb_kb(b, "exec_only", p->exec_only);
    cp_jb_kb(b, "used_gpu", p->used_gpu);
    cp_jb_ki(b, "main_device", p->main_dev);
    cp_jb_key(b, "gpus");
    cp_jb_open(b, '[');
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        char u[64];
        if (cp_proc_dev_used(p, d)) {
            cp_jb_elem(b);
            cp_jb_str(b, *cp_dev_uuid(p, d, u, sizeof u) ? u : NULL);
        }
    }
    cp_jb_close(b, ']');
    cp_jb_close(b, '}');
    cp_jb_key(b, "trace_status");
    cp_jb_open(b, '{');
    cp_jb_kb(b, "complete", p->complete);
    cp_jb_kb(b, "truncated", p->truncated);
    cp_jb_kb(b, "killed", p->killed);
    cp_jb_ks(b, "error", p->error);
    cp_jb_ks(b, "end_reason", p->complete ? cp_end_reason_name(p->end_reason) : NULL);
    if (p->complete)
        cp_jb_ki(b, "exit_status", p->end_status);
    else
        cp_jb_ks(b, "exit_status", NULL);
    cp_jb_ku(b, "records", p->records);
    cp_jb_ku(b, "lost", p->lost);
    cp_jb_ku(b, "signal", p->signo);
    if (p->win_cut)
        /* Only when a window ended before the trace did: its end unread. */
        cp_jb_kb(b, "window_cut", 1);
    if (p->reaped) {
        /* Only for a trace with no END whose end `cuprobe run` saw. */
        cp_jb_key(b, "reaped");
        cp_jb_open(b, '{');
        if (p->reaped_signo)
            cp_jb_ki(b, "signal", p->reaped_signo);
        else
            cp_jb_ki(b, "exit_status", p->reaped_code);
        cp_jb_close(b, '}');
    }
    if (p->nospace_ts) {
        /* Only when the shim stopped writing at a full file system. */
        cp_jb_key(b, "write_stopped");
        cp_jb_open(b, '{');
        cp_jb_ks(b, "errno", p->nospace_err == 122 ? "EDQUOT" : "ENOSPC");
        cp_jb_ku(b, "t_ns", p->nospace_ts > p->t0 ? p->nospace_ts - p->t0 : 0);
        cp_jb_ku(b, "records_dropped", p->nospace_records);
        cp_jb_ku(b, "bytes_dropped", p->nospace_bytes);
        cp_jb_close(b, '}');
    }
    /* Only when the program took the trace's descriptor (FD_LOST). */
    if (p->fdlost_ts) {
        cp_jb_ks(b, "fd_lost", p->fdlost_how == 1 ? "closed" : "replaced");
        cp_jb_ku(b, "fd_lost_t_ns", p->fdlost_ts > p->t0 ? p->fdlost_ts - p->t0 : 0);
    }
    cp_jb_close(b, '}');
    cp_jb_key(b, "environment");
    cp_jb_open(b, '{');
    cp_env_json(b, p);
    cp_jb_close(b, '}');
    cp_jb_key(b, "memory");
    cp_jb_open(b, '[');
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        const cp_devmem *m = &p->mem[d];
        if (!m->n_alloc && !m->has_ctx && !m->held_total)
            continue;
        cp_jb_open(b, '{');
        cp_jb_ki(b, "ordinal", d);
        cp_jb_kb(b, "context", m->has_ctx);
        cp_jb_ku(b, "allocations", m->n_alloc);
        cp_jb_ku(b, "allocated_bytes", m->alloc_bytes);
        cp_jb_ku(b, "peak_bytes", m->peak_total);
        cp_jb_ku(b, "held_at_end_bytes", m->held_total);
        cp_jb_ku(b, "largest_request_bytes", m->max_request);
        cp_jb_ku(b, "vmm_held_bytes", m->held[CP_HOLD_VMM]);
        cp_jb_ku(b, "vmm_mapped_bytes", m->vmm_mapped);
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    cp_jb_ku(b, "vmm_reserved_bytes", p->vmm_reserved);
    cp_jb_ku(b, "host_pinned_bytes", p->host_pinned);
    /* The shim's last host memory sample (HOSTMEM), null in a trace
     * without one. */
    cp_jb_key(b, "host_memory");
    if (p->hm_n) {
        cp_jb_open(b, '{');
        cp_jb_ku(b, "samples", p->hm_n);
        cp_jb_ku(b, "t_ns", p->hm_ts > p->t0 ? p->hm_ts - p->t0 : 0);
        cp_jb_ku(b, "rss_bytes", p->hm_rss);
        cp_jb_ku(b, "rss_shared_bytes", p->hm_rss_shared);
        cp_jb_ku(b, "pinned_bytes", p->hm_pinned);
        cp_jb_ku(b, "mem_available_bytes", p->hm_avail);
        cp_jb_ku(b, "mem_total_bytes", p->hm_mem_total);
        cp_jb_ku(b, "swap_total_bytes", p->hm_swap_total);
        cp_jb_ku(b, "cgroup_usage_bytes", p->hm_cg_usage);
        cp_jb_ku(b, "cgroup_limit_bytes", p->hm_cg_limit);
        cp_jb_ks(b, "cgroup", p->hm_cg_path);
        cp_jb_ku(b, "peak_rss_bytes", p->hm_peak_rss);
        cp_jb_ku(b, "peak_rss_t_ns", p->hm_peak_ts > p->t0 ? p->hm_peak_ts - p->t0 : 0);
        cp_jb_close(b, '}');
    } else {
        cp_jb_str(b, NULL);
    }
    cp_jb_close(b, '}');
}

static void cp_finding_json(cp_jb *b, cp_finding *f)
{
    cp_jb_open(b, '{');
    cp_jb_ks(b, "check", f->check->id);
    cp_jb_ks(b, "severity", cp_sev_name(f->sev));
    if (f->proc) {
        cp_jb_ki(b, "process", f->proc->index);
        cp_jb_ku(b, "pid", f->proc->pid);
        cp_jb_ki(b, "rank", f->proc->id.rank);
        cp_jb_ks(b, "host", f->proc->host);
        /* Identical findings of other processes folded into this one. */
        cp_jb_key(b, "also");
        cp_jb_open(b, '[');
        for (size_t i = 0; i < f->n_more; i++) {
            cp_jb_open(b, '{');
            cp_jb_ki(b, "process", f->more[i]->index);
            cp_jb_ku(b, "pid", f->more[i]->pid);
            cp_jb_ki(b, "rank", f->more[i]->id.rank);
            cp_jb_ks(b, "host", f->more[i]->host);
            cp_jb_ku(b, "count", f->more_num[i].count);
            cp_jb_ku(b, "bytes", f->more_num[i].bytes);
            cp_jb_ku(b, "time_ns", f->more_num[i].ns);
            cp_jb_close(b, '}');
        }
        cp_jb_close(b, ']');
    } else {
        cp_jb_ks(b, "process", NULL);
        cp_jb_ks(b, "pid", NULL);
    }
    cp_jb_ks(b, "title", f->title);
    cp_jb_ks(b, "explanation", cp_finding_why(f));
    cp_jb_ks(b, "fix", cp_finding_fix(f));
    cp_jb_ku(b, "count", f->count);
    cp_jb_ku(b, "bytes", f->bytes);
    cp_jb_ku(b, "time_ns", f->ns);
    cp_jb_key(b, "lines");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < f->n_lines; i++) {
        cp_jb_elem(b);
        cp_jb_str(b, f->lines[i]);
    }
    cp_jb_close(b, ']');
    cp_jb_key(b, "details");
    cp_jb_open(b, '{');
    if (f->details.s)
        cp_jb_raw(b, f->details.s);
    cp_jb_close(b, '}');
    cp_jb_key(b, "sites");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < f->n_sites; i++) {
        cp_site *s = &f->sites[i];
        cp_jb_open(b, '{');
        cp_jb_ks(b, "site", s->label);
        cp_jb_ku(b, "count", s->count);
        cp_jb_ku(b, "bytes", s->bytes);
        cp_jb_ku(b, "time_ns", s->ns);
        cp_jb_ks(b, "note", s->note);
        cp_frames_json(b, s->proc, s->stack);
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    cp_jb_close(b, '}');
}

void cp_window_json(cp_jb *b, const cp_report *rep)
{
    if (!rep->windowed)
        return;
    cp_jb_key(b, "window");
    cp_jb_open(b, '{');
    /* Integers, as every number of ours: `cuprobe diff` reads them strictly. */
    cp_jb_ku(b, "since_ns", rep->window.since);
    cp_jb_key(b, "until_ns");
    if (rep->window.until == CP_WINDOW_END)
        cp_jb_raw(b, "null");
    else
        cp_jb_u64(b, rep->window.until);
    cp_jb_ks(b, "from", "earliest process start");
    cp_jb_close(b, '}');
}

void cp_out_json(FILE *o, cp_report *rep, const cp_out_opts *opt)
{
    cp_jb b = { 0 };
    size_t n_sev[3] = { 0, 0, 0 };
    int nogpu = 0;
    (void)opt;
    for (size_t i = 0; i < rep->n; i++) {
        n_sev[rep->f[i]->sev]++;
        nogpu |= rep->f[i]->top;
    }
    cp_jb_open(&b, '{');
    cp_jb_ks(&b, "schema", "cuprobe-report");
    cp_jb_ku(&b, "version", CP_JSON_SCHEMA_VERSION);
    cp_jb_key(&b, "summary");
    cp_jb_open(&b, '{');
    cp_jb_ku(&b, "traces", rep->n_procs);
    cp_jb_ku(&b, "errors", n_sev[CP_SEV_ERROR]);
    cp_jb_ku(&b, "warnings", n_sev[CP_SEV_WARNING]);
    cp_jb_ku(&b, "infos", n_sev[CP_SEV_INFO]);
    cp_jb_kb(&b, "no_gpu_used", nogpu);
    cp_jb_close(&b, '}');
    cp_window_json(&b, rep);
    cp_jb_key(&b, "processes");
    cp_jb_open(&b, '[');
    for (size_t i = 0; i < rep->n_procs; i++)
        cp_proc_json(&b, rep->procs[i]);
    cp_jb_close(&b, ']');
    cp_jb_key(&b, "findings");
    cp_jb_open(&b, '[');
    for (size_t i = 0; i < rep->n; i++)
        cp_finding_json(&b, rep->f[i]);
    cp_jb_close(&b, ']');
    cp_jb_close(&b, '}');
    if (b.s)
        fprintf(o, "%s\n", b.s);
    cp_jb_free(&b);
}
