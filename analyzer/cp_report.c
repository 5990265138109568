/*
 * cp_report.c - `cuprobe-analyze report TRACE...`: stream every trace
 * through the model and the checks, then print the findings.
 *
 * Exit status: 0 ok; 3 when --fail-on names a severity a finding reaches;
 * 2 for a usage error or when a trace could not be read (after reporting
 * what decoded; 2 wins over 3).  A trace that decodes cleanly up to a cut,
 * with no END record, is a killed process (the `killed` finding), not bad
 * input.
 *
 * With no TRACE, or a directory, the traces of the last `cuprobe run` there
 * are read (cp_discover.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cp_report.h"
#include "cp_checks.h"
#include "cp_debuginfo.h"
#include "cp_discover.h"
#include "cp_file.h"
#include "cp_grow.h"
#include "cp_outfile.h"
#include "cp_summary.h"
#include "cp_run.h"
#include "cp_window_place.h"
#include "render.h"

typedef struct cp_ropts {
    int json, list, fail_on, all_frames, symbolize, max_sites, verbose, brief;
    unsigned char *selected;    /* [i]: run the i-th check of cp_checks() */
    int any_selected;
    int progress;
    int debuginfod;             /* --debuginfod: fetch missing debug info by build id */
    long max_live;              /* --max-live N, 0: CUPROBE_MAX_LIVE or the default */
    const char *html;           /* --html FILE */
    const char *summary;        /* --summary FILE */
    char **in;                  /* the inputs, in order (argv's) */
    int n_in;
    int exit_code;              /* --error-exitcode: when --fail-on matches */
    cp_filter filter;           /* --pid, --rank, --since, --until */
    int jobs;                   /* --jobs N, 0: online CPUs (CUPROBE_JOBS caps) */
    int timeline;               /* the memory timeline is read (page, summary, export) */
    const cp_found *found;      /* how the processes ended, from `cuprobe run` */
    const cp_filter *pfilter;   /* the processes and the part of the run kept (NULL: all) */
    const char *who;            /* the command, starting messages */
    int ledger;                 /* each process's cp_ledger (the page's tables, stats, diff) */
    cp_rec_hook hook;           /* called after the model and checks saw a record */
    void *hook_ctx;
} cp_ropts;

static void cp_report_usage(FILE *o)
{
    size_t n;
    const cp_check *const *all = cp_checks(&n);
    fprintf(o,
            "usage: cuprobe report [OPTIONS] [TRACE|SUMMARY|DIR]...\n"
            "  (no TRACE: the traces of the last `cuprobe run` in this directory)\n"
            "  --json              machine-readable report (docs/report.md)\n"
            "  --list              one line per finding: CHECK SEVERITY COUNT\n"
            "  --fail-on error|warning\n"
            "                      exit 3 when a finding has this severity or worse, naming\n"
            "                      it on stderr\n"
            "  --error-exitcode N  the exit status of --fail-on (3 to 255; default 3)\n"
            "  --pid PID           only this process\n"
            "  --rank N            only the process of this rank (RANK, SLURM_PROCID...)\n"
            "  --since S           only what happened S seconds (12.5) after the run's start\n"
            "                      (the earliest process start of the traces read) and later\n"
            "  --until S           only what happened before S seconds after the run's start\n"
            "  --check ID          only this check (repeatable)\n"
            "  --all-frames        keep library and standard-library Python frames in sites\n"
            "                      and show every frame of a site's stack\n"
            "  --verbose           also list a finding's items one by one (a leak's addresses)\n"
            "  --brief             leave out the Why and Fix paragraphs\n"
            "  --no-symbolize      show module+offset instead of function and line\n"
            "  --debuginfod        fetch debug info a module lacks here from the servers in\n"
            "                      DEBUGINFOD_URLS (off: the report never uses the network)\n"
            "  --sites N           call sites listed per finding (text; default 5)\n"
            "  --no-progress       never draw the progress bar\n"
            "  --html FILE         also write a self-contained HTML page: memory over time\n"
            "                      per device, copies, findings (opens offline)\n"
            "  --summary FILE      write the analysis of these traces to FILE (JSON) instead\n"
            "                      of a report; `report FILE...` merges summaries (and traces)\n"
            "  --jobs N, -j N      analyze N traces at a time (default: the online CPUs,\n"
            "                      at most CUPROBE_JOBS)\n"
            "  --max-live N        past N live allocations in a process, count new ones by\n"
            "                      call site only (default CUPROBE_MAX_LIVE, else 20000000)\n"
            "checks:");
    for (size_t i = 0; i < n; i++)
        fprintf(o, " %s", all[i]->id);
    fprintf(o, "\nOptions go before or after the traces; `--` ends them.  A window\n"
               "(--since, --until) starts from the memory held at its start; leaks at exit\n"
               "and how a process ended are judged only when its end is inside it.\n"
               "Exit status: 0 ok, 3 --fail-on matched, 2 usage error, unreadable trace or\n"
               "no process left by --pid, --rank, --since or --until.\n");
}

