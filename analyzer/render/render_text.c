/*
 * render_text.c - the report for people: per process the trace status and
 * environment, then the findings, most severe first, each with its sites
 * (the heaviest first), the call stack of its top site, why it matters and
 * the fix (once per check).
 */
#include <stdio.h>
#include <string.h>

#include "cp_path.h"
#include "cp_run.h"
#include "cp_items.h"
#include "render.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"

static const char *cp_sev_color(int sev)
{
    return sev == CP_SEV_ERROR ? "\033[1;31m" : sev == CP_SEV_WARNING ? "\033[1;33m" : "\033[36m";
}

static const char *cp_c(const cp_out_opts *o, const char *code)
{
    return o->color ? code : "";
}

static void cp_trace_status(FILE *o, const cp_proc *p)
{
    fprintf(o, "  trace: %s, ", p->file);
    if (p->nospace_ts) {
        char b1[32];
        uint64_t at = p->nospace_ts > p->t0 ? p->nospace_ts - p->t0 : 0;
        fprintf(o, "writing stopped at +%s: %s, %llu records since the last flush lost; ",
                cp_fmt_ns(at, b1, sizeof b1),
                p->nospace_err == 122 ? "the disk quota was exceeded (EDQUOT)"
                                      : "the file system was full (ENOSPC)",
                (unsigned long long)p->nospace_records);
        if (p->complete)
            fprintf(o, "the process went on untraced and ended (%s, status %lld)",
                    cp_end_reason_name(p->end_reason), (long long)p->end_status);
        else
            fprintf(o, "the process went on untraced, its exit was not recorded");
        if (p->error)
            fprintf(o, "; DAMAGED after that: %s", p->error);
    } else if (p->reaped && !p->reaped_signo)
        fprintf(o, "exited with status %d without running exit handlers (no END record; "
                   "whole up to its last flush)", p->reaped_code);
    else if (p->killed && p->reaped)
        fprintf(o, "killed by signal %d (SIG%s) (no END record; whole up to its last flush)",
                p->reaped_signo, sigabbrev_np(p->reaped_signo) ? sigabbrev_np(p->reaped_signo)
                                                               : "?");
    else if (p->killed)
        fprintf(o, "killed (no END record; whole up to its last flush)");
    else if (p->error)
        fprintf(o, "%s: %s", p->truncated ? "TRUNCATED" : "DAMAGED", p->error);
    else if (p->win_cut)
        fprintf(o, "read to the window's end");
    else if (p->complete)
        fprintf(o, "complete (%s, status %lld)", cp_end_reason_name(p->end_reason),
                (long long)p->end_status);
    else
        fprintf(o, "incomplete");
    fprintf(o, ", %llu records", (unsigned long long)p->records);
    if (p->lost)
        fprintf(o, ", %llu LOST by the recorder", (unsigned long long)p->lost);
    fputc('\n', o);
    if (p->error && p->truncated && !p->killed)
        fprintf(o, "  note: the trace stops early (the process was killed or crashed); what "
                   "follows covers what was recorded, and memory live at the cut is not "
                   "called a leak.\n");
    if (p->signo)
        fprintf(o, "  note: the process received fatal signal %llu.\n",
                (unsigned long long)p->signo);
    if (p->fdlost_ts) {
        char b1[32];
        fprintf(o, "  note: the program %s cuprobe's file descriptor at +%s%s; cuprobe "
                   "opened its trace again and went on, nothing was lost.\n",
                p->fdlost_how == 1 ? "closed" : "put another file at",
                cp_fmt_ns(p->fdlost_ts > p->t0 ? p->fdlost_ts - p->t0 : 0, b1, sizeof b1),
                p->fdlost_n > 1 ? " (and again later)" : "");
    }
}

/* Which frame the site label (cp_site_label) was made from, so that the
 * stack under it does not repeat it: *py_at is a Python frame index, else
 * *nat_at a native one (-1 for none). */
static void cp_label_frame(const cp_proc *p, const cp_stack *st, int all_frames, int *py_at,
                           int *nat_at)
{
    *py_at = *nat_at = -1;
    int inner = -1;
    for (uint32_t i = 0; i < st->n_py; i++) {
        const cp_pyframe *f = cp_map_get(&p->stacks.pyframes, st->py[i]);
        if (!f)
            continue;
        if (inner < 0)
            inner = (int)i;
        if (f->user || all_frames) {
            *py_at = (int)i;
            return;
        }
    }
    if (inner >= 0) {
        *py_at = inner;
        return;
    }
    for (uint32_t i = 0; i < st->n_native; i++) {
        const cp_frame *f = &st->native[i];
        if (all_frames || (f->mod && p->stacks.mods[f->mod - 1].mclass == CP_MODC_USER)) {
            *nat_at = (int)i;
            return;
        }
    }
    if (st->n_native)
        *nat_at = 0;
}

