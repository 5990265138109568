/*
 * cp_export.c - `cuprobe export --perfetto FILE [TRACE|DIR]...`: one pass
 * over the traces through the report (so findings and the memory series
 * are the report's own), the exporter noting slow calls, OOMs and context
 * creations as the records go by (render_perfetto.c).  The file is written
 * under a temporary name and renamed once complete.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cp_export.h"
#include "cp_outfile.h"
#include "cp_opts.h"
#include "cp_report.h"
#include "render_perfetto.h"

static void cp_export_usage(FILE *o)
{
    fprintf(o,
            "usage: cuprobe export --perfetto FILE [OPTIONS] [TRACE|DIR]...\n"
            "  (no TRACE: the traces of the last `cuprobe run` in this directory)\n"
            "  --perfetto FILE     write the Trace Event Format (JSON) for ui.perfetto.dev\n"
            "                      and chrome://tracing: a track per process, memory\n"
            "                      counters per device, slow calls, OOMs, findings\n"
            "  --slow-us N         calls (copies, syncs, any driver call) of at least N\n"
            "                      microseconds become slices (default 100)\n"
            "  --no-progress       never draw the progress bar\n"
            "  --pid PID           only this process\n"
            "  --rank N            only the process of this rank (RANK, SLURM_PROCID...)\n"
            "Exit status: 0 ok, 2 usage error, unreadable trace or unwritable output.\n");
}

static int cp_export_write(const char *path, cp_pf *pf, cp_report *rep)
{
    char *tmp;
    FILE *f = cp_outfile_open(path, &tmp);
    if (!f)
        return -errno;
    return cp_outfile_commit(f, tmp, path, cp_pf_write(pf, f, rep));
}

int cp_export_main(int argc, char **argv)
{
    const char *out = NULL;
    long slow_us = 100;
    int progress = 1, opts = 1, n_in = 0;
    cp_filter filter = CP_FILTER_NONE;
    const cp_flag flags[] = { { "--no-progress", &progress, 0 } };
    char **in = calloc((size_t)argc, sizeof *in);
    if (!in)
        return 2;
    /* Options anywhere among the inputs; `--` ends them. */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int kind = cp_opt_classify(a, &opts, flags, sizeof flags / sizeof *flags), r;
        if (kind == CP_OPT_ARG) {
            in[n_in++] = argv[i];
        } else if (kind == CP_OPT_HELP) {
            cp_export_usage(stdout);
            free(in);
            return 0;
        } else if (kind == CP_OPT_TAKEN) {
            continue;
        } else if ((r = cp_filter_opt(&filter, "export", a, v)) != 0) {
            if (r < 0)
                goto usage;
            i++;
        } else if (strcmp(a, "--perfetto") == 0 && v) {
            out = argv[++i];
        } else if (strcmp(a, "--slow-us") == 0) {
            if (cp_opt_long("export", a, v, 0, 3600000000l, &slow_us) != 0)
                goto usage;
            i++;
        } else {
            fprintf(stderr, "export: %s '%s'\n",
                    strcmp(a, "--perfetto") == 0 ? "a file name must follow"
                                                 : "unknown option", a);
            goto usage;
        }
    }
    if (!out) {
        fprintf(stderr, "export: --perfetto FILE is required\n");
        goto usage;
    }
    char **paths;
    size_t n_paths;
    if (cp_report_inputs(in, n_in, "export", &paths, &n_paths) != 0) {
        free(in);
        return 2;
    }
    free(in);
    cp_pf *pf = cp_pf_new((uint64_t)slow_us * 1000);
    if (!pf) {
        fprintf(stderr, "export: out of memory\n");
        cp_report_inputs_free(paths, n_paths);
        return 2;
    }
    cp_report rep;
    int keep = filter.pid >= 0 || filter.rank >= 0;
    cp_collect_opts co = { .checks = 1, .ledger = 1, .timeline = 1, .progress = progress,
                           .symbolize = 1, .hook = cp_pf_rec, .hook_ctx = pf,
                           .filter = keep ? &filter : NULL };
    int bad = cp_report_collect_with(paths, n_paths, &co, &rep);
    int rc = bad < 0 ? -ENOMEM : 0;
    if (rc == 0 && keep && rep.n_procs == 0) {
        fprintf(stderr, "export: no process of these traces matches --pid/--rank\n");
        bad = 1;
    } else if (rc == 0) {
        rc = cp_export_write(out, pf, &rep);
        if (rc)
            fprintf(stderr, "export: cannot write %s: %s\n", out, strerror(-rc));
        else
            fprintf(stderr, "cuprobe: wrote %s\n", out);
    }
    for (size_t k = 0; k < rep.n_procs; k++)
        if (rep.procs[k]->error)
            fprintf(stderr, "%s\n", rep.procs[k]->error);
    cp_report_release(&rep);
    cp_pf_free(pf);
    cp_report_inputs_free(paths, n_paths);
    return rc || bad ? 2 : 0;
usage:
    cp_export_usage(stderr);
    free(in);
    return 2;
}