/* Whether each process's ledger is kept: the page and a summary written
 * show it, stats and diff read it. */
static int cp_wants_ledger(const cp_ropts *o)
{
    return o->ledger || o->html || o->summary;
}

/* Open path as a stream when it is one ("-", a pipe: discovery passes on
 * only what the user named that is not a regular file): a stream is read
 * once, so its first bytes tell a summary from a trace here and go with
 * it.  @return : 1 a stream (*st set, is_sum told), 0 not one. */
static int cp_open_stream(const char *path, cp_stream *st, unsigned char *is_sum)
{
    if (!cp_file_is_stream(path))
        return 0;
    int fd = cp_file_open_in(path, CP_FILE_STREAM, NULL);
    if (fd < 0)
        return 0;       /* opened by path again, the reader says why */
    st->fd = fd;
    st->n_head = 0;
    while (st->n_head < sizeof st->head) {
        ssize_t r = read(fd, st->head + st->n_head, sizeof st->head - st->n_head);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        st->n_head += (size_t)r;
    }
    *is_sum = cp_summary_is_head(st->head, st->n_head);
    return 1;
}

/* A summary read from a stream opened by cp_open_stream(); closes it. */
static int cp_summary_of_stream(const char *name, cp_stream *st, const cp_ropts *o,
                                cp_part **parts, size_t *n, size_t *cap, char *err,
                                size_t errcap)
{
    cp_fbuf text;
    int rc = cp_file_read_all(st->fd, st->head, st->n_head, &text);
    close(st->fd);
    st->fd = -1;
    if (rc != 0) {
        snprintf(err, errcap, "%s: %s", name, strerror(-rc));
        return rc;
    }
    rc = cp_summary_read_text(name, text.p, text.len, o->selected, cp_wants_ledger(o), parts, n,
                              cap, err, errcap);
    cp_fbuf_free(&text);
    return rc;
}

/* The processes of the run in input order: each trace analyzed (in
 * parallel), each summary's processes read back.  @return : 0, 1 when a
 * trace could not be read to its end, 2 a summary could not be read (said
 * on stderr), -1 out of memory.  parts and n_parts: what was made, also on
 * failure. */