/* Python frames of the user, then native frames outside internal modules
 * (at most 8 and 6); with --all-frames every frame; the frame the site line
 * already names is not repeated. */
static void cp_stack_text(FILE *o, cp_proc *p, uint64_t id, const cp_out_opts *opt,
                          int all_frames)
{
    const cp_stack *st = cp_stacks_get(&p->stacks, id);
    if (!st)
        return;
    int shown = 0, hidden = 0, py_at, nat_at;
    cp_label_frame(p, st, all_frames, &py_at, &nat_at);
    for (uint32_t i = 0; i < st->n_py; i++) {
        const cp_pyframe *f = cp_map_get(&p->stacks.pyframes, st->py[i]);
        if (!f || (int)i == py_at)
            continue;
        if (!f->user && !all_frames) {
            hidden++;
            continue;
        }
        if (shown++ < 8 || all_frames)
            fprintf(o, "        %s%s:%llu%s in %s\n", cp_c(opt, C_BOLD), f->file,
                    (unsigned long long)f->line, cp_c(opt, C_RESET), f->func);
    }
    int nat = 0;
    for (uint32_t i = 0; i < st->n_native && (nat < 6 || all_frames); i++) {
        const cp_frame *fr = &st->native[i];
        if ((int)i == nat_at)
            continue;
        if (!all_frames && fr->mod && p->stacks.mods[fr->mod - 1].mclass == CP_MODC_INTERNAL) {
            hidden++;
            continue;
        }
        cp_symres r;
        cp_sym_native(&p->stacks, fr, &r);
        if (!all_frames && r.func && strcmp(r.func, "_start") == 0) {   /* the C runtime's entry */
            hidden++;
            continue;
        }
        nat++;
        if (r.func && r.file)
            fprintf(o, "        %s%s%s (%s:%u)\n", cp_c(opt, C_DIM), r.func, cp_c(opt, C_RESET),
                    r.file, r.line);
        else if (r.func)
            fprintf(o, "        %s%s%s (%s)\n", cp_c(opt, C_DIM), r.func, cp_c(opt, C_RESET),
                    r.module ? cp_base_name(r.module) : "?");
        else
            fprintf(o, "        %s%s+0x%llx%s\n", cp_c(opt, C_DIM),
                    r.module ? cp_base_name(r.module) : "?", (unsigned long long)r.offset,
                    cp_c(opt, C_RESET));
    }
    if (hidden)
        fprintf(o, "        (%d library/internal frame%s not shown)\n", hidden,
                hidden == 1 ? "" : "s");
}

/* The finding's own lines; its items (cp_items.h) only with --verbose. */
static void cp_lines_text(FILE *o, const cp_finding *f, const cp_out_opts *opt)
{
    for (size_t i = 0; i < f->n_lines; i++)
        if (opt->verbose || !cp_item_line(f->lines[i]))
            fprintf(o, "  %s\n", f->lines[i]);
}

static void cp_finding_text(FILE *o, cp_report *rep, cp_finding *f, const cp_out_opts *opt,
                            int explain, int show_fix)
{
    char b1[32], b2[32];
    fprintf(o, "\n%s%-7s%s %s[%s]%s %s%s%s\n", cp_c(opt, cp_sev_color(f->sev)),
            cp_sev_name(f->sev), cp_c(opt, C_RESET), cp_c(opt, C_DIM), f->check->id,
            cp_c(opt, C_RESET), cp_c(opt, C_BOLD), f->title ? f->title : "", cp_c(opt, C_RESET));
    if (f->proc && (rep->n_procs > 1 || cp_run_is_rank(f->proc))) {
        char who[1024];
        cp_proc *one[1] = { f->proc };
        if (f->n_more) {
            cp_proc *ps[257];
            size_t n = 0;
            ps[n++] = f->proc;
            for (size_t i = 0; i < f->n_more && n < 257; i++)
                ps[n++] = f->more[i];
            fprintf(o, "  %s%s\n", cp_run_who_many(ps, n, who, sizeof who),
                    f->n_more >= 256 ? " and more" : "");
        } else {
            fprintf(o, "  %s\n", cp_run_who_many(one, 1, who, sizeof who));
        }
    }
    if (!f->check->sites_first)
        cp_lines_text(o, f, opt);
    if (f->n_sites) {
        fprintf(o, "  sites:\n");
        size_t n = f->n_sites < (size_t)opt->max_sites ? f->n_sites : (size_t)opt->max_sites;
        for (size_t i = 0; i < n; i++) {
            const cp_site *s = &f->sites[i];
            fprintf(o, "    %6llux", (unsigned long long)s->count);
            if (s->bytes)
                fprintf(o, "  %10s", cp_fmt_bytes(s->bytes, b1, sizeof b1));
            if (s->ns)
                fprintf(o, "  %9s", cp_fmt_ns(s->ns, b2, sizeof b2));
            fprintf(o, "  %s", s->label);
            if (s->note)
                fprintf(o, "  %s[%s]%s", cp_c(opt, C_DIM), s->note, cp_c(opt, C_RESET));
            fputc('\n', o);
            if (i == 0)
                cp_stack_text(o, s->proc, s->stack, opt, rep->all_frames);
        }
        if (f->n_sites > n)
            fprintf(o, "    ... %zu more site%s\n", f->n_sites - n,
                    f->n_sites - n == 1 ? "" : "s");
    }
    if (f->check->sites_first)
        cp_lines_text(o, f, opt);
    if (opt->brief)
        return;
    if (explain)
        fprintf(o, "  %sWhy:%s %s\n", cp_c(opt, C_BOLD), cp_c(opt, C_RESET), cp_finding_why(f));
    if (show_fix)
        fprintf(o, "  %sFix:%s %s\n", cp_c(opt, C_BOLD), cp_c(opt, C_RESET), cp_finding_fix(f));
}

