/*
 * cp_stats.c - `cuprobe-analyze stats [OPTIONS] [TRACE|SUMMARY|DIR...]`:
 * every trace read once through the model and its ledger (no checks), then
 * the tables of cp_stats_tables.c as text or CSV, or the document of
 * cp_stats_json.c.  A summary has no ledger: it adds its devices' peaks.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_stats.h"
#include "cp_opts.h"
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
    const cp_flag flags[] = {
        { "--json", &o->json, 1 }, { "--csv", &o->csv, 1 },
        { "--no-symbolize", &o->symbolize, 0 }, { "--no-progress", &o->progress, 0 },
    };
    int opts = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long k;
        int kind = cp_opt_classify(a, &opts, flags, sizeof flags / sizeof *flags);
        if (kind == CP_OPT_ARG) {
            o->in[o->n_in++] = argv[i];
        } else if (kind == CP_OPT_HELP) {
            cp_stats_usage(stdout);
            exit(0);
        } else if (kind == CP_OPT_TAKEN) {
            continue;
        } else if (strcmp(a, "--top") == 0 || strcmp(a, "--jobs") == 0 || strcmp(a, "-j") == 0) {
            int top = a[2] == 't';
            if (cp_opt_long("stats", a, v, 1, top ? 100000 : 1024, &k) != 0)
                return -1;
            *(top ? &o->top : &o->jobs) = (int)k;
            i++;
        } else if (strcmp(a, "--table") == 0) {
            int t;
            for (t = 0; t < CP_ST_N && (!v || strcmp(cp_stats_table_id(t), v) != 0); t++)
                ;
            if (t == CP_ST_N) {
                fprintf(stderr, "stats: --table takes api, devices, copies, peak, "
                                "allocations, temporary or oom, not '%s'\n", v ? v : "");
                return -1;
            }
            o->tables |= 1u << t;
            i++;
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