static int cp_gather(const cp_ropts *o, char **in, size_t n_in, cp_part **parts,
                     size_t *n_parts, cp_report *rep)
{
    size_t n1 = n_in ? n_in : 1;
    char **tr = calloc(n1, sizeof *tr);
    cp_part *tp = calloc(n1, sizeof *tp);
    unsigned char *is_sum = calloc(n1, 1);
    cp_stream *st = malloc(n1 * sizeof *st), *tst = malloc(n1 * sizeof *tst);
    cp_wspan *span = NULL;
    size_t n_tr = 0, cap = 0;
    int rc = 0, ran = 0;
    *parts = NULL;
    *n_parts = 0;
    if (!tr || !tp || !is_sum || !st || !tst) {
        rc = -1;
        goto out_free;
    }
    for (size_t i = 0; i < n1; i++)
        st[i].fd = tst[i].fd = -1;
    int windowed = cp_filter_has_window(o->pfilter);
    for (size_t i = 0; i < n_in; i++) {
        if (!cp_open_stream(in[i], &st[i], &is_sum[i]))
            is_sum[i] = cp_summary_is(in[i]);
        if (is_sum[i] && windowed) {
            fprintf(stderr, "%s: %s is a summary: its processes were analysed whole, so "
                            "--since/--until cannot cut them (give their traces)\n", o->who,
                    in[i]);
            rc = 2;
            goto out_free;
        }
        if (is_sum[i])
            continue;
        /* A window is placed from every trace's HEADER before any trace is
         * read (cp_window_place() opens it by path): a stream is read once,
         * by the analysis. */
        if (windowed && st[i].fd >= 0) {
            fprintf(stderr, "%s: %s is a stream: --since/--until read each trace's header "
                            "first, so give the trace as a file\n", o->who, in[i]);
            rc = 2;
            goto out_free;
        }
        tst[n_tr] = st[i];
        st[i].fd = -1;
        tr[n_tr++] = in[i];
    }
    /* The run's start is known once every trace's is: the window is
     * placed in each trace before any is read. */
    if (windowed) {
        if (!(span = calloc(n_tr ? n_tr : 1, sizeof *span))) {
            rc = -1;
            goto out_free;
        }
        cp_window_place(o->pfilter, tr, n_tr, span, &rep->window);
        rep->windowed = 1;
    }
    cp_aopts ao = { .selected = o->selected, .found = o->found, .hook = o->hook,
                    .hook_ctx = o->hook_ctx,
                    .progress = o->progress, .jobs = o->jobs,
                    .timeline = o->timeline || o->html || o->summary,
                    .ledger = cp_wants_ledger(o), .streams = tst, .span = span };
    if (cp_analyze_traces(tr, n_tr, &ao, tp) != 0)
        rc = -1;
    ran = 1;
    for (size_t i = 0; span && i < n_tr; i++) {
        /* How long the run lasted, what a window past its end is measured
         * against: known when no trace was cut at the window's end. */
        const cp_proc *p = tp[i].proc;
        uint64_t end = p && p->t_last > p->t0 ? span[i].off + (p->t_last - p->t0) : 0;
        if (p && p->win_cut) {
            rep->window.run_len = 0;
            break;
        }
        if (end > rep->window.run_len)
            rep->window.run_len = end;
    }
    size_t k = 0;
    for (size_t i = 0; i < n_in && rc >= 0; i++) {
        if (!is_sum[i]) {
            if (cp_grow((void **)parts, &cap, *n_parts + 1, sizeof **parts, 16) != 0) {
                rc = -1;
                break;
            }
            (*parts)[(*n_parts)++] = tp[k];
            memset(&tp[k++], 0, sizeof *tp);
            if ((*parts)[*n_parts - 1].bad && rc == 0)
                rc = 1;
            continue;
        }
        char err[1024];
        size_t before = *n_parts;
        int r = st[i].fd >= 0
                    ? cp_summary_of_stream(in[i], &st[i], o, parts, n_parts, &cap, err,
                                           sizeof err)
                    : cp_summary_read(in[i], o->selected, cp_wants_ledger(o), parts, n_parts,
                                      &cap, err, sizeof err);
        if (r != 0) {
            fprintf(stderr, "%s: %s\n", o->who, err);
            rc = r == -ENOMEM ? -1 : 2;
        }
        /* A trace the summary could not read is as bad as here. */
        for (size_t k2 = before; k2 < *n_parts && rc == 0; k2++)
            rc = (*parts)[k2].bad;
    }
out_free:
    for (size_t i = 0; st && i < n_in; i++)
        if (st[i].fd >= 0)
            close(st[i].fd);
    /* Before the analysis, the streams of the traces are still ours. */
    for (size_t i = 0; !ran && tst && i < n_tr; i++)
        if (tst[i].fd >= 0)
            close(tst[i].fd);
    for (size_t i = 0; i < n_tr; i++)
        cp_part_free(&tp[i]);
    free(st);
    free(tst);
    free(tp);
    free(tr);
    free(is_sum);
    free(span);
    return rc;
}

