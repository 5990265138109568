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
            "  --since S           only what happened S seconds (12.5) after the run's start\n"
            "                      (the earliest process start of the traces read) and later\n"
            "  --until S           only what happened before S seconds after the run's start\n"
            "Options go before or after the traces; `--` ends them.\n"
            "Exit status: 0 ok, 2 usage error, unreadable trace, unwritable output or no\n"
            "process left by --pid, --rank, --since or --until.\n");
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
    int progress = 1;
    cp_filter filter = CP_FILTER_NONE;
    const cp_opt opts[] = {
        { "--perfetto", NULL, CP_ARG_STR, &out, 0, 0, NULL, "writes the timeline there", 0, 0,
          0, CP_OPT_ONCE, NULL },
        { "--slow-us", NULL, CP_ARG_LONG, &slow_us, 0, 3600000000l, NULL,
          "sets the calls shown as slices", 0, 0, 0, 0, NULL },
        CP_OPT_NO_PROGRESS(&progress),
        CP_OPT_PROCS(&filter, 0),
        CP_OPT_WINDOW(&filter, 0),
    };
    const cp_optset set = { "export", opts, sizeof opts / sizeof *opts, NULL, 0, 1,
                            cp_export_usage };
    cp_optv v;
    int r = cp_opts_read(&set, argc, argv, &v);
    if (r == 0 && cp_filter_check(&filter, "export") != 0)
        r = -1;
    if (r == 0 && !out) {
        fprintf(stderr, "export: --perfetto FILE is required\n");
        cp_export_usage(stderr);
        r = -1;
    }
    char **paths;
    size_t n_paths;
    if (r != 0 || cp_report_inputs(v.in, v.n_in, "export", &paths, &n_paths) != 0) {
        free(v.in);
        return r > 0 ? 0 : 2;
    }
    free(v.in);
    cp_pf *pf = cp_pf_new((uint64_t)slow_us * 1000);
    if (!pf) {
        fprintf(stderr, "export: out of memory\n");
        cp_report_inputs_free(paths, n_paths);
        return 2;
    }
    cp_report rep;
    int keep = cp_filter_has_procs(&filter) || cp_filter_has_window(&filter);
    cp_collect_opts co = { .who = "export", .checks = 1, .ledger = 1, .timeline = 1,
                           .progress = progress, .symbolize = 1, .hook = cp_pf_rec,
                           .hook_ctx = pf, .filter = keep ? &filter : NULL };
    int bad = cp_report_collect_with(paths, n_paths, &co, &rep);
    int rc = bad < 0 ? -ENOMEM : 0;
    if (rc == 0 && keep && rep.n_procs == 0) {
        if (bad != 2)
            cp_report_none_left(&rep, &filter, "export");
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
}
