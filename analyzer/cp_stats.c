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
            "  --pid PID           only this process\n"
            "  --rank N            only the process of this rank (RANK, SLURM_PROCID...)\n"
            "  --since S           only what happened S seconds (12.5) after the run's start\n"
            "                      (the earliest process start of the traces read) and later;\n"
            "                      memory held when the window opens is held, not allocated\n"
            "  --until S           only what happened before S seconds after the run's start\n"
            "Options go before or after the traces; `--` ends them.\n"
            "Exit status: 0 ok, 2 usage error, an unreadable trace or no process left by\n"
            "--pid, --rank, --since or --until.\n");
}

typedef struct cp_sopts {
    int json, csv, top, symbolize, progress, jobs;
    unsigned tables;            /* bit t: table t (enum cp_st_table); 0: all */
    cp_filter filter;           /* --pid, --rank, --since, --until */
    char **in;
    int n_in;
} cp_sopts;

/* The outputs of `stats`, for the option table. */
enum { S_TEXT = 1, S_CSV = 2, S_JSON = 4, S_SITES = 8 };

#define CP_ST_SITE_TABLES \
    (1u << CP_ST_PEAK | 1u << CP_ST_ALLOCS | 1u << CP_ST_TEMP | 1u << CP_ST_OOM)

/* --table's value: one more table to show. */
static int cp_parse_table(void *to, const char *who, const char *a, const char *v)
{
    int t;
    for (t = 0; t < CP_ST_N && (!v || strcmp(cp_stats_table_id(t), v) != 0); t++)
        ;
    if (t == CP_ST_N) {
        fprintf(stderr, "%s: %s takes api, devices, copies, peak, allocations, temporary or "
                        "oom, not '%s'\n", who, a, v ? v : "");
        return -1;
    }
    *(unsigned *)to |= 1u << t;
    return 0;
}

/* Options anywhere among the inputs; `--` ends them. */
static int cp_stats_args(int argc, char **argv, cp_sopts *o)
{
    memset(o, 0, sizeof *o);
    o->top = 10;
    o->symbolize = 1;
    o->progress = 1;
    o->filter = (cp_filter)CP_FILTER_NONE;
    const cp_opt opts[] = {
        { "--json", NULL, CP_ARG_NONE, &o->json, 1, 0, NULL,
          "writes every table as one JSON document", S_JSON, S_TEXT | S_CSV, 0, 0, NULL },
        { "--csv", NULL, CP_ARG_NONE, &o->csv, 1, 0, NULL, "writes the tables as CSV", S_CSV,
          S_TEXT, 0, 0, NULL },
        { "--table", NULL, CP_ARG_FN, &o->tables, 0, 0, cp_parse_table,
          "keeps only the tables named", 0, S_SITES, S_TEXT | S_CSV, CP_OPT_EACH, NULL },
        { "--top", NULL, CP_ARG_INT, &o->top, 1, 100000, NULL,
          "sets the sites listed in the call-site tables", 0, 0, S_SITES, 0, NULL },
        { "--no-symbolize", NULL, CP_ARG_NONE, &o->symbolize, 0, 0, NULL,
          "names the call-site tables' sites by module+offset", 0, 0, S_SITES, 0, NULL },
        CP_OPT_NO_PROGRESS(&o->progress),
        { "--jobs", "-j", CP_ARG_INT, &o->jobs, 1, 1024, NULL, "sets the traces read at a time",
          0, 0, 0, 0, NULL },
        CP_OPT_PROCS(&o->filter, 0),
        CP_OPT_WINDOW(&o->filter, 0),
    };
    static const cp_opt_rule rules[] = {
        { "--json", "--csv", 0, "are two formats of the tables; give one" },
    };
    const cp_optset set = { "stats", opts, sizeof opts / sizeof *opts, rules,
                            sizeof rules / sizeof *rules, S_TEXT | S_SITES, cp_stats_usage };
    cp_optv v;
    int rc = cp_opts_parse(&set, argc, argv, &v);
    o->in = v.in;
    o->n_in = v.n_in;
    if (rc > 0)
        exit(0);
    /* The site tables are made when --table names one of them too. */
    if (rc == 0)
        rc = cp_opts_check(&set, &v, o->tables & CP_ST_SITE_TABLES ? S_SITES : 0);
    if (rc == 0)
        rc = cp_filter_check(&o->filter, "stats");
    return rc;
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
    if (!o->csv && rep->windowed) {
        char w[96];
        printf("window: %s (from the earliest process start)\n",
               cp_window_say(&rep->window, w, sizeof w));
    }
    int first = 1;
    for (int t = 0; t < CP_ST_N; t++) {
        if (o->tables && !(o->tables >> t & 1))
            continue;
        cp_tab tab;
        cp_stats_table(&tab, t, rep, o->top);
        /* An empty table keeps its title in text, with "none": a run
         * without temporary allocations or OOMs says so rather than
         * leaving the reader to wonder whether the table was computed;
         * CSV keeps its header. */
        if (!first || !o->csv)
            putchar('\n');
        if (o->csv)
            cp_tab_csv(stdout, &tab);
        else if (tab.nrow)
            cp_tab_text(stdout, &tab);
        else
            printf("%s\n  none\n", tab.title);
        first = 0;
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
    int keep = cp_filter_has_procs(&o.filter) || cp_filter_has_window(&o.filter);
    cp_collect_opts co = { .who = "stats", .checks = 0, .ledger = 1, .timeline = 0,
                           .progress = o.progress, .symbolize = o.symbolize, .jobs = o.jobs,
                           .filter = keep ? &o.filter : NULL };
    cp_report rep;
    int bad = cp_report_collect_with(files, n, &co, &rep);
    if (bad < 0)
        fprintf(stderr, "stats: out of memory\n");
    else if (keep && !rep.n_procs && bad != 2 && (bad = 1))
        cp_report_none_left(&rep, &o.filter, "stats");
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