/* The run from its parts: the processes renumbered in order, the findings
 * in the same order as one serial pass would have made them, then the
 * checks that look across processes.  Takes the parts' contents. */
static int cp_combine(const cp_ropts *o, cp_part *parts, size_t n, cp_report *rep)
{
    size_t n_f = 0;
    for (size_t i = 0; i < n; i++)
        n_f += parts[i].rep.n;
    rep->n_procs = n;
    rep->procs = calloc(n ? n : 1, sizeof *rep->procs);
    rep->f = calloc(n_f ? n_f : 1, sizeof *rep->f);
    if (!rep->procs || !rep->f) {
        free(rep->procs);
        free(rep->f);
        rep->procs = NULL;
        rep->f = NULL;
        rep->n_procs = 0;
        for (size_t i = 0; i < n; i++)
            cp_part_free(&parts[i]);
        return -1;
    }
    rep->cap = n_f ? n_f : 1;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        cp_proc *p = parts[i].proc;
        /* The rank comes from the header's environment (cp_run_build()
         * of this one process reads it; the run is built again below). */
        if (cp_filter_has_procs(o->pfilter)) {
            cp_run_build(&p, 1, NULL);
            if (!cp_filter_keeps(o->pfilter, (long)p->pid, p->id.rank)) {
                cp_part_free(&parts[i]);
                continue;
            }
        }
        if (p->win_out) {
            /* Not running in the window; a damaged trace still says so. */
            if (p->error && !p->killed)
                fprintf(stderr, "%s\n", p->error);
            cp_part_free(&parts[i]);
            continue;
        }
        if (p->error && p->records == 0) {
            /* Not even the HEADER decoded: not a trace.  There is no
             * process to show; its error line is all there is to say. */
            fprintf(stderr, "%s\n", p->error);
            cp_part_free(&parts[i]);
            continue;
        }
        rep->procs[kept] = p;
        p->index = (int)kept++;
        for (size_t j = 0; j < parts[i].rep.n; j++)
            rep->f[rep->n++] = parts[i].rep.f[j];
        free(parts[i].rep.f);
        memset(&parts[i], 0, sizeof parts[i]);
    }
    rep->n_procs = kept;
    if (cp_run_build(rep->procs, rep->n_procs, &rep->run) != 0)
        return -1;
    size_t nc;
    const cp_check *const *all = cp_checks(&nc);
    for (size_t k = 0; k < nc; k++)
        if (o->selected[k] && all[k]->across)
            all[k]->across(rep);
    cp_report_prepare(rep, all, nc);
    cp_report_merge_ranks(rep);
    return 0;
}

/* Read every input (traces through the model and the checks, one pass
 * each; summaries as they were written), run the checks across processes
 * and prepare the report; with --summary, write the parts instead.
 * Returns 0, 1 when a trace could not be read to its end, 2 when a summary
 * could not be read or written, -1 out of memory. */
static int cp_collect(const cp_ropts *o, char **files, int n_files, cp_report *rep)
{
    cp_part *parts;
    size_t n;
    int bad = cp_gather(o, files, (size_t)n_files, &parts, &n, rep);
    if (bad == 0 || bad == 1) {
        if (o->summary) {
            for (size_t i = 0; i < n; i++)
                if (parts[i].proc->error && !parts[i].proc->killed)
                    fprintf(stderr, "%s\n", parts[i].proc->error);
            if (cp_summary_write(o->summary, parts, n, o->selected) != 0)
                bad = 2;
        } else if (cp_combine(o, parts, n, rep) != 0) {
            bad = -1;
        }
    }
    for (size_t i = 0; i < n; i++)
        cp_part_free(&parts[i]);
    free(parts);
    return bad;
}

