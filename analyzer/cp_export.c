/*
 * cp_export.c - `cuprobe-analyze export --perfetto FILE TRACE...`: one pass
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
#include "cp_report.h"
#include "render_perfetto.h"

static void cp_export_usage(FILE *o)
{
    fprintf(o,
            "usage: cuprobe-analyze export --perfetto FILE [OPTIONS] TRACE...\n"
            "  --perfetto FILE     write the Trace Event Format (JSON) for ui.perfetto.dev\n"
            "                      and chrome://tracing: a track per process, memory\n"
            "                      counters per device, slow calls, OOMs, findings\n"
            "  --slow-us N         calls (copies, syncs, any driver call) of at least N\n"
            "                      microseconds become slices (default 100)\n"
            "  --no-progress       never draw the progress bar\n"
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
    uint64_t slow_us = 100;
    int progress = 1, i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == 0)
            break;
        if (strcmp(a, "--perfetto") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(a, "--slow-us") == 0 && i + 1 < argc) {
            char *end;
            const char *v = argv[++i];
            errno = 0;
            unsigned long long x = strtoull(v, &end, 10);
            if (!*v || *end || errno || x > 3600000000ull) {
                fprintf(stderr, "export: --slow-us takes microseconds (0..3600000000), not "
                                "'%s'\n", v);
                return 2;
            }
            slow_us = x;
        } else if (strcmp(a, "--no-progress") == 0) {
            progress = 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            cp_export_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "export: unknown option '%s'\n", a);
            cp_export_usage(stderr);
            return 2;
        }
    }
    if (!out || i >= argc) {
        cp_export_usage(stderr);
        return 2;
    }
    cp_pf *pf = cp_pf_new(slow_us * 1000);
    if (!pf) {
        fprintf(stderr, "export: out of memory\n");
        return 2;
    }
    cp_report rep;
    int bad = cp_report_collect(argv + i, argc - i, &rep, cp_pf_rec, pf, progress);
    int rc = bad < 0 ? -ENOMEM : cp_export_write(out, pf, &rep);
    if (rc)
        fprintf(stderr, "export: cannot write %s: %s\n", out, strerror(-rc));
    for (size_t k = 0; k < rep.n_procs; k++)
        if (rep.procs[k]->error)
            fprintf(stderr, "%s\n", rep.procs[k]->error);
    cp_report_release(&rep);
    cp_pf_free(pf);
    return rc || bad ? 2 : 0;
}
