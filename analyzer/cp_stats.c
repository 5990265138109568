/*
 * cp_stats.c - `cuprobe-analyze stats [OPTIONS] [TRACE|SUMMARY|DIR...]`:
 * every trace read once through the model and its ledger (no checks), then
 * the tables of cp_stats_tables.c as text or CSV, or the document of
 * cp_stats_json.c.  A summary has no ledger: it adds its devices' peaks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_stats.h"
#include "cp_report.h"

static void cp_stats_usage(FILE *o)
{
    fprintf(o,
            "usage: cuprobe stats [OPTIONS] [TRACE|SUMMARY|DIR]...\n"
            "  (no TRACE: the traces of the last `cuprobe run` in this directory)\n"
            "  driver calls per API (calls, errors, total/average/median/max time in the\n"
            "  driver), per device peak memory, allocations, frees, copies by direction and\n"
            "  class and the time blocked in synchronous copies, and device memory by call\n"
            "  site: held at the peak, most allocations, temporary allocations, held at\n"
            "  each out-of-memory error\n"
            "  --json              one JSON document (schema \"cuprobe-stats\")\n"
            "  --csv               the tables as CSV, one after another, a blank line apart\n"
            "  --table NAME        only this table (repeatable): api, devices, copies, peak,\n"
            "                      allocations, temporary, oom\n"
            "  --top N             sites per process and device in the site tables (10)\n"
            "  --no-symbolize      show module+offset instead of function and line\n"
            "  --no-progress       never draw the progress bar\n"
            "  --jobs N, -j N      read N traces at a time\n"
            "Exit status: 0 ok, 2 usage error or an unreadable trace.\n");
}

typedef struct cp_sopts {
    int json, csv, top, symbolize, progress, jobs;
    unsigned tables;            /* bit t: table t (enum cp_st_table); 0: all */
    char **in;
    int n_in;
} cp_sopts;

static int cp_stats_num(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long k = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || end == v || *end || k < lo || k > hi) {
        fprintf(stderr, "stats: %s takes a number from %ld to %ld%s%s%s\n", opt, lo, hi,
                v ? ", not '" : "", v ? v : "", v ? "'" : "");
        return -1;
    }
    *out = k;
    return 0;
}

/* Options anywhere among the inputs; `--` ends them. */
static int cp_stats_args(int argc, char **argv, cp_sopts *o)
{
    memset(o, 0, sizeof *o);
    o->top = 10;
    o->symbolize = 1;
    o->progress = 1;
    o->in = calloc((size_t)argc, sizeof *o->in);
    if (!o->in)
        return -1;
    int opts = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long k;
        if (!opts || a[0] != '-' || !a[1]) {
            o->in[o->n_in++] = argv[i];
        } else if (strcmp(a, "--") == 0) {
            opts = 0;
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = 1;
        } else if (strcmp(a, "--no-symbolize") == 0) {
            o->symbolize = 0;
        } else if (strcmp(a, "--no-progress") == 0) {
            o->progress = 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            cp_stats_usage(stdout);
            exit(0);
        } else if (strcmp(a, "--top") == 0) {
            if (cp_stats_num(a, i + 1 < argc ? argv[++i] : NULL, 1, 100000, &k) != 0)
                return -1;
            o->top = (int)k;
        } else if (strcmp(a, "--jobs") == 0 || strcmp(a, "-j") == 0) {
            if (cp_stats_num(a, i + 1 < argc ? argv[++i] : NULL, 1, 1024, &k) != 0)
                return -1;
            o->jobs = (int)k;
        } else if (strcmp(a, "--table") == 0) {
            const char *v = i + 1 < argc ? argv[++i] : "";
            int t;
            for (t = 0; t < CP_ST_N && strcmp(cp_stats_table_id(t), v) != 0; t++)
                ;
            if (t == CP_ST_N) {
                fprintf(stderr, "stats: --table takes api, devices, copies, peak, "
                                "allocations, temporary or oom, not '%s'\n", v);
                return -1;
            }
            o->tables |= 1u << t;
        } else {
            fprintf(stderr, "stats: unknown option '%s'\n", a);
            cp_stats_usage(stderr);
            return -1;
        }
    }
    if (o->json && (o->csv || o->tables)) {
        fprintf(stderr, "stats: --json writes every table: it takes neither --csv nor "
                        "--table\n");
        return -1;
    }
    return 0;
}

static void cp_stats_print(const cp_sopts *o, cp_report *rep)
{
    if (o->json) {
        cp_jb b = { 0 };
        cp_stats_doc(&b, rep, o->top, 0);
        if (b.oom)
            fprintf(stderr, "stats: out of memory\n");
        else
            printf("%s\n", b.s);
        cp_jb_free(&b);
        return;
    }
    if (!o->csv)
        printf("cuprobe stats: %zu trace%s\n", rep->n_procs, rep->n_procs == 1 ? "" : "s");
    int first = 1;
    for (int t = 0; t < CP_ST_N; t++) {
        if (o->tables && !(o->tables >> t & 1))
            continue;
        cp_tab tab;
        cp_stats_table(&tab, t, rep, o->top);
        /* Empty tables say nothing in text; CSV keeps its header. */
        if (tab.nrow || o->csv) {
            if (!first || !o->csv)
                putchar('\n');
            if (o->csv)
                cp_tab_csv(stdout, &tab);
            else
                cp_tab_text(stdout, &tab);
            first = 0;
        }
        cp_tab_free(&tab);
    }
}

int cp_stats_main(int argc, char **argv)
{
    cp_sopts o;
    if (cp_stats_args(argc, argv, &o) != 0) {
        free(o.in);
        return 2;
    }
    char **files;
    size_t n;
    if (cp_report_inputs(o.in, o.n_in, "stats", &files, &n) != 0) {
        free(o.in);
        return 2;
    }
    cp_collect_opts co = { .checks = 0, .ledger = 1, .timeline = 0,
                           .progress = o.progress, .symbolize = o.symbolize, .jobs = o.jobs };
    cp_report rep;
    int bad = cp_report_collect_with(files, n, &co, &rep);
    if (bad < 0)
        fprintf(stderr, "stats: out of memory\n");
    else if (bad != 2 && rep.n_procs)
        cp_stats_print(&o, &rep);
    fflush(stdout);
    for (size_t i = 0; i < rep.n_procs; i++)
        if (rep.procs[i]->error && !rep.procs[i]->killed)
            fprintf(stderr, "%s\n", rep.procs[i]->error);
    cp_report_release(&rep);
    cp_report_inputs_free(files, n);
    free(o.in);
    return bad ? 2 : 0;
}