/* The page goes to a temporary name first, so a failed write never leaves a
 * half page under the name asked for (cp_outfile.h). */
static int cp_write_html(const char *path, cp_report *rep, const cp_out_opts *oo)
{
    char *tmp;
    FILE *f = cp_outfile_open(path, &tmp);
    if (!f) {
        fprintf(stderr, "report: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = cp_outfile_commit(f, tmp, path, cp_out_html(f, rep, oo));
    if (rc != 0)
        fprintf(stderr, "report: cannot write %s: %s\n", path, strerror(-rc));
    return rc ? -1 : 0;
}

/* --- main ------------------------------------------------------------------------------- */

/* The live-allocation bound in force: --max-live (opt), else
 * CUPROBE_MAX_LIVE (a bad value is said and ignored, as CUPROBE_JOBS's),
 * else the model's default. */
static void cp_max_live_set(long opt)
{
    long n = opt;
    const char *e = getenv("CUPROBE_MAX_LIVE");
    if (!n && e && *e &&
        cp_opt_long("report", "CUPROBE_MAX_LIVE", e, 1, CP_MAX_LIVE_MOST, &n) != 0)
        n = 0;
    cp_model_max_live((uint64_t)n);
}

/* The outputs of `report`, for the option table. */
enum {
    R_TEXT = 1, R_JSON = 2, R_LIST = 4, R_HTML = 8, R_SUMMARY = 16,
    R_REPORT = R_TEXT | R_JSON | R_LIST | R_HTML,
};

/* --fail-on's value: one of the words of cp_sev_name(). */
static int cp_parse_sev(void *to, const char *who, const char *a, const char *v)
{
    static const struct { const char *w; int sev; } sevs[] = {
        { "error", CP_SEV_ERROR }, { "warning", CP_SEV_WARNING }, { "info", CP_SEV_INFO },
    };
    if (!v) {
        fprintf(stderr, "%s: %s needs a value (error, warning or info)\n", who, a);
        return -1;
    }
    for (size_t k = 0; k < sizeof sevs / sizeof sevs[0]; k++)
        if (strcmp(v, sevs[k].w) == 0) {
            *(int *)to = sevs[k].sev;
            return 0;
        }
    fprintf(stderr, "%s: %s takes error, warning or info, not '%s'\n", who, a, v);
    return -1;
}

/* --check's value: a check's id, added to those run. */
static int cp_parse_check(void *to, const char *who, const char *a, const char *v)
{
    cp_ropts *o = to;
    size_t n, c;
    const cp_check *const *all = cp_checks(&n);
    for (c = 0; v && c < n && strcmp(all[c]->id, v) != 0; c++)
        ;
    if (!v || c == n) {
        fprintf(stderr, "%s: %s%s%s\n", who, v ? "unknown check '" : a, v ? v : " needs a check id",
                v ? "'" : "");
        cp_report_usage(stderr);
        return -1;
    }
    o->selected[c] = 1;
    o->any_selected = 1;
    return 0;
}

/* Options anywhere among the inputs (GNU getopt's permuting order); `--`
 * ends them.  The inputs go to o->in; the table says what each option
 * changes, so that one given where it would do nothing is refused. */
static int cp_parse_args(int argc, char **argv, cp_ropts *o)
{
    memset(o, 0, sizeof *o);
    size_t n;
    cp_checks(&n);
    o->selected = calloc(n, 1);
    if (!o->selected) {
        fprintf(stderr, "report: out of memory\n");
        return -1;
    }
    o->who = "report";
    o->fail_on = -1;
    o->exit_code = 3;
    o->filter = (cp_filter)CP_FILTER_NONE;
    o->symbolize = 1;
    o->max_sites = 5;
    o->progress = 1;
    const cp_opt opts[] = {
        { "--json", NULL, CP_ARG_NONE, &o->json, 1, 0, NULL,
          "writes the report as JSON instead of text", R_JSON, R_TEXT, 0, 0, NULL },
        { "--list", NULL, CP_ARG_NONE, &o->list, 1, 0, NULL,
          "prints one line per finding instead of the report", R_LIST, R_TEXT, 0, 0, NULL },
        { "--html", NULL, CP_ARG_STR, &o->html, 0, 0, NULL, "also writes the report as a page",
          R_HTML, 0, 0, CP_OPT_ONCE, NULL },
        { "--summary", NULL, CP_ARG_STR, &o->summary, 0, 0, NULL,
          "writes the analysis instead of a report", R_SUMMARY, R_REPORT, 0, CP_OPT_ONCE,
          "run `cuprobe report %s` on the summary" },
        { "--fail-on", NULL, CP_ARG_FN, &o->fail_on, 0, 0, cp_parse_sev,
          "sets the exit status of a report whose findings reach a severity", 0, 0, R_REPORT,
          0, NULL },
        { "--error-exitcode", NULL, CP_ARG_INT, &o->exit_code, 3, 255, NULL,
          "sets the exit status of --fail-on", 0, 0, R_REPORT, 0, NULL },
        CP_OPT_PROCS(&o->filter, R_REPORT),
        CP_OPT_WINDOW(&o->filter, R_REPORT),
        { "--check", NULL, CP_ARG_FN, o, 0, 0, cp_parse_check, "runs only the checks named",
          0, 0, 0, CP_OPT_EACH, NULL },
        { "--all-frames", NULL, CP_ARG_NONE, &o->all_frames, 1, 0, NULL,
          "keeps library frames in call sites", 0, 0, 0, 0, NULL },
        { "--verbose", "-v", CP_ARG_NONE, &o->verbose, 1, 0, NULL,
          "lists a finding's items one by one in the text and the page", 0, 0, R_TEXT | R_HTML,
          0, NULL },
        { "--brief", NULL, CP_ARG_NONE, &o->brief, 1, 0, NULL,
          "leaves the Why and Fix paragraphs out of the text and the page", 0, 0,
          R_TEXT | R_HTML, 0, NULL },
        { "--sites", NULL, CP_ARG_INT, &o->max_sites, 1, 1000, NULL,
          "sets the call sites the text lists per finding", 0, 0, R_TEXT, 0, NULL },
        CP_OPT_NO_SYMBOLIZE(&o->symbolize),
        { "--debuginfod", NULL, CP_ARG_NONE, &o->debuginfod, 1, 0, NULL,
          "fetches the debug information a module lacks", 0, 0, 0, 0, NULL },
        CP_OPT_NO_PROGRESS(&o->progress),
        { "--jobs", "-j", CP_ARG_INT, &o->jobs, 1, 1024, NULL, "sets the traces read at a time",
          0, 0, 0, 0, NULL },
        { "--max-live", NULL, CP_ARG_LONG, &o->max_live, 1, CP_MAX_LIVE_MOST, NULL,
          "sets the live allocations tracked one by one", 0, 0, 0, 0, NULL },
    };
    static const cp_opt_rule rules[] = {
        { "--json", "--list", 0, "are two formats of the same report; give one" },
        { "--error-exitcode", "--fail-on", 1, NULL },
    };
    const cp_optset set = { "report", opts, sizeof opts / sizeof *opts, rules,
                            sizeof rules / sizeof *rules, R_TEXT, cp_report_usage };
    cp_optv v;
    int rc = cp_opts_read(&set, argc, argv, &v);
    o->in = v.in;
    o->n_in = v.n_in;
    if (rc > 0) {
        free(o->selected);
        free(o->in);
        exit(0);
    }
    if (rc == 0 && cp_filter_check(&o->filter, "report") != 0)
        rc = -1;
    if (!o->any_selected)
        for (size_t c = 0; c < n; c++)
            o->selected[c] = 1;
    return rc;
}

int cp_report_inputs(char **args, int n, const char *who, char ***out, size_t *n_out)
{
    cp_found ps = { 0 };
    *out = NULL;
    *n_out = 0;
    if (cp_discover(who, args, (size_t)(n > 0 ? n : 0), &ps) != 0) {
        cp_found_free(&ps);
        return -1;
    }
    *out = ps.paths;
    *n_out = ps.n;
    ps.paths = NULL;
    ps.n = 0;
    cp_found_free(&ps);
    return 0;
}

void cp_report_inputs_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void cp_report_none_left(const cp_report *rep, const cp_filter *f, const char *who)
{
    char w[96], len[32];
    if (!cp_filter_has_window(f)) {
        fprintf(stderr, "%s: no process of these traces matches --pid/--rank\n", who);
        return;
    }
    fprintf(stderr, "%s: no process of these traces %s the window (%s%s%s)\n", who,
            cp_filter_has_procs(f) ? "matches --pid/--rank in" : "ran in",
            cp_window_say(&rep->window, w, sizeof w),
            rep->window.run_len ? "; the run lasted " : "",
            rep->window.run_len ? cp_fmt_ns(rep->window.run_len, len, sizeof len) : "");
}

static void cp_ropts_free(cp_ropts *o)
{
    free(o->selected);
    free(o->in);
}

int cp_report_main(int argc, char **argv)
{
    cp_ropts o;
    if (cp_parse_args(argc, argv, &o) != 0) {
        cp_ropts_free(&o);
        return 2;
    }
    cp_found ps = { 0 };
    if (cp_discover("report", o.in, (size_t)o.n_in, &ps) != 0) {
        cp_found_free(&ps);
        cp_ropts_free(&o);
        return 2;
    }
    if (cp_filter_has_procs(&o.filter) || cp_filter_has_window(&o.filter))
        o.pfilter = &o.filter;
    o.found = &ps;
    cp_sym_config(o.symbolize, o.all_frames);
    cp_debuginfo_server(o.debuginfod);
    cp_max_live_set(o.max_live);
    cp_report rep = { .all_frames = o.all_frames, .max_sites = o.max_sites };
    /* The same file named twice (or through a link) is one process. */
    size_t nt = 0;
    struct stat *seen = calloc(ps.n ? ps.n : 1, sizeof *seen);
    if (!seen) {
        cp_found_free(&ps);
        cp_ropts_free(&o);
        return 2;
    }
    for (size_t i = 0; i < ps.n; i++) {
        struct stat st;
        int dup = 0;
        if (stat(ps.paths[i], &st) == 0 && S_ISREG(st.st_mode)) {
            for (size_t j = 0; j < nt && !dup; j++)
                dup = seen[j].st_dev == st.st_dev && seen[j].st_ino == st.st_ino;
            seen[nt] = st;
        } else {
            memset(&seen[nt], 0, sizeof seen[nt]);
        }
        if (dup) {
            fprintf(stderr, "report: %s: given more than once; read once\n", ps.paths[i]);
            free(ps.paths[i]);
            continue;
        }
        ps.paths[nt++] = ps.paths[i];
    }
    free(seen);
    ps.n = nt;
    int bad = cp_collect(&o, ps.paths, (int)ps.n, &rep);
    if (bad < 0 || bad == 2 || o.summary) {
        if (bad < 0)
            fprintf(stderr, "report: out of memory\n");
        cp_report_release(&rep);
        cp_found_free(&ps);
        cp_ropts_free(&o);
        if (!bad)
            fprintf(stderr, "cuprobe: wrote %s\n", o.summary);
        return bad ? 2 : 0;
    }
    const char *nc = getenv("NO_COLOR");
    cp_out_opts oo = { .color = !o.json && isatty(1) && !(nc && *nc), .max_sites = o.max_sites,
                       .verbose = o.verbose, .brief = o.brief };
    if (rep.n_procs == 0 && bad) {
        /* Only files that are not traces: their errors are all there is. */
    } else if (o.list) {
        for (size_t i = 0; i < rep.n; i++)
            printf("%s %s %llu\n", rep.f[i]->check->id, cp_sev_name(rep.f[i]->sev),
                   (unsigned long long)rep.f[i]->count);
    } else if (o.json) {
        cp_out_json(stdout, &rep, &oo);
    } else
        cp_out_text(stdout, &rep, &oo);
    fflush(stdout);
    int bad_html = o.html ? cp_write_html(o.html, &rep, &oo) : 0;
    if (o.html && !bad_html)
        fprintf(stderr, "cuprobe: wrote %s\n", o.html);
    /* A filter that keeps nothing is a mistake a gate must not pass. */
    if (o.pfilter && rep.n_procs == 0 && !bad && (bad = 1))
        cp_report_none_left(&rep, o.pfilter, "report");
    int worst = -1;
    const cp_finding *gate = NULL;
    for (size_t i = 0; i < rep.n; i++)
        if (rep.f[i]->sev > worst) {
            worst = rep.f[i]->sev;
            gate = rep.f[i];
        }
    for (size_t i = 0; i < rep.n_procs; i++)
        if (rep.procs[i]->error && !rep.procs[i]->killed)
            fprintf(stderr, "%s\n", rep.procs[i]->error);
    int rc = bad || bad_html ? 2 : (o.fail_on >= 0 && worst >= o.fail_on) ? o.exit_code : 0;
    if (gate && o.fail_on >= 0 && worst >= o.fail_on)
        fprintf(stderr, "cuprobe: --fail-on %s: %s (%s) failed the gate; exit %d%s\n",
                cp_sev_name(o.fail_on), gate->check->id, cp_sev_name(gate->sev), o.exit_code,
                rc == 2 ? " (2: a trace could not be read)" : "");
    cp_report_release(&rep);
    cp_found_free(&ps);
    cp_ropts_free(&o);
    return rc;
}

int cp_report_collect_with(char **files, size_t n, const cp_collect_opts *co, cp_report *rep)
{
    cp_ropts o = { .fail_on = -1, .symbolize = co->symbolize, .max_sites = 5,
                   .progress = co->progress, .hook = co->hook, .hook_ctx = co->hook_ctx,
                   .timeline = co->timeline, .ledger = co->ledger, .jobs = co->jobs,
                   .pfilter = co->filter, .who = co->who ? co->who : "report" };
    size_t nc;
    cp_checks(&nc);
    o.selected = malloc(nc);
    if (!o.selected)
        return -1;
    memset(o.selected, co->checks ? 1 : 0, nc);
    cp_sym_config(co->symbolize, 0);
    cp_max_live_set(0);
    memset(rep, 0, sizeof *rep);
    rep->max_sites = o.max_sites;
    int rc = cp_collect(&o, files, (int)n, rep);
    free(o.selected);
    return rc;
}

int cp_report_collect(char **files, int n, cp_report *rep, cp_rec_hook hook, void *ctx,
                      int progress)
{
    cp_collect_opts co = { .checks = 1, .ledger = 1, .timeline = 1, .progress = progress,
                           .symbolize = 1, .hook = hook, .hook_ctx = ctx };
    return cp_report_collect_with(files, (size_t)n, &co, rep);
}

void cp_report_release(cp_report *rep)
{
    cp_report_free(rep);
    for (size_t i = 0; i < rep->n_procs; i++)
        cp_part_proc_free(rep->procs[i]);
    free(rep->procs);
    rep->procs = NULL;
    rep->n_procs = 0;
    cp_sym_shutdown();
}