void cp_out_text(FILE *o, cp_report *rep, const cp_out_opts *opt)
{
    size_t n_sev[3] = { 0, 0, 0 };
    for (size_t i = 0; i < rep->n; i++)
        n_sev[rep->f[i]->sev]++;
    fprintf(o, "%scuprobe report%s: %zu trace%s\n", cp_c(opt, C_BOLD), cp_c(opt, C_RESET),
            rep->n_procs, rep->n_procs == 1 ? "" : "s");
    if (rep->windowed) {
        char w[96];
        fprintf(o, "window: %s (from the earliest process start); memory held when it "
                   "opens is counted as held, not as allocated in it\n",
                cp_window_say(&rep->window, w, sizeof w));
    }
    /* Statements that the GPU was not used at all come before anything. */
    for (size_t i = 0; i < rep->n; i++)
        if (rep->f[i]->top)
            fprintf(o, "%s%s%s\n", cp_c(opt, cp_sev_color(rep->f[i]->sev)), rep->f[i]->title,
                    cp_c(opt, C_RESET));
    for (size_t i = 0; i < rep->n_procs; i++) {
        const cp_proc *p = rep->procs[i];
        char who[256];
        fprintf(o, "\n%s== %s, parent %llu ==%s\n", cp_c(opt, C_BOLD),
                cp_run_who(p, who, sizeof who), (unsigned long long)p->ppid,
                cp_c(opt, C_RESET));
        if (p->exec_only && p->next_image)
            fprintf(o, "  exec'd into the next image of pid %llu without using CUDA: "
                    "joined to it\n", (unsigned long long)p->pid);
        fprintf(o, "  command: %s\n", p->cmdline && *p->cmdline ? p->cmdline
                                                                : (p->exe ? p->exe : "?"));
        cp_trace_status(o, p);
        cp_env_text(o, p, opt);
    }
    fprintf(o, "\n%sFindings: %zu error%s, %zu warning%s, %zu info%s\n", cp_c(opt, C_BOLD),
            n_sev[2], n_sev[2] == 1 ? "" : "s", n_sev[1], n_sev[1] == 1 ? "" : "s", n_sev[0],
            cp_c(opt, C_RESET));
    for (size_t i = 0; i < rep->n; i++) {
        /* The why and the fix once per check, again whenever they differ
         * (the processes of a run may use different frameworks; a helper
         * process's finding has its own). */
        int new_why = 1, new_fix = 1;
        for (size_t j = 0; j < i; j++)
            if (rep->f[j]->check == rep->f[i]->check) {
                if (strcmp(cp_finding_why(rep->f[j]), cp_finding_why(rep->f[i])) == 0)
                    new_why = 0;
                if (strcmp(cp_finding_fix(rep->f[j]), cp_finding_fix(rep->f[i])) == 0)
                    new_fix = 0;
            }
        cp_finding_text(o, rep, rep->f[i], opt, new_why, new_fix);
    }
    int unread = 0;
    for (size_t i = 0; i < rep->n_procs; i++)
        unread |= rep->procs[i]->error != NULL;
    if (!rep->n)
        fprintf(o, unread ? "No findings in what could be read.\n" : "No problems found.\n");
    else if (opt->brief)
        fprintf(o, "\n(--brief: each check's Why and Fix are in the report without --brief "
                   "and in docs/report.md)\n");
}
